// The image-space halves of two accelerations, both guided by a full-resolution geometry buffer (depth and
// normal per pixel): the joint bilateral upsampling of irradiance computed at a lower resolution (Kopf et al.
// 2007, as used for indirect light by Sloan et al. 2007), and the discontinuity buffer that recombines
// interleaved VPL subsets (Keller and Heidrich 2001; Wald et al. 2002).
#pragma once

#include <vector>

#include "util/vec3.h"

namespace rad {

// What the camera sees at one pixel (its sample point).
struct GSample {
  bool valid = false;  // a front side was hit (back sides and misses are black and take no indirect light)
  Vec3 position, normal;
  double depth = 0;  // distance from the camera
  long long patch = -1;
  int face = -1;
};

struct GBuffer {
  int width = 0, height = 0;
  std::vector<GSample> samples;  // row-major, rows from the top
  const GSample &At(int x, int y) const { return samples[size_t(y) * size_t(width) + size_t(x)]; }
};

// Whether two samples lie on the same smooth surface, as far as the filters are concerned: normals within
// about 25 degrees and depths within 5 % of each other.
bool SimilarSamples(const GSample &a, const GSample &b);

// Discontinuity buffer: each valid pixel's irradiance becomes the mean of `raw` over the pixels of its 3x3
// neighbourhood that are similar to it (itself included). `raw` and the result hold one Vec3 per pixel.
std::vector<Vec3> DiscontinuityFilter(const GBuffer &g, const std::vector<Vec3> &raw);

// The full-resolution pixel whose sample stands for low-resolution pixel (i, j) at scale `k`.
inline int LowResSource(int i, int k, int size) { return i * k + k / 2 < size ? i * k + k / 2 : size - 1; }

// Joint bilateral upsampling of `low` (lowWidth x lowHeight, computed at the samples LowResSource names) to
// every valid full-resolution pixel: bilinear weights of the 2x2 nearest low-resolution samples times the
// similarity of their normals (n.n')^32 and depths exp(-(dz / 0.05 z)^2). Pixels whose weights sum to less
// than 1e-3 (no similar sample nearby: edges, thin objects) are listed in `fallback` and left at 0, for the
// caller to compute exactly.
std::vector<Vec3> BilateralUpsample(const GBuffer &g, int k, int lowWidth, int lowHeight, const std::vector<Vec3> &low,
                                    std::vector<size_t> *fallback);

}  // namespace rad
