// Ray traversal of the project's BVH (bvh.h), written once for host and device (RAD_HD): closest hit, any hit,
// and the shadow-segment test of the form factors. Iterative with a fixed stack, no library calls.
//
// Hits follow Embree's conventions, so that the two can be swapped and compared: a ray org + t dir hits a
// triangle for t in (tnear, tfar]; both sides of a triangle count (no culling); (u, v) are the barycentric
// weights of v1 and v2 (the point is (1-u-v) v0 + u v1 + v v2).
//
// Ray-triangle test: the watertight test of Woop, Benthin and Wald (JCGT 2013), in single precision with their
// double-precision fallback when an edge function is exactly 0. Chosen over Moeller-Trumbore because it is
// watertight: a ray through the shared edge or vertex of two triangles (every subdivided patch, every fan-split
// polygon) always hits at least one of them, where a textbook Moeller-Trumbore can let it slip through the
// crack, and a slipped shadow ray is a wrong form factor. (On the rays of Bvh.SharedEdgesAreWatertight, aimed
// exactly at shared edges, a textbook float Moeller-Trumbore misses about 7 %; this test and Embree 3's own
// variant miss none.) Its edge functions are computed relative to the ray origin after a shear that is the same
// for every triangle, so the two triangles of an edge evaluate the same numbers. Every floating-point
// operation of the test is rounded on its own (no fused multiply-add, see Mul/Add/Sub below): contraction
// would break that symmetry, and this keeps device results bit-identical to the host's.
//
// Box test: slabs with the robust far-distance scaling of Ize (JCGT 2013, "Robust BVH ray traversal"), so that
// rounding never culls a box the ray touches; directions with a zero component use +-1e-18 as Embree does.
#pragma once

#include <cstdint>

#include "accel/bvh.h"
#include "formfactor/segment.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

// Pending children per ray: one per level at most. BuildBvh refuses trees deeper than this.
constexpr int kBvhStackSize = 64;

struct BvhHit {
  float t = 0;       // hit distance in units of the direction's length; tfar when nothing was hit
  float u = 0, v = 0;
  int32_t id = -1;   // the triangle's id; -1 when nothing was hit
  int32_t input = -1;  // index of the triangle in BuildBvh's input
};

namespace bvh_detail {

// Arithmetic rounded after every operation on both sides. nvcc would otherwise fuse a*b+c into one rounding
// (g++ does not on x86-64 without -mfma, the project's build).
RAD_HD RAD_INLINE float Mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
RAD_HD RAD_INLINE float Add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
RAD_HD RAD_INLINE float Sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
RAD_HD RAD_INLINE double MulD(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
RAD_HD RAD_INLINE float MinF(float a, float b) { return a < b ? a : b; }
RAD_HD RAD_INLINE float MaxF(float a, float b) { return a > b ? a : b; }
RAD_HD RAD_INLINE float AbsF(float a) { return a < 0 ? -a : a; }

// 1 + 2 gamma(3), gamma(n) = n eps / (1 - n eps) with eps = 2^-24: the relative error bound of a slab distance
// (Ize 2013). Scaling the far distances by it makes the box test conservative.
constexpr float kFarScale = 1.0f + 2.0f * (3.0f * 0x1p-24f) / (1.0f - 3.0f * 0x1p-24f);

// Component k of a 3-vector by selects, not by indexing: a runtime index would put the array in a GPU's slow
// local memory.
RAD_HD RAD_INLINE float Pick(const float p[3], int k) { return k == 0 ? p[0] : (k == 1 ? p[1] : p[2]); }

struct Ray {
  float org[3];
  float inv[3];         // 1 / dir, with +-1e-18 for tiny components
  int negative[3];      // dir[a] < 0: the near slab plane is hi, not lo
  int kx, ky, kz;       // Woop: kz = largest |dir| component; kx, ky the others, swapped to keep the winding
  float ox, oy, oz;     // org[kx], org[ky], org[kz]
  float sx, sy, sz;     // Woop's shear and scale
};

RAD_HD RAD_INLINE Ray MakeRay(Float3 org, Float3 dir) {
  Ray r;
  const float d[3] = {dir.x, dir.y, dir.z};
  r.org[0] = org.x, r.org[1] = org.y, r.org[2] = org.z;
  for (int a = 0; a < 3; ++a) {
    const float safe = AbsF(d[a]) < 1e-18f ? (d[a] < 0 ? -1e-18f : 1e-18f) : d[a];
    r.inv[a] = 1.0f / safe;
    r.negative[a] = safe < 0;
  }
  const float ax = AbsF(d[0]), ay = AbsF(d[1]), az = AbsF(d[2]);
  r.kz = (ax >= ay && ax >= az) ? 0 : (ay >= az ? 1 : 2);
  r.kx = r.kz == 2 ? 0 : r.kz + 1;
  r.ky = r.kx == 2 ? 0 : r.kx + 1;
  const float dz = Pick(d, r.kz);
  if (dz < 0) {
    const int k = r.kx;
    r.kx = r.ky;
    r.ky = k;
  }
  r.ox = Pick(r.org, r.kx), r.oy = Pick(r.org, r.ky), r.oz = Pick(r.org, r.kz);
  r.sx = Pick(d, r.kx) / dz;
  r.sy = Pick(d, r.ky) / dz;
  r.sz = 1.0f / dz;
  return r;
}

// Whether the ray enters child k's box within (tnear, tfar]; `entry` is where it does.
RAD_HD RAD_INLINE bool HitsBox(const BvhNode &n, int k, const Ray &r, float tnear, float tfar, float &entry) {
  float t0 = tnear, t1 = tfar;
  for (int a = 0; a < 3; ++a) {
    const float nearPlane = r.negative[a] ? n.hi[a][k] : n.lo[a][k];
    const float farPlane = r.negative[a] ? n.lo[a][k] : n.hi[a][k];
    t0 = MaxF(t0, (nearPlane - r.org[a]) * r.inv[a]);
    t1 = MinF(t1, (farPlane - r.org[a]) * r.inv[a] * kFarScale);
  }
  entry = t0;
  return t0 <= t1;
}

// Woop et al.'s watertight test. On a hit in (tnear, tfar] sets t, u, v and returns true.
RAD_HD RAD_INLINE bool HitsTriangle(const BvhPackedTriangle &tri, const Ray &r, float tnear, float tfar, float &t,
                                    float &u, float &v) {
  // Vertices relative to the origin, in the ray's permuted axes, then sheared so that the ray runs along z.
  const float aRaw = Sub(Pick(tri.v0, r.kz), r.oz), bRaw = Sub(Pick(tri.v1, r.kz), r.oz);
  const float cRaw = Sub(Pick(tri.v2, r.kz), r.oz);
  const float ax = Sub(Sub(Pick(tri.v0, r.kx), r.ox), Mul(r.sx, aRaw));
  const float ay = Sub(Sub(Pick(tri.v0, r.ky), r.oy), Mul(r.sy, aRaw));
  const float bx = Sub(Sub(Pick(tri.v1, r.kx), r.ox), Mul(r.sx, bRaw));
  const float by = Sub(Sub(Pick(tri.v1, r.ky), r.oy), Mul(r.sy, bRaw));
  const float cx = Sub(Sub(Pick(tri.v2, r.kx), r.ox), Mul(r.sx, cRaw));
  const float cy = Sub(Sub(Pick(tri.v2, r.ky), r.oy), Mul(r.sy, cRaw));
  // Scaled barycentric weights of v0, v1, v2: twice the signed areas of the sheared triangles
  // (origin, v1, v2), (origin, v2, v0), (origin, v0, v1).
  float e0 = Sub(Mul(cx, by), Mul(cy, bx));
  float e1 = Sub(Mul(ax, cy), Mul(ay, cx));
  float e2 = Sub(Mul(bx, ay), Mul(by, ax));
  if (e0 == 0.0f || e1 == 0.0f || e2 == 0.0f) {
    // Exactly on an edge in single precision: decide in double, where these products are exact.
    e0 = float(MulD(cx, by) - MulD(cy, bx));
    e1 = float(MulD(ax, cy) - MulD(ay, cx));
    e2 = float(MulD(bx, ay) - MulD(by, ax));
  }
  if ((e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) && (e0 > 0.0f || e1 > 0.0f || e2 > 0.0f)) return false;
  const float det = Add(Add(e0, e1), e2);
  if (det == 0.0f) return false;  // the ray lies in the triangle's plane, or the triangle has no area
  const float az = Mul(r.sz, aRaw), bz = Mul(r.sz, bRaw), cz = Mul(r.sz, cRaw);
  const float scaledT = Add(Add(Mul(e0, az), Mul(e1, bz)), Mul(e2, cz));
  const float rcpDet = 1.0f / det;
  const float hitT = Mul(scaledT, rcpDet);
  if (!(hitT > tnear && hitT <= tfar)) return false;
  t = hitT;
  u = Mul(e1, rcpDet);
  v = Mul(e2, rcpDet);
  return true;
}

}  // namespace bvh_detail

// The first triangle hit by org + t dir with t in (tnear, tfar]. Children are visited near first, and pending
// ones are dropped once a hit is nearer than where the ray enters them. Triangles whose id is skipA or skipB
// are not there for this ray (the path tracer's rays leave a polygon and end on one; -1 skips nothing), as
// the path tracer's Embree filter does.
RAD_HD inline BvhHit ClosestHit(const BvhView &bvh, Float3 org, Float3 dir, float tnear, float tfar,
                                int32_t skipA = -1, int32_t skipB = -1) {
  using namespace bvh_detail;
  BvhHit hit;
  hit.t = tfar;
  if (bvh.nodeCount == 0) return hit;
  const Ray ray = MakeRay(org, dir);
  int32_t stackNode[kBvhStackSize];
  float stackEntry[kBvhStackSize];
  int size = 0;
  int32_t node = 0;
  for (;;) {
    const BvhNode &n = bvh.nodes[node];
    float entry0, entry1;
    const bool in0 = HitsBox(n, 0, ray, tnear, hit.t, entry0);
    const bool in1 = HitsBox(n, 1, ray, tnear, hit.t, entry1);
    const int first = (in1 && (!in0 || entry1 < entry0)) ? 1 : 0;
    int32_t next = -1;
    for (int i = 0; i < 2; ++i) {
      const int k = i == 0 ? first : 1 - first;
      const float entry = k == 0 ? entry0 : entry1;  // selects: no array in a GPU's local memory
      if (!(k == 0 ? in0 : in1) || entry > hit.t) continue;  // hit.t may have shrunk in the near leaf
      if (n.child[k] >= 0) {
        if (next < 0) {
          next = n.child[k];
        } else {
          stackNode[size] = n.child[k];
          stackEntry[size] = entry;
          ++size;
        }
        continue;
      }
      const int32_t begin = ~n.child[k], end = begin + n.count[k];
      for (int32_t j = begin; j < end; ++j) {
        const BvhPackedTriangle &tri = bvh.triangles[j];
        if (tri.id == skipA || tri.id == skipB) continue;
        float t, u, v;
        if (HitsTriangle(tri, ray, tnear, hit.t, t, u, v)) {
          hit.t = t;
          hit.u = u;
          hit.v = v;
          hit.id = tri.id;
          hit.input = tri.input;
        }
      }
    }
    while (next < 0 && size > 0) {
      --size;
      if (stackEntry[size] <= hit.t) next = stackNode[size];
    }
    if (next < 0) return hit;
    node = next;
  }
}

// Whether any triangle is hit by org + t dir with t in (tnear, tfar]; stops at the first one found. skipA and
// skipB as for ClosestHit.
RAD_HD inline bool AnyHit(const BvhView &bvh, Float3 org, Float3 dir, float tnear, float tfar, int32_t skipA = -1,
                          int32_t skipB = -1) {
  using namespace bvh_detail;
  if (bvh.nodeCount == 0) return false;
  const Ray ray = MakeRay(org, dir);
  int32_t stack[kBvhStackSize];
  int size = 0;
  int32_t node = 0;
  for (;;) {
    const BvhNode &n = bvh.nodes[node];
    int32_t next = -1;
    for (int k = 0; k < 2; ++k) {
      float entry;
      if (!HitsBox(n, k, ray, tnear, tfar, entry)) continue;
      if (n.child[k] >= 0) {
        if (next < 0) {
          next = n.child[k];
        } else {
          stack[size++] = n.child[k];
        }
        continue;
      }
      const int32_t begin = ~n.child[k], end = begin + n.count[k];
      for (int32_t j = begin; j < end; ++j) {
        const BvhPackedTriangle &tri = bvh.triangles[j];
        if (tri.id == skipA || tri.id == skipB) continue;
        float t, u, v;
        if (HitsTriangle(tri, ray, tnear, tfar, t, u, v)) return true;
      }
    }
    if (next < 0) {
      if (size == 0) return false;
      next = stack[--size];
    }
    node = next;
  }
}

RAD_HD RAD_INLINE Float3 ToFloat3(Vec3 p) { return Float3{float(p.x), float(p.y), float(p.z)}; }

// Exactly EmbreeScene::SegmentOccluded on this BVH: the same single-precision ray from `from` along
// `to - from` (computed in double, then rounded), over (kSegmentTrim, 1 - kSegmentTrim].
RAD_HD RAD_INLINE bool SegmentOccludedBvh(const BvhView &bvh, Vec3 from, Vec3 to) {
  return AnyHit(bvh, ToFloat3(from), ToFloat3(to - from), kSegmentTrim, 1.0f - kSegmentTrim);
}

}  // namespace rad
