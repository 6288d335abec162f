// Virtual point lights (Keller 1997, "Instant radiosity"): light paths shot from the emitters along scrambled
// Halton points, one VPL where each path starts (on an emitter) and one where each bounce lands.
//
// Weights. Path i starts on emitter triangle k (chosen with probability p_k proportional to its power
// pi * A_k * mean(Ke)) at a uniform point y0, so the VPL there carries W0 = Ke * A_k / (p_k * N) (per channel),
// and the irradiance it gives a point x is W0 * G(x, y0) * V(x, y0). Each bounce leaves along a cosine-weighted
// direction; its area density at the next point z is G(y, z) / pi, which cancels the transport kernel
// G * Kd(z) / pi and leaves W(z) = W(y) * Kd(z). Summing W * G * V over all VPLs is then an unbiased estimate
// of the irradiance from light that has bounced at most `bounces` times (the bounded G below aside).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "scene/patch.h"
#include "util/vec3.h"

namespace rad {

class VplScene;

struct Vpl {
  Vec3 position, normal;  // normal: the front side of the polygon it lies on
  Vec3 weight;            // per channel, see above
  int face = -1;          // input polygon (Patch::face)
  int depth = 0;          // 0: on an emitter, d: after d bounces
  long long path = 0;
};

struct VplSet {
  std::vector<Vpl> direct;    // depth 0, in path order
  std::vector<Vpl> indirect;  // depth >= 1, in path order (then depth)
  long long paths = 0;
};

// `epsilon`: the offset along the normal of every ray origin (a length in scene units).
VplSet ShootVpls(const std::vector<Patch> &patches, const VplScene &scene, long long paths, int bounces,
                 uint64_t seed, double epsilon);

// The bounded geometry term: G = cos_x cos_y / (d^2 + dmin^2 exp(-d^2 / dmin^2)). The denominator is a smooth
// maximum of d^2 and dmin^2 (f(s) = s + exp(-s) grows monotonically from f(0) = 1), so G <= 1 / dmin^2 and no
// VPL makes a bright spot, while beyond 2 dmin it differs from the exact 1/d^2 by less than 0.5 %.
inline double BoundedDenominator(double d2, double dmin2) {
  return dmin2 > 0 ? d2 + dmin2 * std::exp(-d2 / dmin2) : d2;
}

// Irradiance at x (normal n, on input polygon `face`) from `vpls[0..count)`, each times `scale`; `rays` counts
// the shadow rays traced. Sums in the given order (the result does not depend on threads).
Vec3 GatherIrradiance(const VplScene &scene, Vec3 x, Vec3 n, int face, const Vpl *vpls, size_t count,
                      double scale, double dmin2, double epsilon, long long *rays);

}  // namespace rad
