#include "vpl/vpl_filters.h"

#include <algorithm>
#include <cmath>

namespace rad {

bool SimilarSamples(const GSample &a, const GSample &b) {
  return a.valid && b.valid && Dot(a.normal, b.normal) > 0.9 &&
         std::fabs(a.depth - b.depth) < 0.05 * std::max(a.depth, b.depth);
}

std::vector<Vec3> DiscontinuityFilter(const GBuffer &g, const std::vector<Vec3> &raw) {
  std::vector<Vec3> out(raw.size(), Vec3(0, 0, 0));
  for (int y = 0; y < g.height; ++y)
    for (int x = 0; x < g.width; ++x) {
      const GSample &s = g.At(x, y);
      if (!s.valid) continue;
      Vec3 sum(0, 0, 0);
      int count = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int qx = x + dx, qy = y + dy;
          if (qx < 0 || qy < 0 || qx >= g.width || qy >= g.height) continue;
          if ((dx != 0 || dy != 0) && !SimilarSamples(s, g.At(qx, qy))) continue;
          sum += raw[size_t(qy) * size_t(g.width) + size_t(qx)];
          ++count;
        }
      out[size_t(y) * size_t(g.width) + size_t(x)] = sum / double(count);
    }
  return out;
}

std::vector<Vec3> BilateralUpsample(const GBuffer &g, int k, int lowWidth, int lowHeight, const std::vector<Vec3> &low,
                                    std::vector<size_t> *fallback) {
  std::vector<Vec3> out(size_t(g.width) * size_t(g.height), Vec3(0, 0, 0));
  fallback->clear();
  for (int y = 0; y < g.height; ++y)
    for (int x = 0; x < g.width; ++x) {
      const GSample &s = g.At(x, y);
      if (!s.valid) continue;
      // The low-resolution samples sit at full-resolution pixels i*k + k/2: the two columns and rows around x, y.
      const int i0 = std::clamp((x - k / 2) >= 0 ? (x - k / 2) / k : -1, 0, lowWidth - 1);
      const int j0 = std::clamp((y - k / 2) >= 0 ? (y - k / 2) / k : -1, 0, lowHeight - 1);
      Vec3 sum(0, 0, 0);
      double total = 0;
      for (int j = j0; j <= std::min(j0 + 1, lowHeight - 1); ++j)
        for (int i = i0; i <= std::min(i0 + 1, lowWidth - 1); ++i) {
          const int sx = LowResSource(i, k, g.width), sy = LowResSource(j, k, g.height);
          const GSample &q = g.At(sx, sy);
          if (!q.valid) continue;
          const double wx = std::max(0.0, 1.0 - std::fabs(double(x - sx)) / k);
          const double wy = std::max(0.0, 1.0 - std::fabs(double(y - sy)) / k);
          const double c = std::max(0.0, Dot(s.normal, q.normal));
          const double dz = (s.depth - q.depth) / (0.05 * s.depth);
          const double w = wx * wy * std::pow(c, 32.0) * std::exp(-dz * dz);
          sum += low[size_t(j) * size_t(lowWidth) + size_t(i)] * w;
          total += w;
        }
      if (total < 1e-3) {
        fallback->push_back(size_t(y) * size_t(g.width) + size_t(x));
        continue;
      }
      out[size_t(y) * size_t(g.width) + size_t(x)] = sum / total;
    }
  return out;
}

}  // namespace rad
