// The scene a command reads: one or more files (one scene), a materials file, and whether polygons that need
// mending are refused. Loaded the same on every rank.
#pragma once

#include <string>
#include <vector>

#include "scene/scene.h"

namespace rad {

struct SceneInput {
  std::vector<std::string> files;
  std::string materials;  // JSON materials file, or empty
  bool strict = false;    // refuse polygons that would need mending (SceneLoadOptions::strict)
  // The files joined by ", ": for messages, summaries, reports (one file: its path).
  std::string Label() const;
  // The files one per line: the HDF5 `input` attribute (one file: its path); h5py's str.splitlines() parts it.
  std::string Attribute() const;
};

// LoadScene(o.files, {o.strict, o.materials}).
Scene LoadSceneInput(const SceneInput &o);
// Prints the scene's warnings (Scene::warnings) once, from rank 0, unless `quiet`.
void ReportSceneWarnings(const Scene &scene, bool quiet);
// InputError if a material of `scene` is two-sided: the path tracer and the VPL renderer trace one of a plate's
// two coincident sides at random and would draw it half black (`command` names the renderer in the message).
void RefuseTwoSidedPlates(const Scene &scene, const std::string &command);

}  // namespace rad
