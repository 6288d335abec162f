// `radiosity solve`: patches and rows of F from a file -> distributed solve -> /patches and /radiosity.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/solve_job.h"

namespace rad {

CommandRunner AddSolveCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("solve", "Solve for the radiosity of every patch, with F distributed over the ranks");
  auto o = std::make_shared<SolveJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  cmd->add_option("--formfactors", o->formfactors,
                  "Form factors: an HDF5 file of `formfactors` or `export --format csr`, or a raw, MatrixMarket or "
                  "PETSc binary matrix (format found from the file's content; then give --input and --subdiv)")
      ->required();
  AddSceneInputOptions(*cmd, o->input, "Scene a raw, MatrixMarket or PETSc matrix was computed for (its patches "
                       "and materials)", false);
  AddMeshingOptions(*cmd, o->meshing, "Subdivision that matrix was computed with");
  cmd->add_option("--output", o->output, "HDF5 file to write: /patches and /radiosity (CONTRACTS.md)")->required();
  AddSolveStepOptions(*cmd, o->step);
  CLI::Option *distribution = AddReadDistributionOption(*cmd, o->distribution);
  AddExecutionOptions(*cmd, *execution);
  AddTimingsOption(*cmd, o->timings);
  AddMemoryLimitOption(*cmd, o->memoryLimit);
  return [o, execution, distribution]() {
    o->distributionGiven = distribution->count() > 0;
    Execution exec(*execution);
    return RunSolveJob(*o, exec);
  };
}

}  // namespace rad
