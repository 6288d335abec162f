#include "pathtrace/path_scene.h"

#include "scene/face_triangles.h"
#include "scene/patch.h"

namespace rad {

double RgbLuminance(Vec3 rgb) { return 0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z; }

PathScene MakePathScene(const Scene &scene) {
  PathScene s;
  const size_t faces = scene.faces.size();
  s.normal.reserve(faces);
  std::vector<double> weights;
  double totalPower = 0;
  for (size_t fi = 0; fi < faces; ++fi) {
    const Face &f = scene.faces[fi];
    const Material &m = scene.materials[size_t(f.material)];
    s.normal.push_back(Normalize(NewellNormal(f.corners.data(), int(f.corners.size()))));
    s.planePoint.push_back(f.corners[0]);
    s.reflectance.push_back(m.reflectance);
    s.emission.push_back(m.emission);
    const double luminance = RgbLuminance(m.emission);
    if (!(luminance > 0)) continue;
    // The same fan as the scene's ray-tracing triangles (FaceTriangleCorners).
    for (size_t k = 0; k < FaceTriangleCount(f); ++k) {
      size_t corner[3];
      FaceTriangleCorners(k, corner);
      const Vec3 a = f.corners[corner[0]], b = f.corners[corner[1]], c = f.corners[corner[2]];
      const double area = 0.5 * Length(Cross(b - a, c - a));
      if (!(area > 0)) continue;
      s.emitters.push_back({int(fi), a, b, c});
      weights.push_back(luminance * area);
      totalPower += luminance * area;
    }
  }
  s.areaPdf.assign(faces, 0.0);
  double running = 0;
  for (size_t k = 0; k < s.emitters.size(); ++k) {
    running += weights[k];
    s.emitterCdf.push_back(running / totalPower);
    const int g = s.emitters[k].face;
    s.areaPdf[size_t(g)] = RgbLuminance(s.emission[size_t(g)]) / totalPower;
  }
  if (!s.emitterCdf.empty()) s.emitterCdf.back() = 1.0;
  return s;
}

}  // namespace rad
