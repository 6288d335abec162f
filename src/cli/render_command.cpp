// `radiosity render`: /patches and /radiosity/B from a file -> image (PNG, EXR) and PLY mesh.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "pipeline/outputs.h"
#include "cli/options.h"
#include "formfactor_input.h"
#include "radiosity_file_reader.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

struct RenderCommandOptions {
  std::string radiosity, timings;
  ExecutionOptions execution;
  RenderStepOptions step;
};

int RunRenderCommand(RenderCommandOptions o) {
  Execution exec(o.execution);
  PhaseTimers &timers = exec.Timers();
  o.step.backend = exec.UsedBackend();
  CheckRenderOutputs(o.step);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);

  std::vector<Patch> patches;
  std::vector<double> radiance;
  std::string scene;
  {
    ScopedPhase phase(timers, "input I/O");
    OnRankZero(MPI_COMM_WORLD, [&] {
      RadiosityFileReader file(o.radiosity);
      if (!file.Complete()) throw InputError(o.radiosity + ": incomplete file (complete != 1): the writer did not finish");
      if (!file.Has("/radiosity/B")) throw InputError(o.radiosity + ": no /radiosity/B (run `radiosity solve` first)");
      patches = file.ReadPatches();
      radiance = file.ReadDoubles("/radiosity/B");
      if (radiance.size() != 3 * patches.size())
        throw InputError(o.radiosity + ": /radiosity/B has " + std::to_string(radiance.size()) + " values for " +
                         std::to_string(patches.size()) + " patches");
      scene = file.RootString("input");
    });
    BroadcastPatches(MPI_COMM_WORLD, patches);
    radiance.resize(3 * patches.size());
    RAD_MPI(MPI_Bcast(radiance.data(), int(radiance.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
    BroadcastString(MPI_COMM_WORLD, scene);
  }
  exec.AnnounceBackend();
  RenderStep(o.step, patches, radiance, scene, timers, exec.Quiet());
  timers.Add("total", Now() - exec.Start());
  if (!exec.Quiet() || !o.timings.empty())
    timers.Report(MPI_COMM_WORLD, "render", "total", o.timings, {{"patches", std::to_string(patches.size())}});
  return 0;
}

}  // namespace

CommandRunner AddRenderCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("render", "Render an image of a radiosity solution (PNG, EXR) or export it (PLY)");
  auto o = std::make_shared<RenderCommandOptions>();
  cmd->add_option("--radiosity", o->radiosity, "HDF5 file with /patches and /radiosity/B (from `solve` or `run`)")
      ->required();
  cmd->add_option("--output", o->step.png, "Image to write, by its extension: .png (8-bit sRGB) or .exr (linear float32 RGB)")->required();
  cmd->add_option("--exr", o->step.exr, "Also write the linear HDR image (OpenEXR, float32 RGB radiance)");
  cmd->add_option("--ply", o->step.ply, "Also write the patch mesh with per-vertex radiance (binary PLY)");
  AddRenderStepOptions(*cmd, o->step);
  cmd->add_option("--seed", o->step.seed, "Seed of the pixel jitter")->capture_default_str();
  AddExecutionOptions(*cmd, o->execution, {true, false, false});
  AddTimingsOption(*cmd, o->timings);
  AddExecutionOptions(*cmd, o->execution, {false, true, true});
  return [o]() { return RunRenderCommand(*o); };
}

}  // namespace rad
