// `radiosity formfactors`: scene -> patches -> F -> HDF5 and/or raw file.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"

namespace rad {

namespace {

struct FormFactorsCommandOptions {
  ExecutionOptions execution;
  FormFactorJobOptions job;
};

}  // namespace

CommandRunner AddFormFactorsCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("formfactors", "Split a scene into patches and compute the form-factor matrix");
  auto o = std::make_shared<FormFactorsCommandOptions>();
  AddFormFactorJobOptions(*cmd, o->job, true);
  AddExecutionOptions(*cmd, o->execution);
  cmd->add_option("--output", o->job.output, "HDF5 file to write (CONTRACTS.md layout)")->required();
  cmd->add_option("--raw", o->job.raw, "Also write the reference paper's raw matrix file (int32 N, N*N float64)");
  AddTimingsOption(*cmd, o->job.timings);
  return [o]() {
    Execution exec(o->execution);
    FormFactorJob job(o->job, exec);
    job.Run();
    job.WriteOutputs();
    job.Report("formfactors");
    return 0;
  };
}

}  // namespace rad
