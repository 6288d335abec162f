#include "formfactor/embree_scene.h"

#include <string>

#include "scene/embree_geometry.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

EmbreeScene::EmbreeScene(const Scene &scene) {
  scene_ = rtcNewScene(EmbreeDevice());
  rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);

  RTCGeometry geom = NewFaceTriangles(scene);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(scene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(scene_);
}

EmbreeScene::~EmbreeScene() {
  if (scene_) rtcReleaseScene(scene_);
}

bool EmbreeScene::SegmentOccluded(Vec3 from, Vec3 to) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay ray = MakeRay(from, to - from, kSegmentTrim, 1.0f - kSegmentTrim);
  rtcOccluded1(scene_, &context, &ray);
  return ray.tfar < 0;  // Embree sets tfar to -inf on a hit
}

}  // namespace rad
