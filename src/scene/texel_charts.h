// Lightmap texels as patches (texture-space radiosity, `--texel-size`): every planar input polygon gets a chart,
// a grid of texels in its own plane, and every texel the polygon covers becomes a patch, so that form factors,
// solvers, ranks and files run on texels as they run on patches, and the solution is a lightmap.
//
// A chart's axes are those of the polygon's smallest bounding rectangle among its edges' directions (a
// rectangle's texels are then whole squares), and its grid fits that rectangle exactly: ceil(extent / size)
// texels a side, each extent / count long, so no chart ends in a sliver column. A texel's patch is the part of
// the polygon inside it (the rectangle clipped by each convex face of the polygon). The physics takes patches of
// 3 or 4 corners: where the polygon's outline cuts a texel into a shape of more corners (a triangle's corner
// inside a texel: up to 7), that part is held as a fan of quads from its first corner (and a triangle when odd),
// all of the same texel; the texel's radiosity is then their area-weighted mean, which is what one patch of that
// shape would have.
#pragma once

#include <cstdint>
#include <vector>

#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

struct TexelChart {
  int polygon = 0;         // the input polygon (Face::polygon)
  std::vector<int> faces;  // its convex faces on this side (a two-sided polygon's back is its own chart)
  Vec3 origin;             // the corner of texel (0, 0): texel (a, b) spans origin + [a, a+1] du U + [b, b+1] dv V
  Vec3 axisU, axisV;       // unit, in the plane; axisU x axisV is the polygon's normal
  double du = 0, dv = 0;   // a texel's size along U and V
  int width = 0, height = 0;  // texels along U and V
};

// Which texel a patch is part of: chart, column and row.
struct TexelOf {
  int32_t chart = 0;
  int32_t x = 0, y = 0;
};

// The charts of `scene` at texel size `texelSize` (scene units), one per polygon side, in the order of their
// first face. InputError (naming the file and line) for a polygon that is not planar (one the loader mended by
// triangulation into pieces of different planes: a chart needs one plane), and for a size that gives more than
// kMaxTexels texels.
constexpr double kMaxTexels = 2147483647.0;
std::vector<TexelChart> MakeTexelCharts(const Scene &scene, double texelSize);

// The texel patches of every chart, face by face (a face's patches consecutive, its texels row by row), with the
// texel each belongs to in `texels` (may be null). Parts with less than 1e-12 of a texel's area (the polygon
// grazing a texel's corner) are left out: they carry no energy worth a patch.
void MakeTexelPatches(const Scene &scene, const std::vector<TexelChart> &charts, std::vector<Patch> *patches,
                      std::vector<TexelOf> *texels);

// A floor on that count, without clipping a texel: the charts' polygon area over their texels' area (a texel
// holds at most its own area of the polygon).
double TexelPatchFloor(const Scene &scene, const std::vector<TexelChart> &charts);

// How many patches MakeTexelPatches gives, without holding them.
long long CountTexelPatches(const Scene &scene, const std::vector<TexelChart> &charts);

}  // namespace rad
