// `radiosity solve`: patches and rows of F from a file -> distributed solve -> /patches and /radiosity.
#include <tbb/global_control.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/formfactor_source.h"
#include "cli/solve_step.h"
#include "util/error.h"
#include "util/memory_budget.h"

namespace rad {

namespace {

struct SolveCommandOptions {
  std::string formfactors, output, timings, distribution = "cyclic";
  SceneInput input;
  Meshing meshing;
  int threads = 0;
  bool quiet = false;
  std::string backend = "auto";
  std::string memoryLimit;
  SolveStepOptions step;
};

int RunSolveCommand(SolveCommandOptions o) {
  const double start = Now();
  PhaseTimers timers;
  o.step.backend = ResolveBackend(MPI_COMM_WORLD, o.backend);
  CheckOutputPath("--output", o.output);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  std::string threadNote;
  const int threads = DefaultThreadsPerRank(o.threads, &threadNote);
  tbb::global_control threadLimit(tbb::global_control::max_allowed_parallelism, size_t(threads));
  const Distribution distribution = ParseDistribution(o.distribution);

  FormFactorInput in;
  MemoryBudget memory;
  {
    ScopedPhase phase(timers, "input I/O");
    in = ReadFormFactorFile(o.formfactors, o.input, o.meshing, distribution,
                            CheckMemoryBeforeReading(o.formfactors, o.memoryLimit, distribution, {}, memory));
  }
  if (WorldRank() == 0 && !o.quiet)
    std::fprintf(stderr,
                 "radiosity: %s (%s): %lld patches, F as %s, %d rank(s) x %d thread(s), %.1f MiB of F per rank "
                 "(%.1f MiB needed in all; %s)\n",
                 o.formfactors.c_str(), in.layout.c_str(), in.PatchCount(), in.f32.empty() ? "float64" : "float32",
                 WorldSize(), threads, double(in.f64.size() * 8 + in.f32.size() * 4) / (1 << 20),
                 memory.needBytes / (1 << 20), memory.Describe().c_str());
  AnnounceBackend(MPI_COMM_WORLD, o.backend, o.step.backend, o.quiet);

  SolverResult result;
  try {
    result = SolveStep(o.step, in.patches, in.rows, in.f32.empty() ? in.f64.data() : nullptr,
                       in.f32.empty() ? nullptr : in.f32.data(), timers, o.quiet);
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
  timers.Add("total", Now() - start);
  char text[64];
  std::snprintf(text, sizeof text, "%d (%s)", result.iterations, o.step.solver.c_str());
  std::vector<std::pair<std::string, std::string>> extra = {{"patches", std::to_string(in.PatchCount())},
                                                            {"iterations", text}};
  std::snprintf(text, sizeof text, "%.3e", result.finalResidual);
  extra.push_back({"relative residual", text});
  timers.Report(MPI_COMM_WORLD, "solve", "total", o.timings, extra);
  return FinishSolve(result);
}

}  // namespace

CommandRunner AddSolveCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("solve", "Solve for the radiosity of every patch, with F distributed over the ranks");
  auto o = std::make_shared<SolveCommandOptions>();
  cmd->add_option("--formfactors", o->formfactors,
                  "Form factors: an HDF5 file of `formfactors` or `export --format csr`, or a raw, MatrixMarket or "
                  "PETSc binary matrix (format found from the file's content; then give --input and --subdiv)")
      ->required();
  AddSceneInputOptions(*cmd, o->input, "Scene a raw, MatrixMarket or PETSc matrix was computed for (its patches "
                       "and materials)", false);
  AddMeshingOptions(*cmd, o->meshing, "Subdivision that matrix was computed with");
  cmd->add_option("--output", o->output, "HDF5 file to write: /patches and /radiosity (CONTRACTS.md)")->required();
  AddSolveStepOptions(*cmd, o->step);
  cmd->add_option("--distribution", o->distribution, "Rows per rank: cyclic (row i on rank i % P) or block")
      ->capture_default_str()->check(CLI::IsMember({"cyclic", "block"}));
  cmd->add_option("--threads", o->threads, "Threads per rank (default: the node's cores divided among its ranks)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--timings", o->timings, "Write per-phase timings (min/avg/max over ranks) as JSON");
  cmd->add_flag("--quiet", o->quiet, "No progress lines");
  AddBackendOption(*cmd, o->backend);
  AddMemoryLimitOption(*cmd, o->memoryLimit);
  return [o]() { return RunSolveCommand(*o); };
}

}  // namespace rad
