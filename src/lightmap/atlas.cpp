#include "lightmap/atlas.h"

#include <stb_rect_pack.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace rad {

namespace {

// The charts that are not yet placed, packed into one new page; returns those left for the next.
std::vector<int32_t> PackPage(const std::vector<TexelChart> &charts, const std::vector<int32_t> &left,
                              LightmapAtlas &atlas) {
  std::vector<stbrp_node> nodes(size_t(atlas.pageSize));
  stbrp_context context;
  stbrp_init_target(&context, atlas.pageSize, atlas.pageSize, nodes.data(), int(nodes.size()));
  std::vector<stbrp_rect> rects(left.size());
  for (size_t k = 0; k < left.size(); ++k) {
    const TexelChart &chart = charts[size_t(left[k])];
    rects[k].id = int(k);
    rects[k].w = chart.width + 2 * kGutter;
    rects[k].h = chart.height + 2 * kGutter;
  }
  stbrp_pack_rects(&context, rects.data(), int(rects.size()));
  std::vector<int32_t> still;
  for (const stbrp_rect &r : rects) {
    if (!r.was_packed) {
      still.push_back(left[size_t(r.id)]);
      continue;
    }
    atlas.placed[size_t(left[size_t(r.id)])] = {atlas.pageCount, int32_t(r.x), int32_t(r.y)};
  }
  std::sort(still.begin(), still.end());  // in chart order again, whatever order the packer left them in
  ++atlas.pageCount;
  return still;
}

}  // namespace

LightmapAtlas PackCharts(const Scene &scene, const std::vector<TexelChart> &charts, int pageSize) {
  LightmapAtlas atlas;
  atlas.pageSize = pageSize;
  atlas.placed.resize(charts.size());
  std::vector<int32_t> left;
  for (size_t c = 0; c < charts.size(); ++c) {
    const TexelChart &chart = charts[c];
    if (chart.width + 2 * kGutter > pageSize || chart.height + 2 * kGutter > pageSize)
      throw InputError(scene.path + ": polygon " + std::to_string(chart.polygon) + " needs " +
                       std::to_string(chart.width) + " x " + std::to_string(chart.height) + " texels and a gutter of " +
                       std::to_string(kGutter) + ", more than a lightmap page of " + std::to_string(pageSize) +
                       " x " + std::to_string(pageSize) + ": take a larger --lightmap-resolution or --texel-size");
    atlas.usedTexels += (long long)chart.width * chart.height;
    left.push_back(int32_t(c));
  }
  while (!left.empty()) left = PackPage(charts, left, atlas);
  return atlas;
}

double TexelSizeForOnePage(const Scene &scene, int pageSize) {
  // The largest texels: one per chart, as long as its polygon's longer side.
  double area = 0, extent = 0;
  for (const TexelChart &chart : MakeTexelCharts(scene, 1e300)) {
    extent = std::max({extent, chart.du * chart.width, chart.dv * chart.height});
    for (int f : chart.faces) {
      const Face &face = scene.faces[size_t(f)];
      area += 0.5 * Length(NewellNormal(face.corners.data(), int(face.corners.size())));
    }
  }
  auto fits = [&](double size) {
    try {
      return PackCharts(scene, MakeTexelCharts(scene, size), pageSize).pageCount == 1;
    } catch (const InputError &) {  // a chart larger than the page, or more texels than a scene may have
      return false;
    }
  };
  double hi = extent * (1 + 1e-9);
  if (!fits(hi))
    throw InputError(scene.path + ": its polygons do not fit one lightmap page of " + std::to_string(pageSize) +
                     " x " + std::to_string(pageSize) + " even at one texel each (with a gutter of " +
                     std::to_string(kGutter) + "): take a larger --lightmap-resolution, or give --texel-size for "
                     "several pages");
  // Smaller than this, the texels would cover more than a page even without gutters.
  double lo = std::sqrt(area) / pageSize;
  while (hi / lo > 1 + 1e-4) {
    const double mid = std::sqrt(lo * hi);
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace rad
