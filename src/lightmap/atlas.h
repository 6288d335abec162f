// Texel charts (scene/texel_charts.h) packed into the square pages of a lightmap atlas (stb_rect_pack's skyline
// packer), each chart framed by a gutter of kGutter texels on every side, so that bilinear filtering at a
// chart's edge reads the chart's own values once the gutter is dilated (lightmap_pages.h).
//
// A texel's place in a page is its image pixel: column x right, row y down from the top, the way PNG and EXR
// rows and glTF's texture coordinates run (UV (0, 0) is the top left corner). Chart texel (a, b) is page pixel
// (x + kGutter + a, y + kGutter + b) of its chart's placement (x, y).
#pragma once

#include <cstdint>
#include <vector>

#include "scene/scene.h"
#include "scene/texel_charts.h"

namespace rad {

constexpr int kGutter = 2;
constexpr int kDefaultLightmapPage = 1024;  // a page's side in texels when only --texel-size is given

struct LightmapAtlas {
  int pageSize = 0;   // texels a side
  int pageCount = 0;
  struct Placement {
    int32_t page = 0;
    int32_t x = 0, y = 0;  // the top left corner of the chart's frame (its gutter included)
  };
  std::vector<Placement> placed;  // per chart
  long long usedTexels = 0;       // charts' texels, gutters not included
  // The page pixel of chart texel (a, b).
  void Pixel(int32_t chart, int32_t a, int32_t b, int32_t &page, int32_t &x, int32_t &y) const {
    const Placement &p = placed[size_t(chart)];
    page = p.page, x = p.x + kGutter + a, y = p.y + kGutter + b;
  }
  // Where point `at` of chart `chart` (`c`) lies on its page, in texels: (s, t), texel (x, y) spanning
  // [x, x + 1] x [y, y + 1]. Divided by the page's side, the lightmap UV.
  void PageCoordinates(int32_t chart, const TexelChart &c, Vec3 at, double &s, double &t) const {
    const Placement &p = placed[size_t(chart)];
    s = p.x + kGutter + Dot(at - c.origin, c.axisU) / c.du;
    t = p.y + kGutter + Dot(at - c.origin, c.axisV) / c.dv;
  }
};

// Every chart on as few pages of `pageSize` as the packer finds, filling each page before the next (charts in
// their order, the packer sorting them by height). InputError when a chart with its gutter is larger than a page
// (naming the polygon, its texels and what would hold it).
LightmapAtlas PackCharts(const Scene &scene, const std::vector<TexelChart> &charts, int pageSize);

// The smallest texel size whose charts pack into one page of `pageSize` (bisected to 1e-4 of the size): what
// `--lightmap-resolution` alone asks. InputError when even the largest texels do not fit (more charts than a
// page holds at one texel each).
double TexelSizeForOnePage(const Scene &scene, int pageSize);

}  // namespace rad
