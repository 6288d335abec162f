// `radiosity validate`: its options; the work is the validation stage (pipeline/validate_stage.h).
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/validate_stage.h"

namespace rad {

CommandRunner AddValidateCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "validate", "Radiosity and instant-radiosity images against a path-traced one of the same camera, the path "
                  "tracer's convergence, and an HTML report, in one output folder");
  auto o = std::make_shared<ValidateOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  o->formFactors.meshing.subdiv = 3;  // as `run`: the radiosity pipeline at its default settings
  AddFormFactorJobOptions(*cmd, o->formFactors, false);
  AddExecutionOptions(*cmd, *execution);
  cmd->add_option("--output-dir", o->outputDir,
                  "Folder for the images, heat maps, metrics.json, mse_vs_spp.{csv,png} and report.html")
      ->required();
  AddSolveStepOptions(*cmd, o->solve);
  AddCameraOptions(*cmd, o->render);
  cmd->add_option("--render-spp", o->render.samplesPerPixel, "Samples per pixel of the radiosity image")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  cmd->add_option("--spp", o->samplesPerPixel, "Samples per pixel of the path-traced image")->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--reference-spp", o->referenceSpp,
                  "Samples per pixel of the reference for the MSE-against-spp curve (default: 4 x --spp)")
      ->check(CLI::Range(2, 1 << 22));
  cmd->add_option("--vpls", o->vpls, "Light paths of the VPL image (one VPL where each starts)")
      ->capture_default_str()->check(CLI::Range(1LL, 100000000LL));
  cmd->add_option("--exposure", o->render.exposure, "PNG images: scale radiance by 2^exposure before sRGB encoding")
      ->capture_default_str();
  cmd->add_option("--python", o->python,
                  "Python 3 with matplotlib that draws mse_vs_spp.png ('none': no plot; the CSV is always written)")
      ->capture_default_str();
  return [o, execution]() {
    Execution exec(*execution);
    return RunValidation(*o, exec);
  };
}

}  // namespace rad
