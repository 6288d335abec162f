// What one pixel sample of a radiosity image does, written once (RAD_HD) for the CPU renderer (Embree rays)
// and the GPU renderer (the project's BVH): where the sample falls in the pixel, the camera ray through it, and
// the radiance shown where that ray hits a patch.
#pragma once

#include <cmath>
#include <cstdint>

#include "render/camera.h"
#include "scene/patch.h"
#include "util/hd.h"
#include "util/rng.h"

namespace rad {

// Third Philox counter word of every pixel sample: keeps the renderer's numbers apart from those of the form
// factors when both use the same seed.
constexpr uint32_t kRenderStream = 0x52454E44u;  // "REND"

// The camera's basis, computed once per image (host), used per sample (host or device).
struct CameraFrame {
  Vec3 position, forward, right, up;
  double tanX = 0, tanY = 0;
  int width = 0, height = 0;
};

CameraFrame MakeCameraFrame(const Camera &camera);

// The ray through image point (px, py) in pixels from the top-left corner.
RAD_HD RAD_INLINE CameraRay FrameRay(const CameraFrame &f, double px, double py) {
  const double sx = 2 * px / f.width - 1;   // -1 at the left border, +1 at the right
  const double sy = 1 - 2 * py / f.height;  // +1 at the top border: image rows run downwards
  return {f.position, Normalize(f.forward + f.right * (sx * f.tanX) + f.up * (sy * f.tanY))};
}

// Base-2 radical inverse of i (van der Corput): the second coordinate of a Hammersley point set.
RAD_HD RAD_INLINE double RadicalInverse2(uint32_t i) {
  i = (i << 16) | (i >> 16);
  i = ((i & 0x00FF00FFu) << 8) | ((i & 0xFF00FF00u) >> 8);
  i = ((i & 0x0F0F0F0Fu) << 4) | ((i & 0xF0F0F0F0u) >> 4);
  i = ((i & 0x33333333u) << 2) | ((i & 0xCCCCCCCCu) >> 2);
  i = ((i & 0x55555555u) << 1) | ((i & 0xAAAAAAAAu) >> 1);
  return ToUnit(i);
}

// Where sample `s` of a pixel falls inside it, in [0,1)^2. A square sample count gets jittered strata (one
// random point in each cell of an m x m grid); any other count a Hammersley set shifted by one random offset
// per pixel (Cranley-Patterson rotation). The numbers depend only on (seed, pixel, sample); `stream` keeps
// those of other users (e.g. the path tracer) apart from the renderer's.
RAD_HD RAD_INLINE void SampleOffset(uint64_t seed, uint64_t pixel, int s, int samples, int strata, double &dx,
                                    double &dy, uint32_t stream = kRenderStream) {
  const uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  const uint32_t p0 = uint32_t(pixel), p1 = uint32_t(pixel >> 32);
  if (strata * strata == samples) {
    const Philox4x32 r = Philox(p0, p1, uint32_t(s), stream, k0, k1);
    dx = (s % strata + ToUnit(r.v[0])) / strata;
    dy = (s / strata + ToUnit(r.v[1])) / strata;
  } else {
    const Philox4x32 r = Philox(p0, p1, 0, stream, k0, k1);
    const double x = (s + 0.5) / samples + ToUnit(r.v[0]), y = RadicalInverse2(uint32_t(s)) + ToUnit(r.v[1]);
    dx = x - floor(x);
    dy = y - floor(y);
  }
}

// The mean radiance of pixel (x, y) over `samples` jittered camera rays: the one pixel loop of the radiosity
// renderers. `trace(ray, value)` shades one ray into value[3] (Embree on the CPU, the project's BVH on the GPU).
template <typename Trace>
RAD_HD RAD_INLINE void AveragePixel(const CameraFrame &frame, uint64_t seed, int samples, int strata, int x, int y,
                                    Trace &&trace, float rgb[3]) {
  const uint64_t pixel = uint64_t(y) * uint64_t(frame.width) + uint64_t(x);
  double sum[3] = {0, 0, 0};
  for (int s = 0; s < samples; ++s) {
    double dx, dy, value[3] = {0, 0, 0};
    SampleOffset(seed, pixel, s, samples, strata, dx, dy);
    trace(FrameRay(frame, x + dx, y + dy), value);
    for (int c = 0; c < 3; ++c) sum[c] += value[c];
  }
  for (int c = 0; c < 3; ++c) rgb[c] = float(sum[c] / samples);
}

// The solution as the shading reads it: per patch (flat), or per corner vertex (smooth; null arrays = flat).
struct ShadingView {
  const Patch *patches = nullptr;
  const double *radiance = nullptr;        // 3 per patch
  const int *patchCorners = nullptr;       // 4 per patch (smooth mesh)
  const int *cornerCount = nullptr;        // per patch (smooth mesh)
  const double *vertexRadiance = nullptr;  // 3 per vertex (smooth mesh)
  // Lightmap shading (null: none): per patch its page and its corners' page coordinates in texels (8 floats,
  // texel (x, y) spanning [x, x + 1] x [y, y + 1]), and the pages' texels, 3 floats each, page after page of
  // lightmapSide^2, dilated into their gutters (lightmap/lightmap_pages.h): read with bilinear filtering.
  const int32_t *lightmapPage = nullptr;
  const float *lightmapUv = nullptr;
  const float *lightmapTexels = nullptr;
  int lightmapSide = 0;
};

// The page's texels at page coordinates (s, t) in texels, bilinear between the four nearest texel centres
// (clamped at the page's edges).
RAD_HD RAD_INLINE void SampleLightmap(const ShadingView &v, int32_t page, double s, double t, double out[3]) {
  const int side = v.lightmapSide;
  const double x = s - 0.5, y = t - 0.5;
  const double fx = x - floor(x), fy = y - floor(y);
  const int x0 = int(floor(x)), y0 = int(floor(y));
  const float *texels = v.lightmapTexels + size_t(page) * size_t(side) * size_t(side) * 3;
  for (int c = 0; c < 3; ++c) out[c] = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int xi = x0 + dx < 0 ? 0 : (x0 + dx >= side ? side - 1 : x0 + dx);
      const int yi = y0 + dy < 0 ? 0 : (y0 + dy >= side ? side - 1 : y0 + dy);
      const double w = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy);
      for (int c = 0; c < 3; ++c) out[c] += w * texels[(size_t(yi) * size_t(side) + size_t(xi)) * 3 + size_t(c)];
    }
}

// Radiance seen along `direction` where it hits `patch` at quad coordinates (u, v): Embree's parametrisation of
// a quad (v0 at (0,0), v1 at (1,0), v2 at (1,1), v3 at (0,1)); for a triangle, barycentrics of (v1, v2).
// Back sides show 0: which side is the front is this project's convention (CCW), from our own normal.
RAD_HD RAD_INLINE void ShadeHit(const ShadingView &s, Vec3 direction, long long patch, double u, double v,
                                double out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (!(Dot(direction, s.patches[patch].normal) < 0)) return;
  if (!s.vertexRadiance && !s.lightmapTexels) {
    for (int c = 0; c < 3; ++c) out[c] = s.radiance[3 * patch + c];
    return;
  }
  double w[4];
  if ((s.cornerCount ? s.cornerCount[patch] : s.patches[patch].cornerCount) == 3) {
    w[0] = 1 - u - v, w[1] = u, w[2] = v, w[3] = 0;
  } else {
    w[0] = (1 - u) * (1 - v), w[1] = u * (1 - v), w[2] = u * v, w[3] = (1 - u) * v;
  }
  if (s.lightmapTexels) {  // the hit's place on the page, interpolated as the point is between the corners
    double at[2] = {0, 0};
    for (int k = 0; k < 4; ++k)
      for (int a = 0; a < 2; ++a) at[a] += w[k] * s.lightmapUv[8 * patch + 2 * k + a];
    SampleLightmap(s, s.lightmapPage[patch], at[0], at[1], out);
    return;
  }
  for (int k = 0; k < 4; ++k) {
    const long long vertex = s.patchCorners[4 * patch + k];
    for (int c = 0; c < 3; ++c) out[c] += w[k] * s.vertexRadiance[3 * vertex + c];
  }
}

}  // namespace rad
