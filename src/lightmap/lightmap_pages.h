// The radiosity solution baked into lightmap pages: each texel the area-weighted mean of its patches' B (the
// radiosity of the texel's whole part of its polygon), as linear radiance, with the texels no polygon covers
// filled from their neighbours for display only (the gutters, so that bilinear filtering at a chart's edge does
// not darken it: the remedy for dark seams of Tjahyono, Lutteroth and Wuensche).
#pragma once

#include <cstdint>
#include <vector>

#include "lightmap/atlas.h"
#include "render/image.h"
#include "scene/patch.h"
#include "scene/texel_charts.h"

namespace rad {

struct LightmapPages {
  std::vector<Image> pages;                   // linear radiance, rows from the top
  std::vector<std::vector<uint8_t>> covered;  // per page, per texel: 1 where a patch lies
};

// `pages` pages of side x side texels; `pageColumnRow`: each patch's page, column and row (3 per patch);
// `radiance`: B, 3 per patch. Texels without a patch are 0.
LightmapPages BakeLightmaps(int side, int pages, const std::vector<Patch> &patches,
                            const std::vector<int32_t> &pageColumnRow, const std::vector<double> &radiance);

// `passes` times, every empty texel with a filled one among its 8 neighbours takes their mean and counts as
// filled for the next pass: a gutter of kGutter texels is filled in kGutter passes. The covered texels keep
// their values.
void DilateIntoGutters(LightmapPages &lightmaps, int passes);

// What the renderers need to draw from the lightmaps (ShadingView, render/pixel_kernels.h): per patch its page
// and its corners' page coordinates (8 floats, in texels), and the pages baked and dilated, texel after texel.
struct LightmapShading {
  int side = 0, pages = 0;
  std::vector<int32_t> page;
  std::vector<float> uv;
  std::vector<float> texels;
};

// The pages of `radiance` baked (BakeLightmaps) and dilated kGutter texels, with what the shading reads.
LightmapShading MakeLightmapShading(int side, int pages, const std::vector<Patch> &patches,
                                    const std::vector<int32_t> &pageColumnRow, const std::vector<float> &uv,
                                    const std::vector<double> &radiance);

}  // namespace rad
