#include "pipeline/scene_input.h"

#include <cstdio>

#include "pipeline/execution.h"
#include "util/error.h"

namespace rad {

namespace {

std::string Join(const std::vector<std::string> &parts, const char *separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i > 0 ? separator : "") + parts[i];
  return text;
}

}  // namespace

std::string SceneInput::Label() const { return Join(files, ", "); }

std::string SceneInput::Attribute() const { return Join(files, "\n"); }

Scene LoadSceneInput(const SceneInput &o) { return LoadScene(o.files, SceneLoadOptions{o.strict, o.materials}); }

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

}  // namespace rad
