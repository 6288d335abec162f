#include "vpl/vpl_scene.h"

#include <algorithm>
#include <limits>

#include "scene/embree_geometry.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

namespace {

// The occlusion context carries the two faces whose boxes a shadow ray ignores (Embree passes the context
// pointer to user geometry callbacks, so the struct starts with Embree's own).
struct BoxContext {
  EmbreeQueryContext context;
  int faceA, faceB;
};

// Slab test of the segment [tnear, tfar] of a ray against a box. A zero direction component (a ray parallel to
// a flat box) tests the origin against the slab instead of dividing 0 by 0.
bool SegmentHitsBox(const float org[3], const float dir[3], float tnear, float tfar, const float lower[3],
                    const float upper[3]) {
  for (int k = 0; k < 3; ++k) {
    if (dir[k] == 0.0f) {
      if (org[k] < lower[k] || org[k] > upper[k]) return false;
      continue;
    }
    float t0 = (lower[k] - org[k]) / dir[k], t1 = (upper[k] - org[k]) / dir[k];
    if (t0 > t1) std::swap(t0, t1);
    tnear = std::max(tnear, t0);
    tfar = std::min(tfar, t1);
    if (tnear > tfar) return false;
  }
  return true;
}

bool PointInBox(const float org[3], const float dir[3], float t, const float lower[3], const float upper[3]) {
  for (int k = 0; k < 3; ++k) {
    const float p = org[k] + t * dir[k];
    if (p < lower[k] || p > upper[k]) return false;
  }
  return true;
}

}  // namespace

void VplScene::BoxBounds(const RTCBoundsFunctionArguments *args) {
  const Box &b = static_cast<const Box *>(args->geometryUserPtr)[args->primID];
  RTCBounds *out = args->bounds_o;
  out->lower_x = b.lower[0], out->lower_y = b.lower[1], out->lower_z = b.lower[2];
  out->upper_x = b.upper[0], out->upper_y = b.upper[1], out->upper_z = b.upper[2];
}

void VplScene::BoxIntersect(const RTCIntersectFunctionNArguments *) {
  RAD_FATAL("VplScene: the box scene is for shadow rays only");
}

void VplScene::BoxOccluded(const RTCOccludedFunctionNArguments *args) {
  RAD_CHECK(args->N == 1, "VplScene: box occlusion expects single rays (rtcOccluded1)");
  if (!args->valid[0]) return;
  const Box &b = static_cast<const Box *>(args->geometryUserPtr)[args->primID];
  const auto *context = reinterpret_cast<const BoxContext *>(args->context);
  if (b.face == context->faceA || b.face == context->faceB) return;
  RTCRay *ray = reinterpret_cast<RTCRay *>(args->ray);
  const float org[3] = {ray->org_x, ray->org_y, ray->org_z}, dir[3] = {ray->dir_x, ray->dir_y, ray->dir_z};
  // Nor does a box that holds either end of the segment: it would shadow everything seen from inside it (a
  // wall made of two triangles lies in both triangles' boxes; so does the floor next to a rotated block).
  if (PointInBox(org, dir, ray->tnear, b.lower, b.upper) || PointInBox(org, dir, ray->tfar, b.lower, b.upper)) return;
  if (SegmentHitsBox(org, dir, ray->tnear, ray->tfar, b.lower, b.upper))
    ray->tfar = -std::numeric_limits<float>::infinity();
}

VplScene::VplScene(const std::vector<Patch> &patches, bool boxes) {
  polygons_ = rtcNewScene(EmbreeDevice());
  // Robust: no camera ray or shadow ray slips through the shared edge of two polygons.
  rtcSetSceneFlags(polygons_, RTC_SCENE_FLAG_ROBUST);
  rtcSetSceneBuildQuality(polygons_, RTC_BUILD_QUALITY_HIGH);
  const size_t n = patches.size();
  AttachPatchQuads(polygons_, patches);
  rtcCommitScene(polygons_);

  if (!boxes) return;
  boxList_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Patch &p = patches[i];
    Box &b = boxList_[i];
    b.face = p.face;
    for (int a = 0; a < 3; ++a) {
      b.lower[a] = std::numeric_limits<float>::infinity();
      b.upper[a] = -std::numeric_limits<float>::infinity();
    }
    for (int k = 0; k < p.cornerCount; ++k)
      for (int a = 0; a < 3; ++a) {
        b.lower[a] = std::min(b.lower[a], float(p.corners[k][a]));
        b.upper[a] = std::max(b.upper[a], float(p.corners[k][a]));
      }
  }
  boxes_ = rtcNewScene(EmbreeDevice());
  RTCGeometry user = rtcNewGeometry(EmbreeDevice(), RTC_GEOMETRY_TYPE_USER);
  rtcSetGeometryUserPrimitiveCount(user, unsigned(n));
  rtcSetGeometryUserData(user, boxList_.data());
  rtcSetGeometryBoundsFunction(user, &VplScene::BoxBounds, nullptr);
  rtcSetGeometryIntersectFunction(user, &VplScene::BoxIntersect);
  rtcSetGeometryOccludedFunction(user, &VplScene::BoxOccluded);
  rtcCommitGeometry(user);
  rtcAttachGeometry(boxes_, user);
  rtcReleaseGeometry(user);
  rtcCommitScene(boxes_);
}

VplScene::~VplScene() {
  if (boxes_) rtcReleaseScene(boxes_);
  if (polygons_) rtcReleaseScene(polygons_);
}

SurfaceHit VplScene::Intersect(Vec3 origin, Vec3 direction) const {
  RTCRayHit rh = MakeRayHit(origin, direction, 0, std::numeric_limits<float>::infinity());
  Intersect1(polygons_, nullptr, &rh);
  SurfaceHit hit;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return hit;
  hit.hit = true;
  hit.patch = (long long)rh.hit.primID;
  hit.t = rh.ray.tfar;
  return hit;
}

bool VplScene::Visible(Vec3 from, Vec3 to, double trim, int faceA, int faceB) const {
  // The direction is not normalised: the segment is t in [trim, 1 - trim].
  RTCRay ray = MakeRay(from, to - from, float(trim), float(1 - trim));
  BoxContext context;
  InitQueryContext(&context.context);
  context.faceA = faceA;
  context.faceB = faceB;
  Occluded1(boxes_ ? boxes_ : polygons_, &context.context, &ray);
  return ray.tfar >= 0;
}

}  // namespace rad
