// A scene as read from OBJ + MTL: input polygons ("faces", kept as written) and their materials.
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
  int line = 0;      // 1-based line of the `f` statement in the OBJ file (0 if unknown)
  int polygon = 0;   // 0-based number of the input polygon it came from (order of `f` lines): /patches/face
};

struct Scene {
  std::string path;  // the OBJ file it came from, for messages
  std::vector<Face> faces;
  std::vector<Material> materials;
  // What was read but deserves a word (a material that absorbs nothing, a material library found by its name
  // next to the OBJ): one line each, naming the file and line; the commands print them once.
  std::vector<std::string> warnings;
  PolygonRepairs repairs;  // what was mended in the input polygons (also summed up in `warnings`)
  int polygonCount = 0;    // input polygons read, before any was split, skipped or dropped
};

struct SceneLoadOptions {
  bool strict = false;  // refuse polygons that need mending (non-planar, concave, zero-area, duplicated...)
};

// Reads and validates an OBJ (+ its MTL files). Throws InputError naming the file, the line when known,
// and the problem. Faces without `usemtl` get the default material (Kd 0.5 grey, Ke 0). A line ending in a
// backslash continues on the next (OBJ spec). Polygons are mended as RepairPolygons says, or refused with
// `options.strict`.
Scene LoadScene(const std::string &objPath, const SceneLoadOptions &options = {});

}  // namespace rad
