// Small analytic scenes built in memory for the physics tests.
#pragma once

#include <algorithm>
#include <vector>

#include "scene/scene.h"

namespace rad::test {

inline Scene SceneOf(const std::vector<std::vector<Vec3>> &polygons) {
  Scene s;
  s.path = "<memory>";
  s.materials.push_back(Material{});
  for (const auto &p : polygons) {
    Face f;
    f.corners = p;
    s.faces.push_back(f);
  }
  return s;
}

// Axis-aligned rectangle [x0,x1] x [y0,y1] at height z, front facing +z (up) or -z (down).
inline std::vector<Vec3> RectZ(double x0, double x1, double y0, double y1, double z, bool up) {
  if (up) return {{x0, y0, z}, {x1, y0, z}, {x1, y1, z}, {x0, y1, z}};
  return {{x0, y0, z}, {x0, y1, z}, {x1, y1, z}, {x1, y0, z}};
}

// Rectangle in the plane x = x0, y in [y0,y1], z in [z0,z1], front facing +x.
inline std::vector<Vec3> RectXPlus(double x0, double y0, double y1, double z0, double z1) {
  return {{x0, y0, z0}, {x0, y1, z0}, {x0, y1, z1}, {x0, y0, z1}};
}

// Unit cube with every face's front inside.
inline Scene UnitCube() {
  return SceneOf({
      RectZ(0, 1, 0, 1, 0, true), RectZ(0, 1, 0, 1, 1, false),
      {{0, 0, 0}, {0, 1, 0}, {0, 1, 1}, {0, 0, 1}},  // x=0, +x
      {{1, 0, 0}, {1, 0, 1}, {1, 1, 1}, {1, 1, 0}},  // x=1, -x
      {{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}},  // y=0, +y
      {{0, 1, 0}, {1, 1, 0}, {1, 1, 1}, {0, 1, 1}},  // y=1, -y
  });
}

// Faces of an axis-aligned box [lo, hi], fronts facing out of it (outward) or into it (a room).
inline std::vector<std::vector<Vec3>> BoxFaces(Vec3 lo, Vec3 hi, bool outward) {
  std::vector<std::vector<Vec3>> f = {
      RectZ(lo.x, hi.x, lo.y, hi.y, lo.z, !outward), RectZ(lo.x, hi.x, lo.y, hi.y, hi.z, outward),
      {{lo.x, lo.y, lo.z}, {lo.x, hi.y, lo.z}, {lo.x, hi.y, hi.z}, {lo.x, lo.y, hi.z}},  // x = lo, facing +x
      {{hi.x, lo.y, lo.z}, {hi.x, lo.y, hi.z}, {hi.x, hi.y, hi.z}, {hi.x, hi.y, lo.z}},  // x = hi, facing -x
      {{lo.x, lo.y, lo.z}, {lo.x, lo.y, hi.z}, {hi.x, lo.y, hi.z}, {hi.x, lo.y, lo.z}},  // y = lo, facing +y
      {{lo.x, hi.y, lo.z}, {hi.x, hi.y, lo.z}, {hi.x, hi.y, hi.z}, {lo.x, hi.y, hi.z}},  // y = hi, facing -y
  };
  if (outward) {
    // The four side faces above face into the box; run them the other way.
    for (size_t k = 2; k < 6; ++k) std::reverse(f[k].begin(), f[k].end());
  }
  return f;
}

// A room whose walls are tiled n x n (6 n^2 polygons: past the face-pair lists for n = 8, so the occluder BVH
// and the clusters of coplanar tiles are used) with a floating block that occludes many pairs.
inline Scene TiledRoomWithBlock(int n) {
  std::vector<std::vector<Vec3>> polygons;
  for (const auto &wall : BoxFaces({0, 0, 0}, {1, 1, 1}, false)) {
    const Vec3 o = wall[0], du = (wall[1] - wall[0]) / n, dv = (wall[3] - wall[0]) / n;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const Vec3 c = o + du * b + dv * a;
        polygons.push_back({c, c + du, c + du + dv, c + dv});
      }
  }
  for (auto &f : BoxFaces({0.3, 0.35, 0.2}, {0.7, 0.65, 0.6}, true)) polygons.push_back(f);
  return SceneOf(polygons);
}

}  // namespace rad::test
