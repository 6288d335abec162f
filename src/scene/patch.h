// Patches: the elements of the radiosity system, made by splitting every input polygon 4^K times.
#pragma once

#include <vector>

#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

struct Patch {
  Vec3 corners[4];      // counter-clockwise seen from the front; a triangle leaves corners[3] = corners[2]
  int cornerCount = 0;  // 3 or 4
  Vec3 centroid;
  Vec3 normal;          // unit, front side
  double area = 0;
  int face = -1;        // index of the input polygon it came from
  Vec3 reflectance;
  Vec3 emission;
};

// Newell's normal (not normalised: its length is twice the polygon's area). Robust for any planar polygon.
Vec3 NewellNormal(const Vec3 *corners, int count);

// Splits every face into 4^subdiv patches: quads into 4 quads at edge midpoints and centre, triangles into
// 4 triangles at edge midpoints. n-gons (n > 4) are first fan-split into n-2 triangles from their first
// corner. Patches of one face are consecutive; the order is deterministic.
std::vector<Patch> MakePatches(const Scene &scene, int subdiv);

// Number of patches MakePatches would produce, without making them.
long long CountPatches(const Scene &scene, int subdiv);

}  // namespace rad
