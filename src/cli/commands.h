// The subcommands of the `radiosity` executable. Each registers its options on a CLI11 subcommand and
// returns a function that runs it (after parsing) and gives the exit code. The work itself is the pipeline's
// (src/pipeline/): a command declares options (cli/options.h), makes the Execution and calls the stages.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace rad {

using CommandRunner = std::function<int()>;

CommandRunner AddFormFactorsCommand(CLI::App &app);
CommandRunner AddSolveCommand(CLI::App &app);
CommandRunner AddRenderCommand(CLI::App &app);
CommandRunner AddRunCommand(CLI::App &app);
CommandRunner AddInfoCommand(CLI::App &app);
CommandRunner AddCompareCommand(CLI::App &app);
CommandRunner AddExportCommand(CLI::App &app);
CommandRunner AddPathTraceCommand(CLI::App &app);
CommandRunner AddVplCommand(CLI::App &app);
CommandRunner AddValidateCommand(CLI::App &app);
CommandRunner AddThermalCommand(CLI::App &app);

}  // namespace rad
