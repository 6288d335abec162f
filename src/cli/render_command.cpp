// `radiosity render`: /patches and /radiosity/B from a file -> image (PNG, EXR) and PLY mesh.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/render_job.h"

namespace rad {

CommandRunner AddRenderCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("render", "Render an image of a radiosity solution (PNG, EXR) or export it (PLY)");
  auto o = std::make_shared<RenderJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  cmd->add_option("--radiosity", o->radiosity, "HDF5 file with /patches and /radiosity/B (from `solve` or `run`)")
      ->required();
  cmd->add_option("--output", o->step.png, "Image to write, by its extension: .png (8-bit sRGB) or .exr (linear float32 RGB)")->required();
  cmd->add_option("--exr", o->step.exr, "Also write the linear HDR image (OpenEXR, float32 RGB radiance)");
  cmd->add_option("--ply", o->step.ply, "Also write the patch mesh with per-vertex radiance (binary PLY)");
  AddRenderStepOptions(*cmd, o->step);
  cmd->add_option("--seed", o->step.seed, "Seed of the pixel jitter")->capture_default_str();
  AddExecutionOptions(*cmd, *execution);
  AddTimingsOption(*cmd, o->timings);
  return [o, execution]() {
    Execution exec(*execution);
    return RunRenderJob(*o, exec);
  };
}

}  // namespace rad
