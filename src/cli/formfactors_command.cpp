// `radiosity formfactors`: scene -> patches -> F (CPU backend) -> HDF5 and/or raw file.
#include <tbb/global_control.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/form_factor_job.h"
#include "util/error.h"

namespace rad {

CommandRunner AddFormFactorsCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("formfactors", "Split a scene into patches and compute the form-factor matrix");
  auto opts = std::make_shared<FormFactorJobOptions>();
  AddFormFactorJobOptions(*cmd, *opts, true);
  cmd->add_option("--output", opts->output, "HDF5 file to write (CONTRACTS.md layout)")->required();
  cmd->add_option("--raw", opts->raw, "Also write the reference paper's raw matrix file (int32 N, N*N float64)");
  cmd->add_option("--timings", opts->timings, "Write per-phase timings (min/avg/max over ranks) as JSON");
  return [opts]() {
    FormFactorJob job(*opts);
    job.Run();
    job.WriteOutputs();
    job.Report("formfactors");
    return 0;
  };
}

}  // namespace rad
