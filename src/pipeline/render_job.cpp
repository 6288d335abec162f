#include "pipeline/render_job.h"

#include <cstdio>
#include <memory>

#include "pipeline/outputs.h"
#include "io/formfactor_input.h"
#include "io/radiosity_file_reader.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

#include "pipeline/outputs.h"

namespace rad {

int RunRenderJob(RenderJobOptions o, Execution &exec) {
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


}  // namespace rad
