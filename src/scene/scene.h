// A scene as read from OBJ + MTL: input polygons ("faces", kept as written) and their materials.
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
  int line = 0;      // 1-based line of the `f` statement in the OBJ file (0 if unknown)
};

struct Scene {
  std::string path;  // the OBJ file it came from, for messages
  std::vector<Face> faces;
  std::vector<Material> materials;
  // What was read but deserves a word (a material that absorbs nothing, a material library found by its name
  // next to the OBJ): one line each, naming the file and line; the commands print them once.
  std::vector<std::string> warnings;
};

// Reads and validates an OBJ (+ its MTL files). Throws InputError naming the file, the line when known,
// and the problem. Faces without `usemtl` get the default material (Kd 0.5 grey, Ke 0). A line ending in a
// backslash continues on the next (OBJ spec).
Scene LoadScene(const std::string &objPath);

}  // namespace rad
