#include "pathtrace/path_tracer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "formfactor/segment.h"
#include "scene/embree_geometry.h"
#include "scene/face_triangles.h"
#include "scene/patch.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

namespace {

constexpr double kPi = 3.14159265358979323846;

Vec3 Mul(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
double MaxComponent(Vec3 a) { return std::max(a.x, std::max(a.y, a.z)); }

// Weight of a sample drawn with density `a` when the same direction could also be drawn with density `b`
// (Veach's power heuristic, beta = 2).
double PowerHeuristic(double a, double b) { return a * a / (a * a + b * b); }

// An intersect context that also names the polygons a ray must not hit: the one it leaves and (shadow rays)
// the one it ends on. Rays leaving a planar convex polygon's front side cannot meet that polygon again, so
// skipping it is exact and needs no epsilon that would depend on the scene's size.
struct SkipContext {
  RTCIntersectContext context;  // first, so that Embree's pointer to it is a pointer to this
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
  rtcInitIntersectContext(&c.context);
  c.faceOfTriangle = faceOfTriangle;
  c.skipA = skipA;
  c.skipB = skipB;
  return c;
}

// Cosine-weighted direction about unit n (pdf cos / pi), with an orthonormal basis that needs no branch on
// the axis (Duff et al. 2017).
Vec3 CosineDirection(Vec3 n, double u1, double u2) {
  const double sign = std::copysign(1.0, n.z);
  const double a = -1.0 / (sign + n.z), b = n.x * n.y * a;
  const Vec3 t(1 + sign * n.x * n.x * a, sign * b, -sign * n.x);
  const Vec3 s(b, sign + n.y * n.y * a, -n.y);
  const double r = std::sqrt(u1), phi = 2 * kPi * u2;
  return t * (r * std::cos(phi)) + s * (r * std::sin(phi)) + n * std::sqrt(std::max(0.0, 1 - u1));
}

}  // namespace

double RgbLuminance(Vec3 rgb) { return 0.2126 * rgb.x + 0.7152 * rgb.y + 0.0722 * rgb.z; }

Vec3 PointOnPatch(const Vec3 *c, int count, double u, double v, double *weight) {
  if (count == 3) {
    const double su = std::sqrt(u);
    *weight = 1;
    return c[0] * (1 - su) + c[1] * (su * (1 - v)) + c[2] * (su * v);
  }
  const Vec3 du = (c[1] - c[0]) * (1 - v) + (c[2] - c[3]) * v;
  const Vec3 dv = (c[3] - c[0]) * (1 - u) + (c[2] - c[1]) * u;
  const double area = 0.5 * Length(NewellNormal(c, 4));
  *weight = area > 0 ? Length(Cross(du, dv)) / area : 1;
  return c[0] * ((1 - u) * (1 - v)) + c[1] * (u * (1 - v)) + c[2] * (u * v) + c[3] * ((1 - u) * v);
}

PathTracer::PathTracer(const Scene &scene, const PathTraceSettings &settings) : scene_(scene), settings_(settings) {
  device_ = NewEmbreeDevice();
  RAD_CHECK(rtcGetDeviceProperty(device_, RTC_DEVICE_PROPERTY_FILTER_FUNCTION_SUPPORTED) != 0,
            "this Embree build has no filter functions, which the path tracer needs");
  rtcScene_ = rtcNewScene(device_);
  // Robust mode: no rays slip through the shared edges of neighbouring triangles and polygons.
  rtcSetSceneFlags(rtcScene_, RTC_SCENE_FLAG_ROBUST);
  rtcSetSceneBuildQuality(rtcScene_, RTC_BUILD_QUALITY_HIGH);

  // The same triangles, in the same order, as NewFaceTriangles makes: triangle t belongs to faceOfTriangle_[t].
  RTCGeometry geom = NewFaceTriangles(device_, scene);
  normals_.reserve(scene.faces.size());
  std::vector<double> weights;
  double totalPower = 0;
  for (size_t fi = 0; fi < scene.faces.size(); ++fi) {
    const Face &f = scene.faces[fi];
    normals_.push_back(Normalize(NewellNormal(f.corners.data(), int(f.corners.size()))));
    const double luminance = RgbLuminance(scene.materials[size_t(f.material)].emission);
    for (size_t k = 0; k < FaceTriangleCount(f); ++k) {
      size_t corner[3];
      FaceTriangleCorners(k, corner);
      faceOfTriangle_.push_back(int(fi));
      const Vec3 a = f.corners[corner[0]], b = f.corners[corner[1]], c = f.corners[corner[2]];
      const double area = 0.5 * Length(Cross(b - a, c - a));
      if (luminance > 0 && area > 0) {
        emitters_.push_back({int(fi), a, b, c});
        weights.push_back(luminance * area);
        totalPower += luminance * area;
      }
    }
  }
  rtcSetGeometryIntersectFilterFunction(geom, SkipFacesFilter);
  rtcSetGeometryOccludedFilterFunction(geom, SkipFacesFilter);
  rtcCommitGeometry(geom);
  rtcAttachGeometry(rtcScene_, geom);
  rtcReleaseGeometry(geom);
  rtcCommitScene(rtcScene_);

  // A triangle is chosen with probability luminance x area / total power and a point on it uniformly by area,
  // so a point of emissive face g has the density luminance_g / total power per unit area.
  areaPdf_.assign(scene.faces.size(), 0.0);
  double running = 0;
  for (size_t k = 0; k < emitters_.size(); ++k) {
    running += weights[k];
    emitterCdf_.push_back(running / totalPower);
    const int g = emitters_[k].face;
    const Vec3 ke = scene.materials[size_t(scene.faces[size_t(g)].material)].emission;
    areaPdf_[size_t(g)] = RgbLuminance(ke) / totalPower;
  }
  if (!emitterCdf_.empty()) emitterCdf_.back() = 1.0;
}

PathTracer::~PathTracer() {
  if (rtcScene_) rtcReleaseScene(rtcScene_);
  if (device_) rtcReleaseDevice(device_);
}

PathTracer::Hit PathTracer::Intersect(Vec3 origin, Vec3 direction, int skip, RayCounts &rays, bool primary) const {
  (primary ? rays.primary : rays.bounce) += 1;
  SkipContext context = MakeSkipContext(faceOfTriangle_.data(), skip, skip);
  RTCRayHit rh = MakeRayHit(origin, direction, 0.0f, std::numeric_limits<float>::infinity());
  rtcIntersect1(rtcScene_, &context.context, &rh);
  Hit hit;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return hit;
  hit.face = faceOfTriangle_[rh.hit.primID];
  // Snapped back onto the polygon's plane in double precision: the next ray starts on the polygon itself.
  const Vec3 n = normals_[size_t(hit.face)];
  const Vec3 p = origin + direction * double(rh.ray.tfar);
  hit.point = p - n * Dot(p - scene_.faces[size_t(hit.face)].corners[0], n);
  return hit;
}

bool PathTracer::Occluded(Vec3 x, int fromFace, Vec3 y, int toFace, RayCounts &rays) const {
  rays.shadow += 1;
  SkipContext context = MakeSkipContext(faceOfTriangle_.data(), fromFace, toFace);
  RTCRay ray = MakeRay(x, y - x, kSegmentTrim, 1.0f - kSegmentTrim);
  rtcOccluded1(rtcScene_, &context.context, &ray);
  return ray.tfar < 0;  // Embree sets tfar to -inf on a hit
}

Vec3 PathTracer::DirectIrradianceOverPi(Vec3 x, int face, bool weighted, WalkRandom &random,
                                        RayCounts &rays) const {
  if (emitters_.empty()) return {0, 0, 0};
  const double pick = random.Next(), u = random.Next(), v = random.Next();
  const size_t k = size_t(std::upper_bound(emitterCdf_.begin(), emitterCdf_.end(), pick) - emitterCdf_.begin());
  const EmitterTriangle &e = emitters_[std::min(k, emitters_.size() - 1)];
  if (e.face == face) return {0, 0, 0};  // a planar polygon does not light itself
  const double su = std::sqrt(u);
  const Vec3 y = e.a * (1 - su) + e.b * (su * (1 - v)) + e.c * (su * v);
  const Vec3 w = y - x;
  const double d2 = LengthSquared(w);
  if (!(d2 > 0)) return {0, 0, 0};
  const Vec3 dir = w / std::sqrt(d2);
  const double cosX = Dot(normals_[size_t(face)], dir), cosY = -Dot(normals_[size_t(e.face)], dir);
  if (cosX <= 0 || cosY <= 0) return {0, 0, 0};  // behind x, or the emitter's back side
  if (Occluded(x, face, y, e.face, rays)) return {0, 0, 0};
  const Vec3 ke = scene_.materials[size_t(scene_.faces[size_t(e.face)].material)].emission;
  // Ke * (cos/pi) / (density of the direction), weighted by the power heuristic against the bounce.
  const double lightPdf = areaPdf_[size_t(e.face)] * d2 / cosY, bouncePdf = cosX / kPi;
  return ke * (bouncePdf / lightPdf * (weighted ? PowerHeuristic(lightPdf, bouncePdf) : 1.0));
}

Vec3 PathTracer::Reflected(Vec3 x, int face, int depth, WalkRandom &random, RayCounts &rays) const {
  Vec3 sum(0, 0, 0), throughput(1, 1, 1);
  while (depth < settings_.maxDepth) {
    // With a cosine-weighted direction, each bounce's weight is just Kd: Kd/pi * cos / (cos/pi).
    throughput = Mul(throughput, scene_.materials[size_t(scene_.faces[size_t(face)].material)].reflectance);
    if (!(MaxComponent(throughput) > 0)) break;
    // The last vertex takes no bounce, so its light samples carry the full weight.
    const bool last = depth + 1 >= settings_.maxDepth;
    sum += Mul(throughput, DirectIrradianceOverPi(x, face, !last, random, rays));
    if (++depth >= settings_.maxDepth) break;
    const double u1 = random.Next(), u2 = random.Next(), survive = random.Next();
    if (depth >= settings_.rouletteDepth) {
      const double p = std::min(1.0, MaxComponent(throughput) / settings_.rouletteThreshold);
      if (survive >= p) break;
      throughput = throughput / p;
    }
    const Vec3 n = normals_[size_t(face)];
    const Vec3 dir = CosineDirection(n, u1, u2);
    const Hit hit = Intersect(x, dir, face, rays, false);
    // Light that reaches x along dir comes from the front side of what the ray hits. An emitter's Ke counts
    // here with the power heuristic's weight of the bounce, the rest of it came from next-event estimation:
    // near an emitter's edge, where the light sample's density per solid angle vanishes, the bounce takes
    // over and the estimator keeps a finite variance.
    const double cosY = hit.face < 0 ? 0 : -Dot(dir, normals_[size_t(hit.face)]);
    if (!(cosY > 0)) break;
    const double areaPdf = areaPdf_[size_t(hit.face)];
    if (areaPdf > 0) {
      const double lightPdf = areaPdf * LengthSquared(hit.point - x) / cosY, bouncePdf = Dot(n, dir) / kPi;
      const Vec3 ke = scene_.materials[size_t(scene_.faces[size_t(hit.face)].material)].emission;
      sum += Mul(throughput, ke) * PowerHeuristic(bouncePdf, lightPdf);
    }
    x = hit.point;
    face = hit.face;
  }
  return sum;
}

Vec3 PathTracer::OutgoingRadiance(Vec3 x, int face, WalkRandom &random, RayCounts &rays) const {
  return scene_.materials[size_t(scene_.faces[size_t(face)].material)].emission + Reflected(x, face, 0, random, rays);
}

Vec3 PathTracer::CameraRadiance(Vec3 origin, Vec3 direction, WalkRandom &random, RayCounts &rays) const {
  const Hit hit = Intersect(origin, direction, -1, rays, true);
  if (hit.face < 0 || !(Dot(direction, normals_[size_t(hit.face)]) < 0)) return {0, 0, 0};
  return OutgoingRadiance(hit.point, hit.face, random, rays);
}

}  // namespace rad
