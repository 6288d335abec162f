// A scene as read from its files (OBJ + MTL, or STL, PLY, OFF, glTF): input polygons ("faces", kept as
// written) and their materials.
#pragma once

#include <string>
#include <vector>

#include "util/vec3.h"

namespace rad {

struct Material {
  std::string name;
  Vec3 reflectance{0.5, 0.5, 0.5};  // Kd, each channel in [0,1] (1 with a warning: it absorbs nothing)
  Vec3 emission{0, 0, 0};           // Ke, emitted radiance, >= 0
};

// One input polygon, vertices in file order (counter-clockwise seen from the front side).
// Triangles and planar convex quads are kept as they are; planar convex n-gons (n > 4) are kept whole here
// and fan-split into triangles by the patch subdivision.
struct Face {
  std::vector<Vec3> corners;
  int material = 0;  // index into Scene::materials
  int line = 0;      // 1-based line of the `f` statement in the OBJ file (0 if unknown, and in other formats)
  int source = 0;    // index into Scene::sources: the file the face came from
};

struct Scene {
  std::string path;  // the file it came from, for messages; several files: their paths joined by ", "
  std::vector<std::string> sources;  // every file read, in order; the faces of each follow those of the one before
  std::vector<Face> faces;
  std::vector<Material> materials;
  // What was read but deserves a word (a material that absorbs nothing, a material library found by its name
  // next to the OBJ): one line each, naming the file and line; the commands print them once.
  std::vector<std::string> warnings;
};

// The scene formats LoadScene reads, by extension (any case): ".obj, .stl, .ply, .off, .gltf, .glb".
extern const char *const kSceneFormats;

// Reads and validates one scene file, its format chosen by its extension (any case): OBJ (+ its MTL files) with
// our own reader; STL (ASCII or binary), PLY (ASCII or binary), OFF and glTF 2.0 (.gltf, .glb) with Assimp,
// polygons as the file has them. Throws InputError naming the file, the line (OBJ) or face when known, and the
// problem; an unknown extension names the formats accepted. OBJ faces without `usemtl` get the default
// material (Kd 0.5 grey, Ke 0); a line ending in a backslash continues on the next (OBJ spec). Faces of the
// other formats take glTF's materials, or the default.
Scene LoadScene(const std::string &path);

// Several files as one scene: faces appended in the order of `paths`, materials merged. `materialsFile`
// (empty: none) is a JSON object of materials by name that the faces of non-OBJ files take: by their object
// (STL solid, glTF node or mesh), their material (glTF) or their file's name, the first name found
// (README, "Scenes"). One path and no materials file: exactly LoadScene(path).
Scene LoadScene(const std::vector<std::string> &paths, const std::string &materialsFile);

// Where face `index` of the scene came from, for messages: "line 12" (OBJ), "face 3" (other formats, 0-based
// in the file's order), prefixed with the file's path when the scene has several files.
std::string FaceOrigin(const Scene &scene, size_t index);

}  // namespace rad
