// The path tracer's physics, written once (RAD_HD) for the CPU path tracer (Embree rays, path_tracer.cpp) and
// the GPU's wavefront (the project's BVH, wavefront_stages.h): what happens at one vertex of a path, given the
// answers of the rays it asks for. The estimator is described in path_tracer.h.
//
// A path is a PathVertex plus its random numbers. At each vertex:
//   ScatterAtVertex  multiplies the throughput by Kd, samples a point on an emitter (next-event estimation) and
//                    a cosine-weighted bounce, after Russian roulette: it returns the shadow ray and the bounce
//                    ray to trace, either of which may be absent;
//   (the caller)     adds the light sample's value to the path's sum if its shadow ray is not occluded, and
//                    traces the bounce ray to its closest hit;
//   ArriveAtHit      adds the light of an emitter the bounce hit (with its MIS weight) and moves the vertex
//                    there, or says that the path has ended (a miss, or a back side).
// The random numbers are drawn in one fixed order per vertex, so a path's numbers, and its value, do not
// depend on how its rays are scheduled.
#pragma once

#include <cmath>
#include <cstdint>

#include "util/math_constants.h"
#include "util/hd.h"
#include "util/rng.h"
#include "util/vec3.h"

namespace rad {

// Fourth Philox counter word of each use of random numbers (apart from the radiosity renderer's "REND").
constexpr uint32_t kPathJitterStream = 0x50415448u;  // "PATH": where a camera sample falls in its pixel
constexpr uint32_t kPathWalkStream = 0x57414C4Bu;    // "WALK": the random walk of a camera sample
constexpr uint32_t kPatchPointStream = 0x50504E54u;  // "PPNT": where a patch-estimate point lies on its patch
constexpr uint32_t kPatchWalkStream = 0x50574C4Bu;   // "PWLK": the random walk of a patch-estimate point

struct PathTraceSettings {
  int maxDepth = 64;       // bounces at most (0: only what camera rays see directly; 1: direct light too)
  int rouletteDepth = 3;   // bounces before Russian roulette may end a path
  // Russian roulette spares paths whose throughput (largest channel) is at least this, and ends the others
  // with probability 1 - throughput / threshold, the survivors' weights raised to the threshold.
  double rouletteThreshold = 0.1;
};

// The random numbers of one walk: (c0, c1, c3) fixed by the caller, c2 counting calls (4 numbers each).
class WalkRandom {
 public:
  RAD_HD WalkRandom() = default;
  RAD_HD WalkRandom(uint64_t seed, uint64_t item, uint32_t sample, uint32_t stream)
      : k0_(uint32_t(seed)), k1_(uint32_t(seed >> 32)), c0_(uint32_t(item)), c1_(sample),
        c3_(stream ^ uint32_t(item >> 32)) {}
  RAD_HD double Next() {
    if (used_ == 4) {
      block_ = Philox(c0_, c1_, dimension_++, c3_, k0_, k1_);
      used_ = 0;
    }
    return ToUnit(block_.v[used_++]);
  }

 private:
  uint32_t k0_ = 0, k1_ = 0, c0_ = 0, c1_ = 0, c3_ = 0;
  uint32_t dimension_ = 0;
  Philox4x32 block_{};
  int used_ = 4;
};

// An emissive input polygon's triangle (of its fan), for next-event estimation.
struct EmitterTriangle {
  int face;
  Vec3 a, b, c;
};

// The scene as the physics reads it, per input polygon (face), as raw pointers: into a PathScene's vectors on
// the host, into device copies of them on the GPU.
struct PathSceneView {
  const Vec3 *normal = nullptr;       // unit front normal (Newell)
  const Vec3 *planePoint = nullptr;   // a point of the polygon's plane (its first corner)
  const Vec3 *reflectance = nullptr;  // Kd
  const Vec3 *emission = nullptr;     // Ke (radiance)
  const double *areaPdf = nullptr;    // density per unit area of a light sample on the polygon (0: not an emitter)
  const EmitterTriangle *emitters = nullptr;
  const double *emitterCdf = nullptr;  // ascending, last = 1: triangles chosen by power (luminance x area)
  int emitterCount = 0;
};

namespace path_detail {

RAD_HD RAD_INLINE Vec3 Mul(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
RAD_HD RAD_INLINE double MaxComponent(Vec3 a) {
  const double yz = a.y > a.z ? a.y : a.z;
  return a.x > yz ? a.x : yz;
}

// Weight of a sample drawn with density `a` when the same direction could also be drawn with density `b`
// (Veach's power heuristic, beta = 2).
RAD_HD RAD_INLINE double PowerHeuristic(double a, double b) { return a * a / (a * a + b * b); }

// Cosine-weighted direction about unit n (pdf cos / pi), with an orthonormal basis that needs no branch on
// the axis (Duff et al. 2017).
RAD_HD RAD_INLINE Vec3 CosineDirection(Vec3 n, double u1, double u2) {
  const double sign = copysign(1.0, n.z);
  const double a = -1.0 / (sign + n.z), b = n.x * n.y * a;
  const Vec3 t(1 + sign * n.x * n.x * a, sign * b, -sign * n.x);
  const Vec3 s(b, sign + n.y * n.y * a, -n.y);
  const double r = sqrt(u1), phi = 2 * kPi * u2;
  const double up = 1 - u1 > 0 ? 1 - u1 : 0.0;
  return t * (r * cos(phi)) + s * (r * sin(phi)) + n * sqrt(up);
}

// The first emitter triangle whose cumulative weight exceeds `pick` (std::upper_bound), the last one if none.
RAD_HD RAD_INLINE int PickEmitter(const PathSceneView &s, double pick) {
  int lo = 0, hi = s.emitterCount;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (s.emitterCdf[mid] <= pick) lo = mid + 1; else hi = mid;
  }
  return lo < s.emitterCount ? lo : s.emitterCount - 1;
}

}  // namespace path_detail

// Where a path is: a point on the front side of polygon `face`, the bounces taken so far, the product of the
// weights of its bounces, and the light gathered so far (Kd and throughput already applied).
struct PathVertex {
  Vec3 x;
  int face = -1;
  int depth = 0;
  Vec3 throughput{1, 1, 1};
  Vec3 sum{0, 0, 0};
};

// The rays one vertex asks for.
struct VertexRays {
  bool shadow = false;  // a light sample: from the vertex to lightPoint on polygon lightFace
  Vec3 lightPoint;
  int lightFace = -1;
  Vec3 lightValue;      // what it adds to the path's sum when the segment is not occluded
  bool bounce = false;  // a bounce ray from the vertex along unit `direction`
  Vec3 direction;
};

// Next-event estimate at x on `face`: one point on one emitter, chosen by power then by area. Its value is
// (1/pi) x the emitted radiance arriving at x times cos, over the density of the sample, weighted by the
// power heuristic against the bounce (`weighted`), or not where no bounce follows. Draws 3 numbers when the
// scene has emitters. Returns false when the sample brings nothing whatever the occlusion.
RAD_HD RAD_INLINE bool SampleLight(const PathSceneView &s, Vec3 x, int face, bool weighted, WalkRandom &random,
                                   Vec3 &lightPoint, int &lightFace, Vec3 &value) {
  using namespace path_detail;
  if (s.emitterCount == 0) return false;
  const double pick = random.Next(), u = random.Next(), v = random.Next();
  const EmitterTriangle &e = s.emitters[PickEmitter(s, pick)];
  if (e.face == face) return false;  // a planar polygon does not light itself
  const double su = sqrt(u);
  const Vec3 y = e.a * (1 - su) + e.b * (su * (1 - v)) + e.c * (su * v);
  const Vec3 w = y - x;
  const double d2 = LengthSquared(w);
  if (!(d2 > 0)) return false;
  const Vec3 dir = w / sqrt(d2);
  const double cosX = Dot(s.normal[face], dir), cosY = -Dot(s.normal[e.face], dir);
  if (cosX <= 0 || cosY <= 0) return false;  // behind x, or the emitter's back side
  // Ke * (cos/pi) / (density of the direction), weighted by the power heuristic against the bounce.
  const double lightPdf = s.areaPdf[e.face] * d2 / cosY, bouncePdf = cosX / kPi;
  value = s.emission[e.face] * (bouncePdf / lightPdf * (weighted ? PowerHeuristic(lightPdf, bouncePdf) : 1.0));
  lightPoint = y;
  lightFace = e.face;
  return true;
}

// Scattering at the path's vertex (see the top of this file). Draws 3 numbers for the light sample (when the
// scene has emitters) and 3 for the bounce (when one may follow), in that order.
RAD_HD RAD_INLINE VertexRays ScatterAtVertex(const PathSceneView &s, const PathTraceSettings &settings,
                                             PathVertex &p, WalkRandom &random) {
  using namespace path_detail;
  VertexRays rays;
  if (p.depth >= settings.maxDepth) return rays;
  // With a cosine-weighted direction, each bounce's weight is just Kd: Kd/pi * cos / (cos/pi).
  p.throughput = Mul(p.throughput, s.reflectance[p.face]);
  if (!(MaxComponent(p.throughput) > 0)) return rays;
  // The last vertex takes no bounce, so its light samples carry the full weight.
  const bool last = p.depth + 1 >= settings.maxDepth;
  Vec3 light;
  if (SampleLight(s, p.x, p.face, !last, random, rays.lightPoint, rays.lightFace, light)) {
    rays.shadow = true;
    rays.lightValue = Mul(p.throughput, light);
  }
  if (++p.depth >= settings.maxDepth) return rays;
  const double u1 = random.Next(), u2 = random.Next(), survive = random.Next();
  if (p.depth >= settings.rouletteDepth) {
    const double ratio = MaxComponent(p.throughput) / settings.rouletteThreshold;
    const double keep = ratio < 1.0 ? ratio : 1.0;
    if (survive >= keep) return rays;
    p.throughput = p.throughput / keep;
  }
  rays.bounce = true;
  rays.direction = CosineDirection(s.normal[p.face], u1, u2);
  return rays;
}

// The point where a ray from the vertex hit polygon `face` at `p` (computed by the caller from its ray's t),
// moved onto the polygon's plane in double precision: the next ray starts on the polygon itself.
RAD_HD RAD_INLINE Vec3 SnapToPlane(const PathSceneView &s, int face, Vec3 p) {
  const Vec3 n = s.normal[face];
  return p - n * Dot(p - s.planePoint[face], n);
}

// The bounce along unit `direction` from the vertex hit polygon `hitFace` at `hitPoint` (on its plane), or
// nothing (hitFace -1). Light that reaches the vertex this way comes from the front side of what the ray hits:
// an emitter's Ke counts here with the power heuristic's weight of the bounce, the rest of it came from
// next-event estimation. Near an emitter's edge, where the light sample's density per solid angle vanishes,
// the bounce takes over and the estimator keeps a finite variance. Returns false when the path ends here.
RAD_HD RAD_INLINE bool ArriveAtHit(const PathSceneView &s, PathVertex &p, Vec3 direction, int hitFace,
                                   Vec3 hitPoint) {
  using namespace path_detail;
  const double cosY = hitFace < 0 ? 0 : -Dot(direction, s.normal[hitFace]);
  if (!(cosY > 0)) return false;
  const double areaPdf = s.areaPdf[hitFace];
  if (areaPdf > 0) {
    const double lightPdf = areaPdf * LengthSquared(hitPoint - p.x) / cosY;
    const double bouncePdf = Dot(s.normal[p.face], direction) / kPi;
    p.sum += Mul(p.throughput, s.emission[hitFace]) * PowerHeuristic(bouncePdf, lightPdf);
  }
  p.x = hitPoint;
  p.face = hitFace;
  return true;
}

// Whether a camera ray along `direction` sees the front side of polygon `hitFace` (-1: nothing).
RAD_HD RAD_INLINE bool SeesFrontSide(const PathSceneView &s, Vec3 direction, int hitFace) {
  return hitFace >= 0 && Dot(direction, s.normal[hitFace]) < 0;
}

// Uniform point on the patch-like polygon with corners c[0..count) (triangle or planar quad of area `area`)
// from (u, v) in [0,1)^2, and its weight: the Jacobian of the map divided by the area (1 for triangles and
// parallelograms), so that the weighted mean over uniform (u, v) is the area average.
RAD_HD RAD_INLINE Vec3 PointOnPolygon(const Vec3 *c, int count, double area, double u, double v, double *weight) {
  if (count == 3) {
    const double su = sqrt(u);
    *weight = 1;
    return c[0] * (1 - su) + c[1] * (su * (1 - v)) + c[2] * (su * v);
  }
  const Vec3 du = (c[1] - c[0]) * (1 - v) + (c[2] - c[3]) * v;
  const Vec3 dv = (c[3] - c[0]) * (1 - u) + (c[2] - c[1]) * u;
  *weight = area > 0 ? Length(Cross(du, dv)) / area : 1;
  return c[0] * ((1 - u) * (1 - v)) + c[1] * (u * (1 - v)) + c[2] * (u * v) + c[3] * ((1 - u) * v);
}

// Mean of `count` values, per channel, as both path tracers report a pixel or a patch; and, with `error`, the
// standard error of that mean.
RAD_HD RAD_INLINE Vec3 MeanOf(const Vec3 *values, int count, Vec3 *error = nullptr) {
  Vec3 sum(0, 0, 0);
  for (int k = 0; k < count; ++k) sum += values[k];
  const Vec3 mean = sum / count;
  if (error) {
    for (int c = 0; c < 3; ++c) {
      double squares = 0;
      for (int k = 0; k < count; ++k) squares += (values[k][c] - mean[c]) * (values[k][c] - mean[c]);
      (*error)[c] = sqrt(squares / (double(count) * double(count - 1)));
    }
  }
  return mean;
}

}  // namespace rad
