// `radiosity formfactors`: scene -> patches -> F -> HDF5 and/or raw file.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"

namespace rad {

CommandRunner AddFormFactorsCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("formfactors", "Split a scene into patches and compute the form-factor matrix");
  auto o = std::make_shared<FormFactorJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  AddFormFactorJobOptions(*cmd, *o, true);
  AddExecutionOptions(*cmd, *execution);
  cmd->add_option("--output", o->output, "HDF5 file to write (CONTRACTS.md layout)")->required();
  cmd->add_option("--raw", o->raw, "Also write the reference paper's raw matrix file (int32 N, N*N float64)");
  AddTimingsOption(*cmd, o->timings);
  AddCheckpointOptions(*cmd, o->checkpoint);
  return [o, execution]() {
    Execution exec(*execution);
    FormFactorJob job(*o, exec);
    job.Run();
    job.WriteOutputs();
    job.Report("formfactors");
    job.DiscardCheckpoint();
    return 0;
  };
}

}  // namespace rad
