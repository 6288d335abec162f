#include "vpl/vpl_lights.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "util/math_constants.h"
#include "vpl/halton.h"
#include "vpl/vpl_scene.h"

namespace rad {

namespace {


struct EmitterTriangle {
  Vec3 a, b, c;
  long long patch;
  double area;
};

// Unit direction around `n`, cosine-weighted, from two numbers in [0,1).
Vec3 CosineDirection(Vec3 n, double u, double v) {
  const Vec3 helper = std::fabs(n.x) > 0.5 ? Vec3(0, 1, 0) : Vec3(1, 0, 0);
  const Vec3 t = Normalize(Cross(helper, n)), b = Cross(n, t);
  const double r = std::sqrt(u), phi = 2 * kPi * v;
  return Normalize(t * (r * std::cos(phi)) + b * (r * std::sin(phi)) + n * std::sqrt(std::max(0.0, 1 - u)));
}

}  // namespace

VplSet ShootVpls(const std::vector<Patch> &patches, const VplScene &scene, long long paths, int bounces,
                 uint64_t seed, double epsilon) {
  VplSet set;
  set.paths = paths;
  std::vector<EmitterTriangle> emitters;
  std::vector<double> cdf;
  double total = 0;
  for (size_t i = 0; i < patches.size(); ++i) {
    const Patch &p = patches[i];
    const double power = (p.emission.x + p.emission.y + p.emission.z) / 3;
    if (!(power > 0)) continue;
    for (int k = 1; k + 1 < p.cornerCount; ++k) {  // a convex polygon as a fan of triangles
      const Vec3 a = p.corners[0], b = p.corners[k], c = p.corners[k + 1];
      const double area = 0.5 * Length(Cross(b - a, c - a));
      if (!(area > 0)) continue;
      emitters.push_back({a, b, c, (long long)i, area});
      total += power * area;
      cdf.push_back(total);
    }
  }
  if (emitters.empty() || paths <= 0) return set;

  const ScrambledHalton halton(3 + 2 * bounces, seed);
  const int perPath = bounces + 1;
  std::vector<Vpl> slots(size_t(paths) * size_t(perPath));
  std::vector<int> lengths(size_t(paths), 0);
  tbb::parallel_for(tbb::blocked_range<long long>(0, paths), [&](const tbb::blocked_range<long long> &range) {
    for (long long i = range.begin(); i != range.end(); ++i) {
      const uint64_t index = uint64_t(i) + 1;  // point 0 of a Halton sequence is 0 in every dimension: a corner
      const double pick = halton.Sample(0, index) * total;
      const size_t k = std::min(size_t(std::upper_bound(cdf.begin(), cdf.end(), pick) - cdf.begin()),
                                emitters.size() - 1);
      const EmitterTriangle &e = emitters[k];
      const Patch &source = patches[size_t(e.patch)];
      const double probability = (cdf[k] - (k > 0 ? cdf[k - 1] : 0.0)) / total;
      const double s = std::sqrt(halton.Sample(1, index)), t = halton.Sample(2, index);
      Vpl v;
      v.position = e.a * (1 - s) + e.b * (s * (1 - t)) + e.c * (s * t);
      v.normal = source.normal;
      v.weight = source.emission * (e.area / (probability * double(paths)));
      v.face = source.face;
      v.depth = 0;
      v.path = i;
      Vpl *out = &slots[size_t(i) * size_t(perPath)];
      out[0] = v;
      int length = 1;
      for (int d = 1; d <= bounces; ++d) {
        const Vec3 dir = CosineDirection(v.normal, halton.Sample(1 + 2 * d, index), halton.Sample(2 + 2 * d, index));
        const Vec3 origin = v.position + v.normal * epsilon;
        const SurfaceHit hit = scene.Intersect(origin, dir);
        if (!hit.hit) break;
        const Patch &p = patches[size_t(hit.patch)];
        if (!(Dot(dir, p.normal) < 0)) break;  // back sides absorb
        const Vec3 weight(v.weight.x * p.reflectance.x, v.weight.y * p.reflectance.y, v.weight.z * p.reflectance.z);
        if (!(weight.x > 0 || weight.y > 0 || weight.z > 0)) break;
        v.position = origin + dir * hit.t;
        v.normal = p.normal;
        v.weight = weight;
        v.face = p.face;
        v.depth = d;
        out[length++] = v;
      }
      lengths[size_t(i)] = length;
    }
  });
  for (long long i = 0; i < paths; ++i) {
    const Vpl *path = &slots[size_t(i) * size_t(perPath)];
    set.direct.push_back(path[0]);
    for (int d = 1; d < lengths[size_t(i)]; ++d) set.indirect.push_back(path[d]);
  }
  return set;
}

Vec3 GatherIrradiance(const VplScene &scene, Vec3 x, Vec3 n, int face, const Vpl *vpls, size_t count,
                      double scale, double dmin2, double epsilon, long long *rays) {
  Vec3 e(0, 0, 0);
  const Vec3 from = x + n * epsilon;
  long long traced = 0;
  for (size_t k = 0; k < count; ++k) {
    const Vpl &v = vpls[k];
    if (v.face == face) continue;  // same plane: both cosines are 0
    const Vec3 d = v.position - x;
    const double d2 = LengthSquared(d);
    if (!(d2 > 0)) continue;
    const double cx = Dot(n, d), cy = -Dot(v.normal, d);
    if (!(cx > 0) || !(cy > 0)) continue;
    ++traced;
    // Both ends sit epsilon off their polygons along the normals, and the segment is trimmed by epsilon at
    // both ends too: an end on a polygon's edge would otherwise lie in the plane of the polygon across it.
    const Vec3 to = v.position + v.normal * epsilon;
    const double trim = epsilon / Length(to - from);
    if (trim >= 0.5 || !scene.Visible(from, to, trim, face, v.face)) continue;
    const double g = cx * cy / (d2 * BoundedDenominator(d2, dmin2));  // cosines from the unnormalised d
    e += v.weight * g;
  }
  *rays += traced;
  return e * scale;
}

}  // namespace rad
