#include "pathtrace/path_tracer.h"

#include <limits>

#include "formfactor/segment.h"
#include "scene/embree_geometry.h"
#include "scene/face_triangles.h"
#include "scene/patch.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

namespace {

// An intersect context that also names the polygons a ray must not hit: the one it leaves and (shadow rays)
// the one it ends on. Rays leaving a planar convex polygon's front side cannot meet that polygon again, so
// skipping it is exact and needs no epsilon that would depend on the scene's size.
struct SkipContext {
  EmbreeQueryContext context;  // first, so that Embree's pointer to it is a pointer to this
  const int *faceOfTriangle;
  int skipA, skipB;
};

void SkipFacesFilter(const RTCFilterFunctionNArguments *args) {
  const auto *skip = reinterpret_cast<const SkipContext *>(args->context);
  for (unsigned i = 0; i < args->N; ++i) {
    if (args->valid[i] != -1) continue;
    const int face = skip->faceOfTriangle[RTCHitN_primID(args->hit, args->N, i)];
    if (face == skip->skipA || face == skip->skipB) args->valid[i] = 0;
  }
}

SkipContext MakeSkipContext(const int *faceOfTriangle, int skipA, int skipB) {
  SkipContext c;
  InitQueryContext(&c.context);
  c.faceOfTriangle = faceOfTriangle;
  c.skipA = skipA;
  c.skipB = skipB;
  return c;
}

}  // namespace

Vec3 PointOnPatch(const Vec3 *c, int count, double u, double v, double *weight) {
  const double area = count == 3 ? 0.0 : 0.5 * Length(NewellNormal(c, 4));
  return PointOnPolygon(c, count, area, u, v, weight);
}

PathTracer::PathTracer(const Scene &scene, const PathTraceSettings &settings)
    : scene_(scene), settings_(settings), physics_(MakePathScene(scene)), view_(physics_.View()) {
  RAD_CHECK(rtcGetDeviceProperty(EmbreeDevice(), RTC_DEVICE_PROPERTY_FILTER_FUNCTION_SUPPORTED) != 0,
            "this Embree build has no filter functions, which the path tracer needs");
  rtcScene_ = rtcNewScene(EmbreeDevice());
  // Robust mode: no rays slip through the shared edges of neighbouring triangles and polygons.
  rtcSetSceneFlags(rtcScene_, RTC_SCENE_FLAG_ROBUST);
  rtcSetSceneBuildQuality(rtcScene_, RTC_BUILD_QUALITY_HIGH);

  // The same triangles, in the same order, as NewFaceTriangles makes: triangle t belongs to faceOfTriangle_[t].
  RTCGeometry geom = NewFaceTriangles(scene);
  for (size_t fi = 0; fi < scene.faces.size(); ++fi)
    faceOfTriangle_.insert(faceOfTriangle_.end(), FaceTriangleCount(scene.faces[fi]), int(fi));
  rtcSetGeometryIntersectFilterFunction(geom, SkipFacesFilter);
  rtcSetGeometryOccludedFilterFunction(geom, SkipFacesFilter);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(rtcScene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(rtcScene_);
}

PathTracer::~PathTracer() {
  if (rtcScene_) rtcReleaseScene(rtcScene_);
}

PathTracer::Hit PathTracer::Intersect(Vec3 origin, Vec3 direction, int skip, RayCounts &rays, bool primary) const {
  (primary ? rays.primary : rays.bounce) += 1;
  SkipContext context = MakeSkipContext(faceOfTriangle_.data(), skip, skip);
  RTCRayHit rh = MakeRayHit(origin, direction, 0.0f, std::numeric_limits<float>::infinity());
  Intersect1(rtcScene_, &context.context, &rh);
  Hit hit;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return hit;
  hit.face = faceOfTriangle_[rh.hit.primID];
  hit.point = SnapToPlane(view_, hit.face, origin + direction * double(rh.ray.tfar));
  return hit;
}

bool PathTracer::Occluded(Vec3 x, int fromFace, Vec3 y, int toFace, RayCounts &rays) const {
  rays.shadow += 1;
  SkipContext context = MakeSkipContext(faceOfTriangle_.data(), fromFace, toFace);
  RTCRay ray = MakeRay(x, y - x, kSegmentTrim, 1.0f - kSegmentTrim);
  Occluded1(rtcScene_, &context.context, &ray);
  return ray.tfar < 0;  // Embree sets tfar to -inf on a hit
}

Vec3 PathTracer::Reflected(Vec3 x, int face, WalkRandom &random, RayCounts &rays) const {
  PathVertex p;
  p.x = x;
  p.face = face;
  for (;;) {
    const VertexRays next = ScatterAtVertex(view_, settings_, p, random);
    if (next.shadow && !Occluded(p.x, p.face, next.lightPoint, next.lightFace, rays)) p.sum += next.lightValue;
    if (!next.bounce) break;
    const Hit hit = Intersect(p.x, next.direction, p.face, rays, false);
    if (!ArriveAtHit(view_, p, next.direction, hit.face, hit.point)) break;
  }
  return p.sum;
}

Vec3 PathTracer::OutgoingRadiance(Vec3 x, int face, WalkRandom &random, RayCounts &rays) const {
  return physics_.emission[size_t(face)] + Reflected(x, face, random, rays);
}

Vec3 PathTracer::CameraRadiance(Vec3 origin, Vec3 direction, WalkRandom &random, RayCounts &rays) const {
  const Hit hit = Intersect(origin, direction, -1, rays, true);
  if (!SeesFrontSide(view_, direction, hit.face)) return {0, 0, 0};
  return OutgoingRadiance(hit.point, hit.face, random, rays);
}

}  // namespace rad
