// A scene as read from its files (OBJ + MTL, or STL, PLY, OFF, glTF): input polygons ("faces", kept as
// written) and their materials.
#pragma once

#include <string>
#include <vector>

#include "scene/polygon_repair.h"
#include "util/vec3.h"

namespace rad {

struct Material {
  std::string name;
  Vec3 reflectance{0.5, 0.5, 0.5};  // Kd, each channel in [0,1] (1 with a warning: it absorbs nothing)
  Vec3 emission{0, 0, 0};           // Ke, emitted radiance, >= 0
  // Surface roles of thermal practice (AddSurfaceRoles): a thin plate radiating from both sides, or a surface
  // that only blocks light (no patches, no row or column in F; black to the path tracer).
  bool twoSided = false;
  bool obstruction = false;
};

// One planar convex polygon, vertices counter-clockwise seen from the front side: an input polygon as written,
// or a triangle of one that was not planar and convex (RepairPolygons). Planar convex n-gons (n > 4) are kept
// whole here and fan-split into triangles by the patch subdivision.
struct Face {
  std::vector<Vec3> corners;
  int material = 0;  // index into Scene::materials
  int line = 0;      // 1-based line of the `f` statement in the OBJ file (0 if unknown, and in other formats)
  int polygon = 0;   // 0-based number of the input polygon it came from (in file order, across the files): /patches/face
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
  PolygonRepairs repairs;  // what was mended in the input polygons (also summed up in `warnings`)
  int polygonCount = 0;    // input polygons read, before any was split, skipped or dropped
};

struct SceneLoadOptions {
  bool strict = false;        // refuse polygons that need mending (non-planar, concave, zero-area, duplicated...)
  std::string materialsFile;  // --materials: a JSON file of materials by name (empty: none)
};

// The scene formats LoadScene reads, by extension (any case): ".obj, .stl, .ply, .off, .gltf, .glb".
extern const char *const kSceneFormats;

// Reads one scene file, its format chosen by its extension (any case): OBJ (+ its MTL files) with our own
// reader; STL (ASCII or binary), PLY (ASCII or binary), OFF and glTF 2.0 (.gltf, .glb) with Assimp, polygons as
// the file has them. Then mends its polygons (RepairPolygons; refused with `options.strict`) and applies the
// materials' surface roles (AddSurfaceRoles). Throws InputError naming the file, the line (OBJ) or face when
// known, and the problem; an unknown extension names the formats accepted. OBJ faces without `usemtl` get the
// default material (Kd 0.5 grey, Ke 0); a line ending in a backslash continues on the next (OBJ spec). Faces of
// the other formats take glTF's materials, or the default.
Scene LoadScene(const std::string &path, const SceneLoadOptions &options = {});

// Several files as one scene: faces appended in the order of `paths` (polygon numbers counting on), materials
// merged. `options.materialsFile` (empty: none) is a JSON object of materials by name that the faces of non-OBJ
// files take: by their object (STL solid, glTF node or mesh), their material (glTF) or their file's name, the
// first name found; its `two_sided` and `obstruction` roles also apply to OBJ materials of the same name
// (docs/user-guide.md, "Scene files"). One path and no materials file: exactly LoadScene(path, options).
Scene LoadScene(const std::vector<std::string> &paths, const SceneLoadOptions &options);

// Where face `index` of the scene came from, for messages: "line 12" (OBJ), "face 3" (other formats, 0-based
// in the file's order), prefixed with the file's path when the scene has several files.
std::string FaceOrigin(const Scene &scene, size_t index);

}  // namespace rad
