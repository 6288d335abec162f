// `radiosity vpl`: instant radiosity (virtual point lights) image of a scene, an independent check of the
// radiosity pipeline's images, with the three published accelerations as options.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/vpl_job.h"

namespace rad {

CommandRunner AddVplCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("vpl", "Instant radiosity: render a scene lit by virtual point lights (PNG, EXR)");
  auto o = std::make_shared<VplJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  execution->backend = "cpu";  // the VPL renderer runs on the CPU (no --backend)
  o->step.samplesPerPixel = 1;  // the help shows this default; each sample is a full VPL image
  AddSceneInputOptions(*cmd, o->input, "Scene", true);
  cmd->get_option("--input")->check(CLI::ExistingFile);
  cmd->add_option("--output", o->step.png, "Image to write, by its extension: .png (8-bit sRGB) or .exr (linear float32 RGB)");
  cmd->add_option("--exr", o->step.exr, "Linear HDR image to write (OpenEXR, float32 RGB radiance)");
  AddRenderStepOptions(*cmd, o->step);
  cmd->remove_option(cmd->get_option("--shading"));  // the VPL image is shaded per pixel, not from patches
  cmd->add_option("--vpls", o->vpl.paths, "Light paths shot from the emitters (one VPL where each starts)")
      ->capture_default_str()->check(CLI::Range(1LL, 100000000LL));
  cmd->add_option("--bounces", o->vpl.bounces, "Bounces per light path (a VPL where each lands)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  cmd->add_option("--clamp-distance", o->vpl.clampDistance,
                  "dmin of the bounded geometry term cos cos / (d^2 + dmin^2 exp(-d^2/dmin^2)), in scene units "
                  "(0: 5 % of the scene's bounding-box diagonal)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--imperfect-visibility", o->vpl.imperfectVisibility,
                "Shadow rays test each polygon's bounding box instead of the polygon (faster, approximate)");
  cmd->add_option("--indirect-scale", o->vpl.indirectScale,
                  "Indirect light at 1/K resolution, joint bilateral upsampling guided by normals and depth")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_flag("--interleave", o->vpl.interleave,
                "Interleaved sampling: 3x3 VPL subsets over 3x3 pixel tiles, recombined by a discontinuity buffer");
  cmd->add_option("--seed", o->step.seed, "Seed of the Halton scrambling and the pixel jitter")->capture_default_str();
  AddExecutionOptions(*cmd, *execution, {true, true, false});
  AddTimingsOption(*cmd, o->timings);
  return [o, execution]() {
    Execution exec(*execution);
    return RunVplJob(*o, exec);
  };
}

}  // namespace rad
