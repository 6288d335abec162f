#include "pipeline/lightmap_stage.h"

#include <filesystem>

#include "io/gltf_lightmap.h"
#include "io/image_io.h"
#include "lightmap/lightmap_pages.h"
#include "util/error.h"

namespace rad {

LightmapLayout::LightmapLayout(const Scene &scene, const Meshing &meshing, size_t patchCount)
    : charts(MakeTexelCharts(scene, meshing.texelSize)),
      atlas(PackCharts(scene, charts, meshing.lightmapResolution)),
      texelSize(meshing.texelSize) {
  std::vector<Patch> patches;
  MakeTexelPatches(scene, charts, &patches, &texels);
  RAD_CHECK(texels.size() == patchCount, "the lightmap's texels are not the job's patches");
  pageColumnRow.resize(3 * texels.size());
  uv.resize(8 * texels.size());
  for (size_t i = 0; i < texels.size(); ++i) {
    const TexelChart &chart = charts[size_t(texels[i].chart)];
    atlas.Pixel(texels[i].chart, texels[i].x, texels[i].y, pageColumnRow[3 * i], pageColumnRow[3 * i + 1],
                pageColumnRow[3 * i + 2]);
    for (int k = 0; k < 4; ++k) {
      double s, t;
      atlas.PageCoordinates(texels[i].chart, chart, patches[i].corners[k], s, t);
      uv[8 * i + 2 * size_t(k)] = float(s);
      uv[8 * i + 2 * size_t(k) + 1] = float(t);
    }
  }
}

Attributes LightmapLayout::Describe() const {
  Attributes a;
  a.numbers["resolution"] = atlas.pageSize;
  a.numbers["pages"] = atlas.pageCount;
  a.numbers["texel_size"] = texelSize;
  a.numbers["gutter"] = kGutter;
  a.numbers["charts"] = double(charts.size());
  a.numbers["texels"] = double(atlas.usedTexels);
  return a;
}

void WriteLightmapTexels(RadiosityFileWriter &writer, const LightmapLayout &layout) {
  writer.WriteLightmapTexels(layout.pageColumnRow, layout.uv, layout.Describe());
}

std::vector<std::string> WriteLightmapFiles(const std::string &dir, const Scene &scene, const LightmapLayout &layout,
                                            const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                            double exposure) {
  std::vector<std::string> written;
  LightmapPages lightmaps =
      BakeLightmaps(layout.atlas.pageSize, layout.atlas.pageCount, patches, layout.pageColumnRow, radiance);
  auto in = [&](const std::string &name) { return (std::filesystem::path(dir) / name).string(); };
  for (size_t p = 0; p < lightmaps.pages.size(); ++p) {  // linear texels first, undilated: the data
    written.push_back("lightmap_" + std::to_string(p) + ".exr");
    WriteExr(in(written.back()), lightmaps.pages[p]);
  }
  DilateIntoGutters(lightmaps, kGutter);
  std::vector<std::vector<uint8_t>> pngs;
  for (size_t p = 0; p < lightmaps.pages.size(); ++p) {
    pngs.push_back(EncodePng(lightmaps.pages[p], exposure));
    written.push_back("lightmap_" + std::to_string(p) + ".png");
    WriteFileAtomically(in(written.back()), std::string(pngs.back().begin(), pngs.back().end()), "PNG image");
  }
  written.push_back("scene.glb");
  WriteLightmappedGlb(in(written.back()), scene, layout.charts, layout.atlas, pngs);
  return written;
}

}  // namespace rad
