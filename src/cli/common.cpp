#include <sched.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include <embree3/rtcore.h>

#include "image_io.h"
#include "util/agree.h"
#include "util/error.h"

#ifdef RAD_HAVE_CUDA
#include "device_info.h"
#endif

namespace rad {

int WorldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int WorldSize() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int DefaultThreadsPerRank(int requested, std::string *note) {
  if (requested > 0) return requested;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranksOnNode = 1;
  MPI_Comm_size(node, &ranksOnNode);
  MPI_Comm_free(&node);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const int share = std::max(1, cores / ranksOnNode);
  // mpirun binds each rank to a core by default (Open MPI, up to 2 ranks): more threads than the CPUs the
  // rank may run on would only time-share them.
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : share;
  if (allowed < share && note) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "each rank may use %d of the node's %d cores for its share of %d; use `mpirun --bind-to none` "
                  "or `--map-by slot:PE=%d` to give ranks more cores",
                  allowed, cores, share, share);
    *note = text;
  }
  return std::max(1, std::min(share, allowed));
}

namespace {

std::string Join(const std::vector<std::string> &parts, const char *separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? separator : "") + parts[i];
  return text;
}

}  // namespace

std::string SceneInput::Label() const { return Join(files, ", "); }

std::string SceneInput::Attribute() const { return Join(files, "\n"); }

void AddSceneInputOptions(CLI::App &cmd, SceneInput &o, const std::string &help, bool required) {
  auto *input = cmd.add_option("--input", o.files,
                               help + ": OBJ (with its MTL), STL, PLY, OFF or glTF (.gltf, .glb), by the extension; "
                                      "several files (--input A B, or --input A --input B) make one scene");
  if (required) input->required();
  auto *materials = cmd.add_option(
      "--materials", o.materials,
      "JSON materials by name for the STL, PLY, OFF and glTF files: {\"name\": {\"Kd\": [r, g, b], "
      "\"Ke\": [r, g, b]}}; a name is an object's (STL solid, glTF node or mesh), a glTF material's or a file's; "
      "\"two_sided\": true or \"obstruction\": true give a role, to OBJ materials of that name too");
  materials->needs(input);
  cmd.add_flag("--strict", o.strict,
               "Refuse polygons that would be mended (non-planar or concave ones triangulated, zero-area or "
               "degenerate ones skipped, duplicated faces dropped) instead of mending them with a warning");
}

Scene LoadSceneInput(const SceneInput &o) { return LoadScene(o.files, SceneLoadOptions{o.strict, o.materials}); }

void AgreeOrThrow(bool ok, const std::string &message) { AgreeOrThrow(MPI_COMM_WORLD, ok, message); }

void RefuseTwoSidedPlates(const Scene &scene, const std::string &command) {
  for (const Material &m : scene.materials)
    if (m.twoSided)
      throw InputError(scene.path + ": material '" + m.name + "' is two_sided, which " + command +
                       " does not support yet (its rays meet the plate's two coincident sides in either order); "
                       "form factors, solve and render do");
}

void ReportSceneWarnings(const Scene &scene, bool quiet) {
  if (WorldRank() != 0 || quiet) return;
  for (const std::string &warning : scene.warnings) std::fprintf(stderr, "radiosity: warning: %s\n", warning.c_str());
}

namespace {

// CLI11's PositiveNumber names its range up to DBL_MAX in full; this says what the option wants in words.
CLI::Validator PositiveValue(const std::string &what) {
  return CLI::Validator(
      [what](std::string &text) {
        double value = 0;
        const bool ok = CLI::detail::lexical_cast(text, value) && value > 0 && std::isfinite(value);
        return ok ? std::string() : "must be " + what + ", not '" + text + "'";
      },
      "POSITIVE");
}

}  // namespace

void AddMeshingOptions(CLI::App &cmd, Meshing &meshing, const std::string &subdivHelp) {
  CLI::Option *subdiv = cmd.add_option("--subdiv", meshing.subdiv, subdivHelp)->capture_default_str()
      ->check(CLI::Range(0, 10));
  CLI::Option *size = cmd.add_option("--max-patch-size", meshing.maxPatchSize,
                                     "Split each polygon by its own extent so that no patch edge is longer than L "
                                     "(scene units): patches of one size on a scene of mixed scales")
                          ->check(PositiveValue("a positive length"));
  CLI::Option *count = cmd.add_option("--patches", meshing.patches,
                                      "About N patches in all: the finest --max-patch-size whose total is at most N")
                           ->check(PositiveValue("a positive number of patches"));
  size->excludes(subdiv)->excludes(count);
  count->excludes(subdiv);
}


void CheckImageOutputPath(const std::string &option, const std::string &path, bool exrOnly) {
  // The same answer on every rank: the path is all it looks at.
  if (ImageFormatOf(option, path) != ImageFormat::kExr && exrOnly)
    throw InputError(option + " " + path + ": " + option + " writes OpenEXR, so the file must end in .exr");
  CheckOutputPath(option, path);
}

OutputFolder::OutputFolder(const std::string &dir) : dir_(dir) {
  OnRankZero(MPI_COMM_WORLD, [&] {
    std::error_code ec;
    made_ = !std::filesystem::exists(dir, ec);
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
      throw InputError(dir + ": cannot create the output folder (--output-dir)");
  });
}

OutputFolder::~OutputFolder() {
  std::error_code ec;
  if (made_ && std::filesystem::is_empty(dir_, ec) && !ec) std::filesystem::remove(dir_, ec);
}

void CheckOutputPath(const std::string &option, const std::string &path) {
  bool ok = true;
  std::string why;
  if (WorldRank() == 0) {
    const std::filesystem::path p(path);
    const std::filesystem::path folder = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (path.empty()) {
      ok = false;
      why = option + ": empty path";
    } else if (!std::filesystem::is_directory(folder, ec)) {
      ok = false;
      why = path + ": folder '" + folder.string() + "' does not exist (" + option + ")";
    } else if (std::filesystem::is_directory(p, ec)) {
      ok = false;
      why = path + ": is a folder, not a file (" + option + ")";
    }
  }
  AgreeOrThrow(ok, why);
}

std::string BackendsDescription() {
  std::string s = "backends: cpu (Embree " + std::to_string(RTC_VERSION_MAJOR) + "." +
                  std::to_string(RTC_VERSION_MINOR) + ")";
#ifdef RAD_HAVE_CUDA
  s += ", gpu (CUDA, compiled in); " + DescribeCudaDevices();
#else
  s += "; gpu: not compiled in (nvcc was not found at build time)";
#endif
  return s;
}

}  // namespace rad
