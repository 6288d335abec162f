#include "pipeline/solve_job.h"

#include <cstdio>
#include <memory>

#include "pipeline/formfactor_source.h"
#include "pipeline/outputs.h"
#include "util/output_lock.h"
#include "util/error.h"
#include "util/memory_budget.h"

#include "pipeline/outputs.h"

namespace rad {

int RunSolveJob(SolveJobOptions o, Execution &exec) {
  PhaseTimers &timers = exec.Timers();
  o.step.backend = exec.UsedBackend();
  std::vector<NamedPath> inputs = SceneInputPaths(o.input.files, o.input.materials);
  inputs.push_back({"--formfactors", o.formfactors});
  CheckOutputsDistinct(inputs, {{"--output", o.output}, {"--timings", o.timings}});
  const OutputLocks locks(MPI_COMM_WORLD, {o.output, o.timings});
  CheckOutputPath("--output", o.output);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  const Distribution distribution = o.distribution;

  FormFactorInput in;
  MemoryBudget memory;
  {
    ScopedPhase phase(timers, "input I/O");
    in = ReadFormFactorFile(o.formfactors, o.input, o.meshing, distribution,
                            CheckMemoryBeforeReading(o.formfactors, o.memoryLimit, distribution, {}, memory), true,
                            !o.distributionGiven);
  }
  // PETSc takes a matrix: the hierarchical operator's far field goes to it as entries (the same operator).
  if (o.step.solver == SolverMethod::kGmres && SpreadFarLinks(in.f, o.formfactors, o.memoryLimit) > 0 && exec.Talks())
    std::fprintf(stderr, "radiosity: --solver gmres: the hierarchical operator's far links spread into entries\n");
  if (exec.Talks())
    std::fprintf(stderr,
                 "radiosity: %s (%s): %lld patches, F as %s, %d rank(s) x %d thread(s), %.1f MiB of F per rank "
                 "(%.1f MiB needed in all; %s)\n",
                 o.formfactors.c_str(), in.layout.c_str(), in.PatchCount(),
                 in.f.precision == Precision::kFloat ? "float32" : "float64", exec.Ranks(), exec.Threads(),
                 in.f.StoredBytes() / (1 << 20),
                 memory.needBytes / (1 << 20), memory.Describe().c_str());
  exec.AnnounceBackend();

  SolverResult result;
  try {
    result = SolveStep(o.step, in.patches, in.f, timers, exec.Quiet());
  } catch (const SolveFailed &e) {
    if (WorldRank() == 0) std::fprintf(stderr, "radiosity: error: %s; nothing written\n", e.what());
    return kExitNotConverged;
  }
  {
    ScopedPhase phase(timers, "output I/O");
    RadiosityFileWriter writer(MPI_COMM_WORLD, o.output);
    Attributes file;
    file.strings["input"] = in.scene;
    if (!o.input.materials.empty()) file.strings["materials"] = o.input.materials;
    file.strings["formfactors"] = o.formfactors;
    writer.WriteFileAttributes(file);
    writer.WritePatches(in.patches);
    writer.WriteRadiosity(result.radiance, result.residuals, SolverAttributes(o.step, result));
    writer.Commit();
  }
  timers.Add("total", Now() - exec.Start());
  char text[64];
  std::snprintf(text, sizeof text, "%d (%s)", result.iterations, SolverMethodName(o.step.solver));
  std::vector<std::pair<std::string, std::string>> extra = {{"patches", std::to_string(in.PatchCount())},
                                                            {"iterations", text}};
  std::snprintf(text, sizeof text, "%.3e", result.finalResidual);
  extra.push_back({"relative residual", text});
  timers.Report(MPI_COMM_WORLD, "solve", "total", o.timings, extra);
  return FinishSolve(result);
}


}  // namespace rad
