// `run` on lightmap texels (--texel-size, --lightmap-resolution): the solution baked into lightmap pages and the
// lit scene, written beside radiosity.h5: lightmap_<page>.exr (linear radiance, the texels alone), 
// lightmap_<page>.png (sRGB after --exposure, gutters dilated for display) and scene.glb (lightmap bound on a
// second UV set, io/gltf_lightmap.h); and each patch's texel in radiosity.h5 (/lightmap).
#pragma once

#include <string>
#include <vector>

#include "io/radiosity_file.h"
#include "lightmap/atlas.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "scene/texel_charts.h"

namespace rad {

// The charts, atlas and each patch's texel of a texel meshing, made again the way MakePatches made the patches.
struct LightmapLayout {
  std::vector<TexelChart> charts;
  LightmapAtlas atlas;
  std::vector<TexelOf> texels;  // per patch
  std::vector<int32_t> pageColumnRow;  // per patch: its texel's page, column and row
  std::vector<float> uv;               // per patch: its corners' page coordinates in texels (8 floats)
  double texelSize = 0;
  explicit LightmapLayout(const Scene &scene, const Meshing &meshing, size_t patchCount);
  Attributes Describe() const;  // the /lightmap group's attributes
};

// Collective: /lightmap/texel, /lightmap/uv and their attributes.
void WriteLightmapTexels(RadiosityFileWriter &writer, const LightmapLayout &layout);

// Rank 0 writes the pages and the scene into `dir`; returns the file names written (for the closing line).
std::vector<std::string> WriteLightmapFiles(const std::string &dir, const Scene &scene, const LightmapLayout &layout,
                                            const std::vector<Patch> &patches, const std::vector<double> &radiance,
                                            double exposure);

}  // namespace rad
