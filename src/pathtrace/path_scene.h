// The arrays behind a PathSceneView (path_physics.h), made once from a Scene on the host: what the CPU path
// tracer reads directly and the GPU path tracer copies to its device.
#pragma once

#include <vector>

#include "pathtrace/path_physics.h"
#include "scene/scene.h"

namespace rad {

// The view of a PathScene's arrays or of their copies elsewhere (the GPU's): anything with the same members
// that have data() and size().
template <class Arrays>
PathSceneView ViewOfPathScene(const Arrays &a) {
  PathSceneView v;
  v.normal = a.normal.data();
  v.planePoint = a.planePoint.data();
  v.reflectance = a.reflectance.data();
  v.emission = a.emission.data();
  v.areaPdf = a.areaPdf.data();
  v.emitters = a.emitters.data();
  v.emitterCdf = a.emitterCdf.data();
  v.emitterCount = int(a.emitters.size());
  return v;
}

struct PathScene {
  std::vector<Vec3> normal, planePoint, reflectance, emission;  // per input polygon
  std::vector<double> areaPdf;                                  // per input polygon
  std::vector<EmitterTriangle> emitters;  // the emissive polygons' triangles (fans), with area > 0
  std::vector<double> emitterCdf;         // ascending, last = 1

  PathSceneView View() const { return ViewOfPathScene(*this); }
};

// A triangle of an emissive polygon is chosen with probability luminance x area / total power and a point on
// it uniformly by area, so a point of emissive polygon g has the density luminance_g / total power per unit
// area. A scene without emitters gets none (everything is black).
PathScene MakePathScene(const Scene &scene);

double RgbLuminance(Vec3 rgb);  // Rec. 709 weights

}  // namespace rad
