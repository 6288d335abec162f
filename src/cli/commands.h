// The subcommands of the `radiosity` executable. Each registers its options on a CLI11 subcommand and
// returns a function that runs it (after parsing) and gives the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "scene/patch.h"
#include "scene/scene.h"

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

// The scene a command reads: --input (one or more files, one scene) and --materials.
struct SceneInput {
  std::vector<std::string> files;
  std::string materials;  // JSON materials file, or empty
  bool strict = false;    // --strict: refuse polygons that would need mending (SceneLoadOptions::strict)
  // The files joined by ", ": for messages, summaries, reports (one file: its path).
  std::string Label() const;
  // The files one per line: the HDF5 `input` attribute (one file: its path); h5py's str.splitlines() parts it.
  std::string Attribute() const;
};
// --input, --materials and --strict; `help` describes what the scene is for.
void AddSceneInputOptions(CLI::App &cmd, SceneInput &o, const std::string &help, bool required);
// LoadScene(o.files, {o.strict, o.materials}).
Scene LoadSceneInput(const SceneInput &o);

// Shared helpers for commands.
int WorldRank();
int WorldSize();
// Threads this rank should use: the node's cores divided among the node's ranks (no more than the CPUs the
// rank is bound to), unless `requested` > 0. `note` receives a hint when binding limits the rank.
int DefaultThreadsPerRank(int requested, std::string *note = nullptr);
// Throws InputError(message) on every rank if `ok` is false on any rank (the lowest such rank's message).
void AgreeOrThrow(bool ok, const std::string &message);
// Checks on rank 0 that `path`'s folder exists, so that every rank fails early and alike if it does not.
void CheckOutputPath(const std::string &option, const std::string &path);
// --subdiv, --max-patch-size and --patches (how polygons become patches), the last two excluding the first.
// `subdivHelp` says what --subdiv splits in this command.
void AddMeshingOptions(CLI::App &cmd, Meshing &meshing, const std::string &subdivHelp);
// The --output-dir of `run` and `validate`: made on rank 0 (with its parents) when missing, InputError on every
// rank if it cannot be. A folder made here is removed again when the object goes out of scope and the folder
// is still empty: a job refused before writing anything (bad scene, not enough memory) leaves nothing behind.
class OutputFolder {
 public:
  explicit OutputFolder(const std::string &dir);
  ~OutputFolder();
  OutputFolder(const OutputFolder &) = delete;
  OutputFolder &operator=(const OutputFolder &) = delete;

 private:
  std::string dir_;
  bool made_ = false;  // rank 0 only
};
// InputError if a material of `scene` is two-sided: the path tracer and the VPL renderer trace one of a plate's
// two coincident sides at random and would draw it half black (`command` names the renderer in the message).
void RefuseTwoSidedPlates(const Scene &scene, const std::string &command);
// Prints the scene's warnings (Scene::warnings) once, from rank 0, unless `quiet`.
void ReportSceneWarnings(const Scene &scene, bool quiet);
// CheckOutputPath for an image, and its extension first (ImageFormatOf: .png or .exr); `exrOnly` for --exr,
// whose name promises OpenEXR.
void CheckImageOutputPath(const std::string &option, const std::string &path, bool exrOnly = false);
// Text of the backends compiled in and devices found, for --version and info.
std::string BackendsDescription();

}  // namespace rad
