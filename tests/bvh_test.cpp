// The project's BVH (accel/) against Embree, ray by ray: the host build of the traversal that the GPU runs.
#include "util/rtcore.h"
#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "accel/bvh_builder.h"
#include "accel/bvh_traversal.h"
#include "formfactor/embree_scene.h"
#include "formfactor/sampling.h"
#include "scene/patch.h"
#include "tests/test_scenes.h"
#include "util/embree_util.h"
#include "util/rng.h"

#include "cuda/bvh_trace_batch.h"
#include "cuda/device_info.h"

namespace rad {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Scene Mesh(const std::string &name) { return LoadScene(std::string(RAD_SOURCE_DIR) + "/meshes/" + name); }

BvhTriangle Tri(Vec3 a, Vec3 b, Vec3 c, int id) {
  BvhTriangle t;
  const Vec3 p[3] = {a, b, c};
  float *v[3] = {t.v0, t.v1, t.v2};
  for (int i = 0; i < 3; ++i) v[i][0] = float(p[i].x), v[i][1] = float(p[i].y), v[i][2] = float(p[i].z);
  t.id = id;
  return t;
}

Vec3 V(const float p[3]) { return Vec3(p[0], p[1], p[2]); }
Vec3 V(Float3 p) { return Vec3(p.x, p.y, p.z); }

// An Embree scene of exactly the given triangles (primitive k = triangles[k]), with EmbreeScene's settings.
class EmbreeTriangles {
 public:
  explicit EmbreeTriangles(const std::vector<BvhTriangle> &tris) {
    scene_ = rtcNewScene(EmbreeDevice());
    rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);
    RTCGeometry geom = rtcNewGeometry(EmbreeDevice(), RTC_GEOMETRY_TYPE_TRIANGLE);
    auto *vb = static_cast<float *>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                            3 * sizeof(float), 3 * tris.size()));
    auto *ib = static_cast<unsigned *>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                               3 * sizeof(unsigned), tris.size()));
    for (size_t k = 0; k < tris.size(); ++k) {
      std::memcpy(vb + 9 * k + 0, tris[k].v0, 3 * sizeof(float));
      std::memcpy(vb + 9 * k + 3, tris[k].v1, 3 * sizeof(float));
      std::memcpy(vb + 9 * k + 6, tris[k].v2, 3 * sizeof(float));
      for (unsigned c = 0; c < 3; ++c) ib[3 * k + c] = unsigned(3 * k + c);
    }
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene_, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene_);
  }
  ~EmbreeTriangles() {
    rtcReleaseScene(scene_);
  }
  EmbreeTriangles(const EmbreeTriangles &) = delete;
  EmbreeTriangles &operator=(const EmbreeTriangles &) = delete;
  RTCScene Handle() const { return scene_; }

 private:
  RTCScene scene_ = nullptr;
};

bool EmbreeOccluded(RTCScene scene, const BvhRay &r) {
  RTCRay ray = MakeRay(V(r.org), V(r.dir), r.tnear, r.tfar);
  Occluded1(scene, nullptr, &ray);
  return ray.tfar < 0;
}

// Embree's closest hit as a BvhHit (id from the triangle list, input = Embree's primitive index).
BvhHit EmbreeClosest(RTCScene scene, const BvhRay &r, const std::vector<BvhTriangle> &tris) {
  RTCRayHit rh = MakeRayHit(V(r.org), V(r.dir), r.tnear, r.tfar);
  Intersect1(scene, nullptr, &rh);
  BvhHit h;
  h.t = r.tfar;
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return h;
  h.t = rh.ray.tfar;
  h.u = rh.hit.u;
  h.v = rh.hit.v;
  h.input = int32_t(rh.hit.primID);
  h.id = tris[rh.hit.primID].id;
  return h;
}

// --- What counts as a legitimate disagreement ------------------------------------------------------------
// Two correct single-precision tracers may disagree only where rounding decides. Precisely, with D the diagonal
// of the scene's bounding box and everything computed in double precision, a triangle is *ambiguous* for a ray
// when
//   (a) the ray's segment [org + tnear dir, org + tend dir] passes within kEdgeTolerance * D of one of the
//       triangle's edges (tend = tfar, or a point past the scene when tfar is infinite), or
//   (b) one end of that segment (the tnear end, or a finite tfar end) lies within kEndTolerance * D of the
//       triangle (the hit distance is within rounding of the interval's end), or
//   (c) both ends of the segment lie within kEndTolerance * D of the triangle's plane (the ray runs inside
//       it), or
//   (d) the ray meets the triangle's plane at a grazing angle, |cos| < kGrazingCosine to its normal (only for
//       first hits that agree on the id and differ in t).
// A disagreement is explained when a triangle it involves is ambiguous: the triangle either tracer hit first,
// or, if neither hit anything, any triangle of the scene. Two different first hits are also explained when
// their exact distances along the ray are within kEdgeTolerance * D (a tie). Every disagreement must be
// explained, and there may be at most kMaxRayDisagreementRate of them per free ray and
// kMaxSegmentDisagreementRate per shadow segment. Segments get more: one that arrives at its end patch at a
// grazing angle meets the end patch's plane within rounding of the trimmed end 1 - kSegmentTrim (the float
// error of a hit distance grows as 1/cos), and the two tracers round that differently, either way. Measured:
// no disagreement at all in 500,000 free rays; 2.4e-4 to 4.2e-4 of the segments, all of that kind.
constexpr double kEdgeTolerance = 1e-5;
constexpr double kEndTolerance = 1e-6;
constexpr double kGrazingCosine = 1e-3;
constexpr double kMaxRayDisagreementRate = 1e-4;
constexpr double kMaxSegmentDisagreementRate = 1e-3;
// First hits agree in t when their distances along the ray differ by at most this fraction of D.
constexpr double kDistanceTolerance = 1e-5;

double SegmentSegmentDistance(Vec3 p1, Vec3 q1, Vec3 p2, Vec3 q2) {
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = Dot(d1, d1), e = Dot(d2, d2), f = Dot(d2, r);
  auto clamp01 = [](double x) { return std::min(1.0, std::max(0.0, x)); };
  double s = 0, t = 0;
  if (a <= 0 && e <= 0) return Length(r);
  if (a <= 0) {
    t = clamp01(f / e);
  } else {
    const double c = Dot(d1, r);
    if (e <= 0) {
      s = clamp01(-c / a);
    } else {
      const double b = Dot(d1, d2), denom = a * e - b * b;
      s = denom > 0 ? clamp01((b * f - c * e) / denom) : 0.0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = clamp01(-c / a);
      } else if (t > 1) {
        t = 1;
        s = clamp01((b - c) / a);
      }
    }
  }
  return Length((p1 + d1 * s) - (p2 + d2 * t));
}

double PointSegmentDistance(Vec3 p, Vec3 a, Vec3 b) {
  const Vec3 d = b - a;
  const double len2 = Dot(d, d);
  const double s = len2 > 0 ? std::min(1.0, std::max(0.0, Dot(p - a, d) / len2)) : 0.0;
  return Length(p - (a + d * s));
}

double PointTriangleDistance(Vec3 p, Vec3 a, Vec3 b, Vec3 c) {
  const Vec3 n = Cross(b - a, c - a);
  const double n2 = Dot(n, n);
  if (n2 > 0) {
    // Inside the prism over the triangle: the distance to its plane.
    const bool inside = Dot(Cross(b - a, p - a), n) >= 0 && Dot(Cross(c - b, p - b), n) >= 0 &&
                        Dot(Cross(a - c, p - c), n) >= 0;
    if (inside) return std::fabs(Dot(p - a, n)) / std::sqrt(n2);
  }
  return std::min({PointSegmentDistance(p, a, b), PointSegmentDistance(p, b, c), PointSegmentDistance(p, c, a)});
}

struct SceneBox {
  Vec3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  double Diagonal() const { return Length(hi - lo); }
};

SceneBox BoxOf(const std::vector<BvhTriangle> &tris) {
  SceneBox b;
  for (const BvhTriangle &t : tris)
    for (const float *p : {t.v0, t.v1, t.v2}) b.lo = Min(b.lo, V(p)), b.hi = Max(b.hi, V(p));
  return b;
}

// The ray as a segment of the scene, in double precision.
struct RaySegment {
  Vec3 o, d, p0, p1;
  bool finiteEnd = false;
};

RaySegment Segment(const SceneBox &box, const BvhRay &r) {
  RaySegment s;
  s.o = V(r.org);
  s.d = V(r.dir);
  const double diag = box.Diagonal(), len = Length(s.d);
  // Past the scene: farther from the origin than its distance to the box's centre plus the diagonal.
  const double exitT = (Length(s.o - 0.5 * (box.lo + box.hi)) + diag) / len;
  s.finiteEnd = double(r.tfar) < exitT;
  s.p0 = s.o + s.d * double(r.tnear);
  s.p1 = s.o + s.d * (s.finiteEnd ? double(r.tfar) : exitT);
  return s;
}

// Why a triangle is ambiguous for a ray (the first reason that applies), or kNone.
enum class Reason { kNone, kEdge, kEnd, kInPlane, kGrazing, kTie, kCount };
const char *const kReasonNames[] = {"none", "edge", "end", "in-plane", "grazing", "tie"};

Reason Ambiguous(const BvhTriangle &t, const RaySegment &s, double diag, bool grazingCounts) {
  const Vec3 a = V(t.v0), b = V(t.v1), c = V(t.v2);
  const double edge = kEdgeTolerance * diag, end = kEndTolerance * diag;
  if (PointTriangleDistance(s.p0, a, b, c) <= end) return Reason::kEnd;
  if (s.finiteEnd && PointTriangleDistance(s.p1, a, b, c) <= end) return Reason::kEnd;
  if (SegmentSegmentDistance(s.p0, s.p1, a, b) <= edge || SegmentSegmentDistance(s.p0, s.p1, b, c) <= edge ||
      SegmentSegmentDistance(s.p0, s.p1, c, a) <= edge)
    return Reason::kEdge;
  const Vec3 n = Cross(b - a, c - a);
  const double nLen = Length(n);
  if (nLen > 0 && std::fabs(Dot(s.p0 - a, n)) <= end * nLen && std::fabs(Dot(s.p1 - a, n)) <= end * nLen)
    return Reason::kInPlane;
  if (grazingCounts && std::fabs(Dot(n, s.d)) < kGrazingCosine * nLen * Length(s.d)) return Reason::kGrazing;
  return Reason::kNone;
}

// Where the ray's line meets the triangle's plane, in units of the direction (exact up to double rounding).
double PlaneDistance(const BvhTriangle &t, const RaySegment &s) {
  const Vec3 a = V(t.v0), n = Cross(V(t.v1) - a, V(t.v2) - a);
  return Dot(a - s.o, n) / Dot(s.d, n);
}

enum class Disagreement { kNone, kOcclusion, kHitMiss, kId, kDistance };

Reason Explain(const std::vector<BvhTriangle> &tris, const SceneBox &box, const BvhRay &r, Disagreement what,
               const BvhHit &e, const BvhHit &b) {
  const RaySegment s = Segment(box, r);
  const double diag = box.Diagonal();
  const bool grazing = what == Disagreement::kDistance;
  if (e.input < 0 && b.input < 0) {
    for (const BvhTriangle &t : tris) {
      const Reason why = Ambiguous(t, s, diag, grazing);
      if (why != Reason::kNone) return why;
    }
    return Reason::kNone;
  }
  for (const BvhHit *h : {&e, &b}) {
    if (h->input < 0) continue;
    const Reason why = Ambiguous(tris[size_t(h->input)], s, diag, grazing);
    if (why != Reason::kNone) return why;
  }
  if (e.input >= 0 && b.input >= 0) {
    const double te = PlaneDistance(tris[size_t(e.input)], s), tb = PlaneDistance(tris[size_t(b.input)], s);
    if (std::fabs(te - tb) * Length(s.d) <= kEdgeTolerance * diag) return Reason::kTie;
  }
  return Reason::kNone;
}

// --- Random rays ---------------------------------------------------------------------------------------

Float3 ToF(Vec3 p) { return Float3{float(p.x), float(p.y), float(p.z)}; }

Vec3 UnitDirection(double u1, double u2) {
  const double z = 1 - 2 * u1, s = std::sqrt(std::max(0.0, 1 - z * z)), phi = 6.283185307179586 * u2;
  return Vec3(s * std::cos(phi), s * std::sin(phi), z);
}

// Ray k of a scene's test set, a function of (stream, k) only:
//  35 % from a uniform point in the scene's box grown by 10 % of its diagonal on every side, uniform direction,
//       interval (0, inf); 5 % of them have one direction component exactly 0, 2 % are along an axis;
//  15 % the same with a finite interval (tnear in [0, 0.1 D], tfar up to 1.5 D) and a direction of random
//       length, which tests the interval ends;
//  50 % shadow segments between uniform points of two random patches, traced like EmbreeScene does.
// Patch points have `origin` subtracted first (scenes stored relative to a camera).
BvhRay MakeTestRay(uint32_t stream, uint32_t k, const SceneBox &box, const std::vector<Patch> &patches,
                   Vec3 origin) {
  const Philox4x32 a = Philox(k, stream, 0xB1Au, 0u, 7u, 11u);
  const Philox4x32 b = Philox(k, stream, 0xB1Au, 1u, 7u, 11u);
  const double kind = ToUnit(a.v[0]);
  BvhRay r;
  if (kind < 0.5) {
    const double diag = box.Diagonal(), grow = 0.1 * diag;
    const Vec3 lo = box.lo - Vec3(grow, grow, grow), size = (box.hi - box.lo) + Vec3(2 * grow, 2 * grow, 2 * grow);
    const Vec3 o(lo.x + size.x * ToUnit(a.v[1]), lo.y + size.y * ToUnit(a.v[2]), lo.z + size.z * ToUnit(a.v[3]));
    Vec3 d = UnitDirection(ToUnit(b.v[0]), ToUnit(b.v[1]));
    const double special = ToUnit(b.v[2]);
    const int axis = int(b.v[3] % 3);
    if (special < 0.02) {
      d = Vec3();
      d[axis] = b.v[3] & 8 ? 1.0 : -1.0;
    } else if (special < 0.07) {
      d[axis] = 0;
    }
    r.org = ToF(o);
    r.tnear = 0;
    r.tfar = kInf;
    if (kind >= 0.35) {
      const double scale = 0.25 + 4 * ToUnit(b.v[1] ^ b.v[2]);
      d = d * scale;
      r.tnear = float(0.1 * diag * ToUnit(b.v[0] ^ b.v[3]) / scale);
      r.tfar = float(1.5 * diag * ToUnit(a.v[0] ^ a.v[1]) / scale);
    }
    r.dir = ToF(d);
    return r;
  }
  // Like VisibleFraction, only points that see each other's front (both cosines positive): shadow rays never
  // run within the plane of the patches they join.
  const uint32_t n = uint32_t(patches.size());
  for (uint32_t attempt = 0;; ++attempt) {
    const Philox4x32 x = Philox(k, stream, 0xB1Bu, attempt, 7u, 11u);
    const Philox4x32 y = Philox(k, stream, 0xB1Cu, attempt, 7u, 11u);
    const Patch &p = patches[x.v[0] % n], &q = patches[x.v[1] % n];
    double jacobian;
    const Vec3 from = SquareToPatch(p.corners, p.cornerCount, ToUnit(y.v[0]), ToUnit(y.v[1]), jacobian);
    const Vec3 to = SquareToPatch(q.corners, q.cornerCount, ToUnit(y.v[2]), ToUnit(y.v[3]), jacobian);
    if (!(Dot(p.normal, to - from) > 0 && Dot(q.normal, from - to) > 0)) continue;
    r.org = ToF(from - origin);
    r.dir = ToF((to - origin) - (from - origin));
    r.tnear = kSegmentTrim;
    r.tfar = 1.0f - kSegmentTrim;
    return r;
  }
}

struct Comparison {
  long long rays = 0, hits = 0, disagreements = 0, unexplained = 0;
  long long occlusionDiffers = 0, hitDiffers = 0, idDiffers = 0, distanceDiffers = 0;
  long long byReason[int(Reason::kCount)] = {};
  long long segments = 0, segmentDisagreements = 0, rayDisagreements = 0;
  double maxAgreeingDistanceError = 0;  // over agreeing hits, in units of D
  std::vector<std::string> examples;    // the first few unexplained ones
};

// Traces rays [0, count) of `stream` with Embree and with the BVH (any hit and closest hit) on all threads.
Comparison CompareWithEmbree(const std::vector<BvhTriangle> &tris, RTCScene embree, uint32_t stream,
                             uint32_t count, const std::vector<Patch> &patches, Vec3 origin) {
  const FlatBvh bvh = BuildBvh(tris);
  const BvhView view = bvh.View();
  const SceneBox box = BoxOf(tris);
  const double diag = box.Diagonal();
  Comparison total;
  std::mutex mutex;
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, count, 2048), [&](const tbb::blocked_range<uint32_t> &range) {
    Comparison c;
    for (uint32_t k = range.begin(); k != range.end(); ++k) {
      const BvhRay r = MakeTestRay(stream, k, box, patches, origin);
      const bool segment = r.tnear == kSegmentTrim && r.tfar == 1.0f - kSegmentTrim;
      ++c.rays;
      c.segments += segment;
      const bool eOcc = EmbreeOccluded(embree, r);
      const bool bOcc = AnyHit(view, r.org, r.dir, r.tnear, r.tfar);
      const BvhHit eHit = EmbreeClosest(embree, r, tris);
      const BvhHit bHit = ClosestHit(view, r.org, r.dir, r.tnear, r.tfar);
      const double len = Length(V(r.dir));
      const double distanceError = std::fabs(double(eHit.t) - double(bHit.t)) * len / diag;
      Disagreement what = Disagreement::kNone;
      if (eOcc != bOcc) ++c.occlusionDiffers, what = Disagreement::kOcclusion;
      if ((eHit.id >= 0) != (bHit.id >= 0)) {
        ++c.hitDiffers, what = Disagreement::kHitMiss;
      } else if (eHit.id >= 0) {
        ++c.hits;
        if (eHit.id != bHit.id) {
          ++c.idDiffers, what = Disagreement::kId;
        } else if (distanceError > kDistanceTolerance) {
          ++c.distanceDiffers, what = Disagreement::kDistance;
        } else {
          c.maxAgreeingDistanceError = std::max(c.maxAgreeingDistanceError, distanceError);
        }
      }
      if (what == Disagreement::kNone) continue;
      ++c.disagreements;
      const Reason why = Explain(tris, box, r, what, eHit, bHit);
      ++c.byReason[int(why)];
      (segment ? c.segmentDisagreements : c.rayDisagreements) += 1;
      if (why != Reason::kNone) continue;
      ++c.unexplained;
      if (c.examples.size() < 5) {
        char line[512];
        std::snprintf(line, sizeof(line),
                      "ray %u: org (%.9g %.9g %.9g) dir (%.9g %.9g %.9g) t (%.9g, %.9g]: "
                      "embree occ %d id %d t %.9g, bvh occ %d id %d t %.9g, kind %d",
                      k, r.org.x, r.org.y, r.org.z, r.dir.x, r.dir.y, r.dir.z, r.tnear, r.tfar, int(eOcc), eHit.id,
                      eHit.t, int(bOcc), bHit.id, bHit.t, int(what));
        c.examples.push_back(line);
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    total.rays += c.rays, total.hits += c.hits, total.disagreements += c.disagreements;
    total.unexplained += c.unexplained, total.occlusionDiffers += c.occlusionDiffers;
    total.hitDiffers += c.hitDiffers, total.idDiffers += c.idDiffers, total.distanceDiffers += c.distanceDiffers;
    for (int i = 0; i < int(Reason::kCount); ++i) total.byReason[i] += c.byReason[i];
    total.segments += c.segments, total.segmentDisagreements += c.segmentDisagreements;
    total.rayDisagreements += c.rayDisagreements;
    total.maxAgreeingDistanceError = std::max(total.maxAgreeingDistanceError, c.maxAgreeingDistanceError);
    for (const auto &e : c.examples)
      if (total.examples.size() < 5) total.examples.push_back(e);
  });
  return total;
}

void ExpectAgreement(const Comparison &c, const std::string &name) {
  std::printf("  %-40s rays %lld hits %lld disagreements %lld (occlusion %lld, hit/miss %lld, id %lld, t %lld), "
              "max agreeing |dt| %.2g D\n",
              name.c_str(), c.rays, c.hits, c.disagreements, c.occlusionDiffers, c.hitDiffers, c.idDiffers,
              c.distanceDiffers, c.maxAgreeingDistanceError);
  std::printf("    disagreements on %lld free rays %lld, on %lld segments %lld; why:", c.rays - c.segments,
              c.rayDisagreements, c.segments, c.segmentDisagreements);
  for (int i = 0; i < int(Reason::kCount); ++i) std::printf(" %s %lld", kReasonNames[i], c.byReason[i]);
  std::printf("\n");
  EXPECT_EQ(c.unexplained, 0) << name;
  for (const auto &e : c.examples) ADD_FAILURE() << name << ": disagreement away from any boundary: " << e;
  EXPECT_LE(double(c.rayDisagreements), kMaxRayDisagreementRate * double(c.rays - c.segments)) << name;
  EXPECT_LE(double(c.segmentDisagreements), kMaxSegmentDisagreementRate * double(c.segments)) << name;
  // The rays must actually hit things for the comparison to mean anything (the open scenes hit least).
  EXPECT_GT(c.hits, c.rays / 10) << name;
}

// --- Tests -----------------------------------------------------------------------------------------------

TEST(Bvh, EmptyHitsNothing) {
  const FlatBvh bvh = BuildBvh({});
  EXPECT_TRUE(bvh.nodes.empty());
  EXPECT_TRUE(bvh.triangles.empty());
  const BvhView view = bvh.View();
  EXPECT_FALSE(AnyHit(view, Float3{0, 0, 0}, Float3{1, 0, 0}, 0, kInf));
  const BvhHit h = ClosestHit(view, Float3{0, 0, 0}, Float3{1, 0, 0}, 0, kInf);
  EXPECT_EQ(h.id, -1);
  EXPECT_EQ(h.t, kInf);
  EXPECT_FALSE(SegmentOccludedBvh(view, Vec3(0, 0, 0), Vec3(1, 1, 1)));
}

TEST(Bvh, OneTriangle) {
  // Right triangle in z = 2 with legs 4 along x and y; id 7.
  const FlatBvh bvh = BuildBvh({Tri({0, 0, 2}, {4, 0, 2}, {0, 4, 2}, 7)});
  ASSERT_EQ(bvh.nodes.size(), 1u);
  ASSERT_EQ(bvh.triangles.size(), 1u);
  const BvhView view = bvh.View();
  // Down through (1, 2, 2) from z = 5 with a direction of length 2: t = 1.5, u = 1/4, v = 1/2 (exact in float).
  BvhHit h = ClosestHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 0, kInf);
  EXPECT_EQ(h.id, 7);
  EXPECT_EQ(h.input, 0);
  EXPECT_FLOAT_EQ(h.t, 1.5f);
  EXPECT_FLOAT_EQ(h.u, 0.25f);
  EXPECT_FLOAT_EQ(h.v, 0.5f);
  EXPECT_TRUE(AnyHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 0, kInf));
  // From behind: no culling.
  h = ClosestHit(view, Float3{1, 2, -1}, Float3{0, 0, 1}, 0, kInf);
  EXPECT_EQ(h.id, 7);
  EXPECT_FLOAT_EQ(h.t, 3.0f);
  // The interval is (tnear, tfar]: tfar = t hits, a little less misses, tnear = t misses.
  EXPECT_TRUE(AnyHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 0, 1.5f));
  EXPECT_FALSE(AnyHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 0, 1.49f));
  EXPECT_FALSE(AnyHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 1.5f, kInf));
  EXPECT_EQ(ClosestHit(view, Float3{1, 2, 5}, Float3{0, 0, -2}, 0, 1.49f).id, -1);
  // Beside the triangle (x + y > 4), and pointing away from it.
  EXPECT_FALSE(AnyHit(view, Float3{3, 3, 5}, Float3{0, 0, -1}, 0, kInf));
  EXPECT_FALSE(AnyHit(view, Float3{1, 2, 5}, Float3{0, 0, 1}, 0, kInf));
  // A shadow segment across it is blocked; one ending on it (trimmed) is not.
  EXPECT_TRUE(SegmentOccludedBvh(view, Vec3(1, 1, 1), Vec3(1, 1, 3)));
  EXPECT_FALSE(SegmentOccludedBvh(view, Vec3(1, 1, 1), Vec3(1, 1, 2)));
}

TEST(Bvh, RayAlongAnEdge) {
  // A ray inside the triangle's plane, exactly along its edge from v0 to v1: the intersection has no area and
  // neither tracer reports it (Embree's determinant is 0 too).
  const std::vector<BvhTriangle> tris{Tri({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 3)};
  const FlatBvh bvh = BuildBvh(tris);
  const EmbreeTriangles embree(tris);
  for (const BvhRay &r : {BvhRay{{-1, 0, 0}, {1, 0, 0}, 0, kInf}, BvhRay{{0.25f, 0, 0}, {1, 0, 0}, 0, kInf},
                          BvhRay{{-1, 1, 0}, {1, -0.5f, 0}, 0, kInf}}) {
    EXPECT_FALSE(AnyHit(bvh.View(), r.org, r.dir, r.tnear, r.tfar));
    EXPECT_EQ(ClosestHit(bvh.View(), r.org, r.dir, r.tnear, r.tfar).id, -1);
    EXPECT_FALSE(EmbreeOccluded(embree.Handle(), r));
  }
  // A ray crossing the plane exactly on that edge (y = 0 and z = 0 in float) hits the triangle's boundary,
  // which counts: the edge is closed.
  const BvhHit h = ClosestHit(bvh.View(), Float3{0.5f, 0, 1}, Float3{0, 0, -1}, 0, kInf);
  EXPECT_EQ(h.id, 3);
  EXPECT_EQ(h.t, 1.0f);
  EXPECT_EQ(h.v, 0.0f);
}

// k random bits as a fraction in [0, 1): a multiple of 2^-k.
double Bits(uint32_t random, int k) { return double(random % (1u << k)) / double(1u << k); }

TEST(Bvh, SharedEdgesAreWatertight) {
  // Random parallelograms split along a diagonal, and rays through points exactly on the shared diagonal.
  // Corners are multiples of 2^-14 in [0,1)^3, edge points c0 + s (c2 - c0) with s = j / 256, directions
  // multiples of 2^-10: every coordinate is exact in float, so each ray passes exactly through the closed edge,
  // and only rounding inside the triangle test decides. Woop's test evaluates the shared edge identically for
  // both triangles, so every ray must hit one of them. (A textbook Moeller-Trumbore in float misses about 7 %
  // of these rays; Embree's variant is printed for information.)
  int misses = 0, embreeMisses = 0, rays = 0, quads = 0;
  for (uint32_t q = 0; quads < 40; ++q) {
    const Philox4x32 a = Philox(q, 1, 0xED6Fu, 0, 1, 2), b = Philox(q, 2, 0xED6Fu, 0, 1, 2);
    const Vec3 c0(Bits(a.v[0], 14), Bits(a.v[1], 14), Bits(a.v[2], 14));
    const Vec3 c1(Bits(a.v[3], 14), Bits(b.v[0], 14), Bits(b.v[1], 14));
    const Vec3 c2(Bits(b.v[2], 14), Bits(b.v[3], 14), Bits(a.v[0] ^ b.v[1], 14)), c3 = c0 + (c2 - c1);
    const Vec3 n = Cross(c1 - c0, c2 - c0);
    if (Length(n) < 0.05) continue;  // no slivers
    ++quads;
    const std::vector<BvhTriangle> tris{Tri(c0, c1, c2, 0), Tri(c0, c2, c3, 1)};
    const FlatBvh bvh = BuildBvh(tris);
    const EmbreeTriangles embree(tris);
    for (uint32_t k = 0; k < 600; ++k) {
      const Philox4x32 x = Philox(k, q, 0xED6Eu, 0, 1, 2);
      const Vec3 target = c0 + (c2 - c0) * (double(1 + x.v[0] % 255) / 256);  // strictly inside the edge
      const Vec3 offset(Bits(x.v[1], 11) * 2 - 1, Bits(x.v[2], 11) * 2 - 1, Bits(x.v[3], 11) * 2 - 1);
      if (!(std::fabs(Dot(offset, n)) >= 0.1 * Length(offset) * Length(n))) continue;  // no grazing rays
      const BvhRay r{ToF(target + offset), ToF(-offset), 0, kInf};
      const Vec3 through = V(r.org) + V(r.dir);
      ASSERT_TRUE(through.x == target.x && through.y == target.y && through.z == target.z) << "not exact";
      ++rays;
      misses += !AnyHit(bvh.View(), r.org, r.dir, 0, kInf);
      misses += ClosestHit(bvh.View(), r.org, r.dir, 0, kInf).id < 0;
      embreeMisses += !EmbreeOccluded(embree.Handle(), r);
    }
  }
  std::printf("  %d rays through shared edges: %d misses (Embree: %d)\n", rays, misses, embreeMisses);
  EXPECT_GT(rays, 15000);
  EXPECT_EQ(misses, 0) << "rays slipped through a shared edge";
}

TEST(Bvh, BuildIsDeterministicAndCoversEveryTriangle) {
  const Scene scene = Mesh("cornell_sphere.obj");
  const std::vector<BvhTriangle> tris = PatchTriangles(MakePatches(scene, 3));
  for (BvhQuality quality : {BvhQuality::kHigh, BvhQuality::kMedium}) {
    const FlatBvh a = BuildBvh(tris, quality), b = BuildBvh(tris, quality);
    ASSERT_EQ(a.nodes.size(), b.nodes.size());
    ASSERT_EQ(a.triangles.size(), b.triangles.size());
    EXPECT_EQ(std::memcmp(a.nodes.data(), b.nodes.data(), sizeof(BvhNode) * a.nodes.size()), 0);
    EXPECT_EQ(
        std::memcmp(a.triangles.data(), b.triangles.data(), sizeof(BvhPackedTriangle) * a.triangles.size()), 0);
    EXPECT_LE(a.depth, kBvhStackSize);
    // Every input triangle is in some leaf, with its own vertices and id; every leaf slot's box overlaps the
    // boxes of its triangles; every inner node is referenced exactly once.
    std::vector<int> seen(tris.size(), 0), referenced(a.nodes.size(), 0);
    for (const BvhNode &n : a.nodes) {
      for (int k = 0; k < 2; ++k) {
        if (n.child[k] >= 0) {
          ASSERT_LT(size_t(n.child[k]), a.nodes.size());
          ++referenced[size_t(n.child[k])];
          continue;
        }
        for (int32_t j = ~n.child[k]; j < ~n.child[k] + n.count[k]; ++j) {
          const BvhPackedTriangle &t = a.triangles[size_t(j)];
          const BvhTriangle &in = tris[size_t(t.input)];
          ++seen[size_t(t.input)];
          EXPECT_EQ(t.id, in.id);
          EXPECT_EQ(std::memcmp(t.v0, in.v0, sizeof(in.v0)) | std::memcmp(t.v1, in.v1, sizeof(in.v1)) |
                        std::memcmp(t.v2, in.v2, sizeof(in.v2)),
                    0);
          for (int axis = 0; axis < 3; ++axis) {
            EXPECT_LE(n.lo[axis][k], std::max({in.v0[axis], in.v1[axis], in.v2[axis]}));
            EXPECT_GE(n.hi[axis][k], std::min({in.v0[axis], in.v1[axis], in.v2[axis]}));
          }
        }
      }
    }
    EXPECT_EQ(referenced[0], 0);
    for (size_t i = 1; i < referenced.size(); ++i) EXPECT_EQ(referenced[i], 1) << "node " << i;
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_GE(seen[i], 1) << "triangle " << i;
    if (quality == BvhQuality::kMedium) {
      EXPECT_EQ(a.triangles.size(), tris.size());  // no splits
    }
  }
}

TEST(Bvh, SceneTrianglesAreTheInputPolygonsFanSplit) {
  const Scene scene = Mesh("cornell_box.obj");
  const std::vector<BvhTriangle> tris = SceneTriangles(scene);
  size_t t = 0;
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const auto &c = scene.faces[f].corners;
    for (size_t k = 1; k + 1 < c.size(); ++k, ++t) {
      ASSERT_LT(t, tris.size());
      EXPECT_EQ(tris[t].id, int(f));
      EXPECT_EQ(V(tris[t].v0).x, double(float(c[0].x)));
      EXPECT_EQ(V(tris[t].v1).y, double(float(c[k].y)));
      EXPECT_EQ(V(tris[t].v2).z, double(float(c[k + 1].z)));
    }
  }
  EXPECT_EQ(t, tris.size());
}

TEST(Bvh, PatchTrianglesSplitQuadsLikeEmbree) {
  const Scene scene = Mesh("cornell_sphere.obj");
  const std::vector<Patch> patches = MakePatches(scene, 1);
  const Vec3 origin(0.5, 0.5, 2.44);
  const std::vector<BvhTriangle> tris = PatchTriangles(patches, origin);
  size_t t = 0;
  bool sawTriangle = false, sawQuad = false;
  for (size_t i = 0; i < patches.size(); ++i) {
    const Patch &p = patches[i];
    // Embree intersects a quad (v0 v1 v2 v3) as (v0 v1 v3) and (v2 v3 v1).
    const std::vector<std::array<int, 3>> halves =
        p.cornerCount == 3 ? std::vector<std::array<int, 3>>{{0, 1, 2}}
                           : std::vector<std::array<int, 3>>{{0, 1, 3}, {2, 3, 1}};
    (p.cornerCount == 3 ? sawTriangle : sawQuad) = true;
    double area = 0;
    for (const auto &h : halves) {
      ASSERT_LT(t, tris.size());
      const BvhTriangle &tri = tris[t++];
      EXPECT_EQ(tri.id, int(i));
      const float *v[3] = {tri.v0, tri.v1, tri.v2};
      for (int c = 0; c < 3; ++c) {
        const Vec3 expected = p.corners[h[size_t(c)]] - origin;
        EXPECT_EQ(v[c][0], float(expected.x));
        EXPECT_EQ(v[c][1], float(expected.y));
        EXPECT_EQ(v[c][2], float(expected.z));
      }
      area += 0.5 * Length(Cross(V(tri.v1) - V(tri.v0), V(tri.v2) - V(tri.v0)));
    }
    // Rounding the corners to float (relative to an origin 2.4 away) moves the area by up to about 1e-5.
    EXPECT_NEAR(area, p.area, 1e-4 * p.area) << "patch " << i;
  }
  EXPECT_EQ(t, tris.size());
  EXPECT_TRUE(sawTriangle && sawQuad);
}

TEST(Bvh, AgreesWithEmbreeOnAMillionRandomRays) {
  // Scene polygons against the EmbreeScene of the shadow rays (the production object), and the patches of the
  // reference scene relative to its camera (the renderer's case, a deeper tree) against Embree over the same
  // triangles.
  struct Case {
    std::string name;
    uint32_t rays;
  };
  const std::vector<Case> cases{{"cornell_sphere.obj", 300000},       {"cornell_box.obj", 200000},
                                {"tests/unit_cube.obj", 50000},       {"tests/blocked_squares.obj", 50000},
                                {"tests/perpendicular_squares.obj", 50000}};
  long long total = 0;
  uint32_t stream = 0;
  for (const Case &c : cases) {
    const Scene scene = Mesh(c.name);
    const EmbreeScene embree(scene);
    const Comparison r = CompareWithEmbree(SceneTriangles(scene), embree.Handle(), ++stream, c.rays,
                                           MakePatches(scene, 2), Vec3());
    ExpectAgreement(r, c.name);
    total += r.rays;
  }
  {
    const Scene scene = Mesh("cornell_sphere.obj");
    const std::vector<Patch> patches = MakePatches(scene, 3);
    const Vec3 camera(0.5, 0.5, 2.44);
    const std::vector<BvhTriangle> tris = PatchTriangles(patches, camera);
    const EmbreeTriangles embree(tris);
    const Comparison r = CompareWithEmbree(tris, embree.Handle(), ++stream, 350000, patches, camera);
    ExpectAgreement(r, "cornell_sphere.obj patches, subdiv 3");
    total += r.rays;
  }
  EXPECT_GE(total, 1000000);
}

TEST(Bvh, SegmentOccludedMatchesEmbreeScene) {
  // The form factors' shadow rays: the stratified point pairs of VisibleFraction between patches of the
  // reference scene, through SegmentOccludedBvh and EmbreeScene::SegmentOccluded.
  const Scene scene = Mesh("cornell_sphere.obj");
  const std::vector<Patch> patches = MakePatches(scene, 2);
  const std::vector<BvhTriangle> tris = SceneTriangles(scene);
  const FlatBvh bvh = BuildBvh(tris);
  const EmbreeScene embree(scene);
  const SceneBox box = BoxOf(tris);
  long long segments = 0, blocked = 0, disagreements = 0, unexplained = 0, byReason[int(Reason::kCount)] = {};
  const uint32_t n = uint32_t(patches.size()), raysPerPair = 16;
  for (uint32_t i = 0; i < n; i += 3) {
    for (uint32_t j = i % 2; j < n; j += 2) {
      const PairSampleSet set = MakePairSampleSet(1234, i, j);
      for (uint32_t k = 0; k < raysPerPair; ++k) {
        double u[4], jacobian;
        PairSample(set, k, raysPerPair, u);
        const Vec3 x = SquareToPatch(patches[i].corners, patches[i].cornerCount, u[0], u[1], jacobian);
        const Vec3 y = SquareToPatch(patches[j].corners, patches[j].cornerCount, u[2], u[3], jacobian);
        if (!(Dot(patches[i].normal, y - x) > 0 && Dot(patches[j].normal, x - y) > 0)) continue;  // not traced
        const bool e = embree.SegmentOccluded(x, y), b = SegmentOccludedBvh(bvh.View(), x, y);
        ++segments;
        blocked += e;
        if (e == b) continue;
        ++disagreements;
        // The triangles involved: each side's first hit over the same interval.
        const BvhRay r{ToF(x), ToF(y - x), kSegmentTrim, 1.0f - kSegmentTrim};
        const BvhHit eHit = EmbreeClosest(embree.Handle(), r, tris);
        const BvhHit bHit = ClosestHit(bvh.View(), r.org, r.dir, r.tnear, r.tfar);
        const Reason why = Explain(tris, box, r, Disagreement::kOcclusion, eHit, bHit);
        ++byReason[int(why)];
        if (why == Reason::kNone) ++unexplained;
      }
    }
  }
  std::printf("  %lld segments, %lld blocked, %lld disagreements:", segments, blocked, disagreements);
  for (int i = 0; i < int(Reason::kCount); ++i) std::printf(" %s %lld", kReasonNames[i], byReason[i]);
  std::printf("\n");
  EXPECT_GT(segments, 100000);
  EXPECT_GT(blocked, segments / 50);
  EXPECT_EQ(unexplained, 0);
  EXPECT_LE(double(disagreements), kMaxSegmentDisagreementRate * double(segments));
}

}  // namespace
}  // namespace rad

// --- The device runs the same traversal -------------------------------------------------------------------
namespace rad {
namespace {

TEST(BvhGpu, DeviceTraversalMatchesHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const Scene scene = Mesh("cornell_sphere.obj");
  const std::vector<Patch> patches = MakePatches(scene, 3);
  const std::vector<BvhTriangle> tris = PatchTriangles(patches);
  const FlatBvh bvh = BuildBvh(tris);
  const SceneBox box = BoxOf(tris);
  std::vector<BvhRay> rays;
  for (uint32_t k = 0; k < 200000; ++k) rays.push_back(MakeTestRay(99, k, box, patches, Vec3()));
  std::vector<uint8_t> occluded;
  std::vector<BvhHit> hits;
  ASSERT_TRUE(TraceBatchOnDevice(bvh, rays, occluded, hits));
  ASSERT_EQ(occluded.size(), rays.size());
  ASSERT_EQ(hits.size(), rays.size());
  // The traversal rounds every operation on its own on both sides (no fused multiply-adds) and the device's
  // division is IEEE, so the results are the same bits.
  long long differ = 0, hitCount = 0;
  for (size_t k = 0; k < rays.size(); ++k) {
    const BvhRay &r = rays[k];
    const bool occ = AnyHit(bvh.View(), r.org, r.dir, r.tnear, r.tfar);
    const BvhHit h = ClosestHit(bvh.View(), r.org, r.dir, r.tnear, r.tfar);
    hitCount += h.id >= 0;
    const bool same = (occluded[k] != 0) == occ && hits[k].id == h.id && hits[k].input == h.input &&
                      hits[k].t == h.t && hits[k].u == h.u && hits[k].v == h.v;
    if (!same && ++differ <= 5) ADD_FAILURE() << "ray " << k << ": device differs from host";
  }
  EXPECT_EQ(differ, 0);
  EXPECT_GT(hitCount, (long long)(rays.size() / 4));
}

}  // namespace
}  // namespace rad
