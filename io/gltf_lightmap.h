// The lit scene for other tools: the polygons as a binary glTF 2.0 file (.glb) with two UV sets, TEXCOORD_0 the
// charts' own coordinates in scene units (for a tiled material) and TEXCOORD_1 the lightmap's, and each lightmap
// page embedded as a PNG and bound as an unlit material's base colour on UV set 1 (KHR_materials_unlit), so
// that a glTF viewer or Blender shows the baked radiosity as it is, without lighting it again. One primitive per
// page; each polygon's faces fanned into triangles, with their own corners (no shared vertices).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lightmap/atlas.h"
#include "scene/scene.h"
#include "scene/texel_charts.h"

namespace rad {

// `pagePngs`: each page as PNG bytes (sRGB, as `render` encodes them). Written to "<path>.partial" and renamed;
// InputError naming the path if it cannot be.
void WriteLightmappedGlb(const std::string &path, const Scene &scene, const std::vector<TexelChart> &charts,
                         const LightmapAtlas &atlas, const std::vector<std::vector<uint8_t>> &pagePngs);

}  // namespace rad
