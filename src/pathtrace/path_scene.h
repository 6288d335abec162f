// The arrays behind a PathSceneView (path_physics.h), made once from a Scene on the host: what the CPU path
// tracer reads directly and the GPU path tracer copies to its device.
#pragma once

#include <vector>

#include "pathtrace/path_physics.h"
#include "scene/scene.h"

namespace rad {

struct PathScene {
  std::vector<Vec3> normal, planePoint, reflectance, emission;  // per input polygon
  std::vector<double> areaPdf;                                  // per input polygon
  std::vector<EmitterTriangle> emitters;  // the emissive polygons' triangles (fans), with area > 0
  std::vector<double> emitterCdf;         // ascending, last = 1

  PathSceneView View() const;
};

// A triangle of an emissive polygon is chosen with probability luminance x area / total power and a point on
// it uniformly by area, so a point of emissive polygon g has the density luminance_g / total power per unit
// area. A scene without emitters gets none (everything is black).
PathScene MakePathScene(const Scene &scene);

double RgbLuminance(Vec3 rgb);  // Rec. 709 weights

}  // namespace rad
