#include "scene/embree_geometry.h"

#include <limits>

#include "scene/face_triangles.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

RTCGeometry NewFaceTriangles(const Scene &scene) {
  size_t triangles = 0, vertices = 0;
  for (const Face &f : scene.faces) {
    triangles += FaceTriangleCount(f);
    vertices += f.corners.size();
  }
  RAD_CHECK(triangles <= size_t(std::numeric_limits<unsigned>::max()), "NewFaceTriangles: too many triangles");
  RTCGeometry geom = rtcNewGeometry(EmbreeDevice(), RTC_GEOMETRY_TYPE_TRIANGLE);
  auto *vb = static_cast<float *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), vertices));
  auto *ib = static_cast<unsigned *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), triangles));
  size_t v = 0, t = 0;
  for (const Face &f : scene.faces) {
    const unsigned base = unsigned(v);
    for (const Vec3 &c : f.corners) {
      vb[3 * v + 0] = float(c.x);
      vb[3 * v + 1] = float(c.y);
      vb[3 * v + 2] = float(c.z);
      ++v;
    }
    for (size_t k = 0; k < FaceTriangleCount(f); ++k) {
      size_t corner[3];
      FaceTriangleCorners(k, corner);
      for (int c = 0; c < 3; ++c) ib[3 * t + size_t(c)] = base + unsigned(corner[c]);
      ++t;
    }
  }
  return geom;
}

void AttachPatchQuads(RTCScene scene, const std::vector<Patch> &patches, Vec3 origin) {
  RAD_CHECK(patches.size() <= std::numeric_limits<unsigned>::max() / 4, "AttachPatchQuads: too many patches");
  const size_t n = patches.size();
  RTCGeometry geom = rtcNewGeometry(EmbreeDevice(), RTC_GEOMETRY_TYPE_QUAD);
  auto *vb = static_cast<float *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), 4 * n));
  auto *ib = static_cast<unsigned *>(
      rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT4, 4 * sizeof(unsigned), n));
  for (size_t i = 0; i < n; ++i) {
    const Patch &p = patches[i];
    for (int k = 0; k < 4; ++k) {
      const Vec3 c = p.corners[k < p.cornerCount ? k : 2] - origin;
      vb[3 * (4 * i + size_t(k)) + 0] = float(c.x);
      vb[3 * (4 * i + size_t(k)) + 1] = float(c.y);
      vb[3 * (4 * i + size_t(k)) + 2] = float(c.z);
      ib[4 * i + size_t(k)] = unsigned(4 * i + size_t(k));
    }
  }
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
}

}  // namespace rad
