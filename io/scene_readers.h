// The scene readers behind LoadScene (src/scene/scene.h), one per kind of file, and what they share.
// Internal to io/: commands call LoadScene.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scene/scene.h"

namespace rad {

// A `--materials` file (JSON): materials by name, for the faces of formats that carry none (docs/user-guide.md, "Scene files").
struct MaterialsFile {
  std::string path;                        // empty: no materials file
  std::map<std::string, Material> byName;  // Material::name is the key
  std::vector<std::string> warnings;       // a material that absorbs nothing
  mutable std::set<std::string> used;      // the names that matched a face, for the warning about the others
};

// A name as messages show it: 'name'.
inline std::string Quote(const std::string &text) { return "'" + text + "'"; }

// Reads and validates a materials file (InputError naming it and the problem).
MaterialsFile ReadMaterialsFile(const std::string &path);

// Kd in [0,1] and Ke >= 0, finite: InputError starting with `where` otherwise. A channel of Kd equal to 1 adds a
// warning to `warnings` (if not null).
void CheckMaterialValues(const std::string &where, const Material &material, std::vector<std::string> *warnings);

// The readers return polygons as the file has them, numbered in its order (Face::polygon); LoadScene mends or
// refuses them (RepairPolygons) whatever the format.
// OBJ + MTL with our own reader (io/obj_loader.cpp): exact, errors name the file and line.
Scene LoadObjScene(const std::string &objPath);

// STL, PLY, OFF, glTF through Assimp (io/mesh_loader.cpp); materials from glTF, else from `materials` by name,
// else the default. `extension` is the file's, lower case, with its dot.
Scene LoadMeshScene(const std::string &path, const std::string &extension, const MaterialsFile &materials);

// The whole file, or "" with `problem` saying why it cannot be read (missing, not a regular file, unreadable):
// an unreadable file must not look like an empty one.
std::string ReadWholeFile(const std::string &path, std::string *problem);

}  // namespace rad
