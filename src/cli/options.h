// The command-line options that several commands share, each declared once: they fill the typed options of the
// pipeline's stages (src/pipeline/), which know nothing of the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "pipeline/execution.h"
#include "pipeline/form_factor_stage.h"
#include "pipeline/render_stage.h"
#include "pipeline/scene_input.h"
#include "pipeline/solve_stage.h"
#include "scene/patch.h"

namespace rad {

// An option naming one value of an enum: the command line takes the names, the stage gets the enum. The help
// lists the names and the default (the value `target` holds when the option is added).
template <typename Enum>
CLI::Option *AddChoice(CLI::App &cmd, const std::string &name, Enum &target,
                       const std::vector<std::pair<std::string, Enum>> &choices, const std::string &help) {
  std::vector<std::string> names;
  std::string current;
  for (const auto &[text, value] : choices) {
    names.push_back(text);
    if (value == target) current = text;
  }
  return cmd
      .add_option_function<std::string>(
          name,
          [&target, choices](const std::string &text) {
            for (const auto &[choice, value] : choices)
              if (choice == text) target = value;
          },
          help)
      ->check(CLI::IsMember(names))
      ->default_str(current);
}

// --input, --materials and --strict; `help` describes what the scene is for.
void AddSceneInputOptions(CLI::App &cmd, SceneInput &o, const std::string &help, bool required);
// --subdiv, --max-patch-size and --patches (how polygons become patches), the last two excluding the first.
// `subdivHelp` says what --subdiv splits in this command.
void AddMeshingOptions(CLI::App &cmd, Meshing &meshing, const std::string &subdivHelp);

// Which of --threads, --quiet and --backend a command takes.
struct ExecutionFlags {
  bool threads = true, quiet = true, backend = true;
};
// --threads, --quiet and --backend, as `flags` says.
void AddExecutionOptions(CLI::App &cmd, ExecutionOptions &o, ExecutionFlags flags = {});
// --quiet alone, with its own help (for commands whose quiet mode still prints something).
// Adds to every numeric option of `app` and its subcommands (recursively) a check that refuses NaN and
// infinities, which CLI11's range checks let through. Called once all commands are made.
void RejectNonFiniteNumbers(CLI::App &app);

void AddQuietOption(CLI::App &cmd, bool &quiet, const std::string &help = "No progress lines");
// --timings FILE.
void AddTimingsOption(CLI::App &cmd, std::string &timings);
// --memory-limit SIZE; `limit` stays empty for the default (the node's share).
void AddMemoryLimitOption(CLI::App &cmd, std::string &limit);
// --checkpoint-dir, --checkpoint-every and --restart (pipeline/row_checkpoint.h).
void AddCheckpointOptions(CLI::App &cmd, CheckpointOptions &o);

// --distribution cyclic|block.
CLI::Option *AddDistributionOption(CLI::App &cmd, Distribution &distribution);
// --distribution for a command that reads F from a file (`solve`, `thermal`): by default a CSR file's rows go in
// blocks, as the form-factor stage split them (so that the sweeps' node sums lie with their patches:
// solver/read_exchange.h), dense rows cyclically; the command tells the two apart by the option's count().
CLI::Option *AddReadDistributionOption(CLI::App &cmd, Distribution &distribution);
// The form-factor stage's options, from --input to --memory-limit; `toleranceAlias`: also accept --tolerance for
// --quadrature-tolerance (in `formfactors`, where it is unambiguous).
void AddFormFactorJobOptions(CLI::App &cmd, FormFactorJobOptions &o, bool toleranceAlias);
// --solver, --tolerance, --max-iterations.
void AddSolveStepOptions(CLI::App &cmd, SolveStepOptions &o);
// --camera, --camera-position/-target/-up, --fov-y, --width, --height.
void AddCameraOptions(CLI::App &cmd, CameraOptions &o);
// The camera options, then --spp, --shading and --exposure.
void AddRenderStepOptions(CLI::App &cmd, RenderStepOptions &o);

}  // namespace rad
