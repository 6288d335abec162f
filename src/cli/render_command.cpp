// `radiosity render`: /patches and /radiosity/B from a file -> image (PNG, EXR) and PLY mesh.
#include <tbb/global_control.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/render_step.h"
#include "formfactor_input.h"
#include "radiosity_file_reader.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

struct RenderCommandOptions {
  std::string radiosity, timings;
  int threads = 0;
  bool quiet = false;
  std::string backend = "auto";
  RenderStepOptions step;
};

int RunRenderCommand(RenderCommandOptions o) {
  const double start = Now();
  PhaseTimers timers;
  o.step.backend = ResolveBackend(MPI_COMM_WORLD, o.backend);
  CheckRenderOutputs(o.step);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  const int threads = DefaultThreadsPerRank(o.threads);
  tbb::global_control threadLimit(tbb::global_control::max_allowed_parallelism, size_t(threads));

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
  AnnounceBackend(MPI_COMM_WORLD, o.backend, o.step.backend, o.quiet);
  RenderStep(o.step, patches, radiance, scene, timers, o.quiet);
  timers.Add("total", Now() - start);
  if (!o.quiet || !o.timings.empty())
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
  cmd->add_option("--threads", o->threads, "Threads per rank (default: the node's cores divided among its ranks)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--timings", o->timings, "Write per-phase timings (min/avg/max over ranks) as JSON");
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  AddBackendOption(*cmd, o->backend);
  return [o]() { return RunRenderCommand(*o); };
}

}  // namespace rad
