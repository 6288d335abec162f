// Lightmap atlas and pages (lightmap/atlas.h, lightmap/lightmap_pages.h): charts packed without overlap inside
// their pages, texels baked as the area-weighted mean of their patches, gutters filled without touching texels.
#include <gtest/gtest.h>

#include "lightmap/atlas.h"
#include "lightmap/lightmap_pages.h"
#include "tests/test_scenes.h"
#include "util/error.h"

namespace rad {
namespace {

// `count` squares of side 1 + k / count in a row, each its own polygon.
Scene Squares(int count) {
  std::vector<std::vector<Vec3>> polygons;
  for (int k = 0; k < count; ++k) {
    const double x = 3.0 * k, side = 1.0 + double(k) / count;
    polygons.push_back(test::RectZ(x, x + side, 0, side, 0, true));
  }
  Scene s = test::SceneOf(polygons);
  for (size_t f = 0; f < s.faces.size(); ++f) s.faces[f].polygon = int(f);
  return s;
}

TEST(LightmapAtlas, ChartsArePackedWithoutOverlapInsideTheirPages) {
  const Scene s = Squares(40);
  const std::vector<TexelChart> charts = MakeTexelCharts(s, 0.1);
  const LightmapAtlas atlas = PackCharts(s, charts, 64);
  ASSERT_GT(atlas.pageCount, 1);  // 40 charts of 12 to 24 texels a side with gutters: more than a page of 64
  std::vector<std::vector<int>> owner(size_t(atlas.pageCount), std::vector<int>(64 * 64, -1));
  for (size_t c = 0; c < charts.size(); ++c) {
    const LightmapAtlas::Placement &p = atlas.placed[c];
    ASSERT_LT(p.page, atlas.pageCount);
    for (int y = p.y; y < p.y + charts[c].height + 2 * kGutter; ++y)
      for (int x = p.x; x < p.x + charts[c].width + 2 * kGutter; ++x) {
        ASSERT_TRUE(x >= 0 && x < 64 && y >= 0 && y < 64) << "chart " << c << " leaves its page";
        int &o = owner[size_t(p.page)][size_t(y * 64 + x)];
        EXPECT_EQ(o, -1) << "charts " << o << " and " << c << " overlap";
        o = int(c);
      }
  }
}

TEST(LightmapAtlas, AChartLargerThanAPageIsRefused) {
  const Scene s = Squares(1);
  EXPECT_THROW(PackCharts(s, MakeTexelCharts(s, 0.01), 64), InputError);  // 100 texels a side
  EXPECT_NO_THROW(PackCharts(s, MakeTexelCharts(s, 0.02), 64));          // 50 and its gutters
}

TEST(LightmapAtlas, ResolutionAloneFillsOnePage) {
  const Scene s = Squares(10);
  const double size = TexelSizeForOnePage(s, 128);
  const std::vector<TexelChart> charts = MakeTexelCharts(s, size);
  const LightmapAtlas atlas = PackCharts(s, charts, 128);
  EXPECT_EQ(atlas.pageCount, 1);
  // The bisection takes texels as small as one page allows: more than a third of it is texels, not gutter
  // or empty (the squares' own area is at most (128 / 10)^2 texels each).
  EXPECT_GT(double(atlas.usedTexels), 128.0 * 128.0 / 3);
  EXPECT_LE(atlas.usedTexels, 128 * 128);
  EXPECT_THROW(TexelSizeForOnePage(Squares(200), 16), InputError);  // 200 charts of 5 x 5 with gutters
}

TEST(LightmapPages, ATexelIsItsPatchesAreaWeightedMeanAndGuttersAreFilledForDisplay) {
  std::vector<Patch> patches(3);
  patches[0].area = 1, patches[1].area = 3, patches[2].area = 2;
  const std::vector<int32_t> pageColumnRow = {0, 2, 2, 0, 2, 2, 0, 3, 2};  // two patches of texel (2, 2), one of (3, 2)
  const std::vector<double> radiance = {4, 4, 4, 8, 0, 8, 1, 2, 3};
  LightmapPages pages = BakeLightmaps(8, 1, patches, pageColumnRow, radiance);
  ASSERT_EQ(pages.pages.size(), 1u);
  const Image &image = pages.pages[0];
  EXPECT_FLOAT_EQ(image.At(2, 2, 0), (1 * 4 + 3 * 8) / 4.0f);
  EXPECT_FLOAT_EQ(image.At(2, 2, 1), (1 * 4 + 3 * 0) / 4.0f);
  EXPECT_FLOAT_EQ(image.At(3, 2, 2), 3.0f);
  EXPECT_EQ(image.At(1, 2, 0), 0.0f);  // a gutter texel, not yet dilated
  DilateIntoGutters(pages, kGutter);
  const Image &shown = pages.pages[0];
  EXPECT_FLOAT_EQ(shown.At(2, 2, 0), 7.0f);  // texels keep their values
  EXPECT_FLOAT_EQ(shown.At(1, 2, 0), 7.0f);  // its only filled neighbour is (2, 2)
  EXPECT_FLOAT_EQ(shown.At(4, 2, 2), 3.0f);  // next to (3, 2) alone
  EXPECT_FLOAT_EQ(shown.At(2, 1, 0), (7.0f + 1.0f) / 2);  // above (2, 2) and (3, 2)
  EXPECT_GT(shown.At(0, 2, 0), 0.0f);  // two passes reach two texels out
  EXPECT_EQ(shown.At(7, 7, 0), 0.0f);  // beyond the gutter, nothing
}

}  // namespace
}  // namespace rad
