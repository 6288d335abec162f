// Small analytic scenes built in memory for the physics tests.
#pragma once

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

}  // namespace rad::test
