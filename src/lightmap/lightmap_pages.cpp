#include "lightmap/lightmap_pages.h"

namespace rad {

LightmapPages BakeLightmaps(int pageSide, int pageCount, const std::vector<Patch> &patches,
                            const std::vector<int32_t> &pageColumnRow, const std::vector<double> &radiance) {
  LightmapPages out;
  const size_t side = size_t(pageSide), texelsPerPage = side * side;
  std::vector<std::vector<double>> sum(size_t(pageCount), std::vector<double>(3 * texelsPerPage, 0.0));
  std::vector<std::vector<double>> area(size_t(pageCount), std::vector<double>(texelsPerPage, 0.0));
  for (size_t i = 0; i < patches.size(); ++i) {
    const int32_t page = pageColumnRow[3 * i], x = pageColumnRow[3 * i + 1], y = pageColumnRow[3 * i + 2];
    const size_t at = size_t(y) * side + size_t(x);
    area[size_t(page)][at] += patches[i].area;
    for (size_t c = 0; c < 3; ++c) sum[size_t(page)][3 * at + c] += patches[i].area * radiance[3 * i + c];
  }
  for (size_t p = 0; p < size_t(pageCount); ++p) {
    Image image;
    image.width = image.height = pageSide;
    image.rgb.assign(3 * texelsPerPage, 0.0f);
    std::vector<uint8_t> covered(texelsPerPage, 0);
    for (size_t t = 0; t < texelsPerPage; ++t) {
      if (!(area[p][t] > 0)) continue;
      covered[t] = 1;
      for (size_t c = 0; c < 3; ++c) image.rgb[3 * t + c] = float(sum[p][3 * t + c] / area[p][t]);
    }
    out.pages.push_back(std::move(image));
    out.covered.push_back(std::move(covered));
  }
  return out;
}

void DilateIntoGutters(LightmapPages &lightmaps, int passes) {
  for (size_t p = 0; p < lightmaps.pages.size(); ++p) {
    Image &image = lightmaps.pages[p];
    std::vector<uint8_t> filled = lightmaps.covered[p];
    const int w = image.width, h = image.height;
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<uint8_t> next = filled;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          if (filled[size_t(y) * size_t(w) + size_t(x)]) continue;
          double mean[3] = {0, 0, 0};
          int count = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int nx = x + dx, ny = y + dy;
              if (nx < 0 || ny < 0 || nx >= w || ny >= h || !filled[size_t(ny) * size_t(w) + size_t(nx)]) continue;
              for (int c = 0; c < 3; ++c) mean[c] += image.At(nx, ny, c);
              ++count;
            }
          if (count == 0) continue;
          for (int c = 0; c < 3; ++c) image.At(x, y, c) = float(mean[c] / count);
          next[size_t(y) * size_t(w) + size_t(x)] = 1;
        }
      filled.swap(next);
    }
  }
}

LightmapShading MakeLightmapShading(int side, int pages, const std::vector<Patch> &patches,
                                    const std::vector<int32_t> &pageColumnRow, const std::vector<float> &uv,
                                    const std::vector<double> &radiance) {
  LightmapPages baked = BakeLightmaps(side, pages, patches, pageColumnRow, radiance);
  DilateIntoGutters(baked, kGutter);
  LightmapShading shading;
  shading.side = side, shading.pages = pages;
  shading.uv = uv;
  shading.page.resize(patches.size());
  for (size_t i = 0; i < patches.size(); ++i) shading.page[i] = pageColumnRow[3 * i];
  for (const Image &image : baked.pages) shading.texels.insert(shading.texels.end(), image.rgb.begin(), image.rgb.end());
  return shading;
}

}  // namespace rad
