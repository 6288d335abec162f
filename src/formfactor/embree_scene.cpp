#include "formfactor/embree_scene.h"

#include <string>

#include "scene/embree_geometry.h"
#include "scene/face_triangles.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

EmbreeScene::EmbreeScene(const Scene &scene) {
  scene_ = rtcNewScene(EmbreeDevice());
  rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);

  for (size_t f = 0; f < scene.faces.size(); ++f)
    faceOfTriangle_.insert(faceOfTriangle_.end(), FaceTriangleCount(scene.faces[f]), int32_t(f));
  RTCGeometry geom = NewFaceTriangles(scene);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene_);
}

void EmbreeScene::SegmentsOccluded(const Vec3 *from, const Vec3 *to, int count, bool *hidden) const {
  RAD_CHECK(count >= 0 && count <= kSegmentPacket, "EmbreeScene::SegmentsOccluded: more segments than a packet");
  alignas(64) RTCRay16 rays;
  alignas(64) int valid[kSegmentPacket];
  for (int l = 0; l < kSegmentPacket; ++l) {
    valid[l] = l < count ? -1 : 0;
    const Vec3 a = l < count ? from[l] : Vec3{}, d = l < count ? to[l] - from[l] : Vec3{0, 0, 1};
    rays.org_x[l] = float(a.x);
    rays.org_y[l] = float(a.y);
    rays.org_z[l] = float(a.z);
    rays.dir_x[l] = float(d.x);
    rays.dir_y[l] = float(d.y);
    rays.dir_z[l] = float(d.z);
    rays.tnear[l] = kSegmentTrim;
    rays.tfar[l] = 1.0f - kSegmentTrim;
    rays.time[l] = 0;
    rays.mask[l] = 0xFFFFFFFFu;
    rays.id[l] = 0;
    rays.flags[l] = 0;
  }
  OccludedCoherent16(valid, scene_, &rays);
  for (int l = 0; l < count; ++l) hidden[l] = rays.tfar[l] < 0;  // Embree sets tfar to -inf on a hit
}

EmbreeScene::~EmbreeScene() {
  if (scene_) rtcReleaseScene(scene_);
}

bool EmbreeScene::SegmentOccluded(Vec3 from, Vec3 to) const {
  RTCRay ray = MakeRay(from, to - from, kSegmentTrim, 1.0f - kSegmentTrim);
  Occluded1(scene_, nullptr, &ray);
  return ray.tfar < 0;  // Embree sets tfar to -inf on a hit
}

int EmbreeScene::FirstFaceHit(Vec3 from, Vec3 to) const {
  RTCRayHit hit = MakeRayHit(from, to - from, kSegmentTrim, 1.0f - kSegmentTrim);
  Intersect1(scene_, nullptr, &hit);
  if (hit.hit.geomID == RTC_INVALID_GEOMETRY_ID || hit.hit.primID >= faceOfTriangle_.size()) return -1;
  return faceOfTriangle_[hit.hit.primID];
}

}  // namespace rad
