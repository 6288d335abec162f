#include "formfactor/embree_scene.h"

#include <string>

#include "scene/face_triangles.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

EmbreeScene::EmbreeScene(const Scene &scene) {
  device_ = NewEmbreeDevice();
  scene_ = rtcNewScene(device_);
  rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);

  size_t triangles = 0, vertices = 0;
  for (const Face &f : scene.faces) {
    triangles += FaceTriangleCount(f);
    vertices += f.corners.size();
  }
  RTCGeometry geom = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_TRIANGLE);
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
      for (int c = 0; c < 3; ++c) ib[3 * t + c] = base + unsigned(corner[c]);
      ++t;
    }
  }
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene_);
}

EmbreeScene::~EmbreeScene() {
  if (scene_) rtcReleaseScene(scene_);
  if (device_) rtcReleaseDevice(device_);
}

bool EmbreeScene::SegmentOccluded(Vec3 from, Vec3 to) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay ray = MakeRay(from, to - from, kSegmentTrim, 1.0f - kSegmentTrim);
  rtcOccluded1(scene_, &context, &ray);
  return ray.tfar < 0;  // Embree sets tfar to -inf on a hit
}

}  // namespace rad
