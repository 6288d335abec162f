// Patches: the elements of the radiosity system, made by splitting every input polygon 4^K times.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

struct Patch {
  Vec3 corners[4];      // counter-clockwise seen from the front; a triangle leaves corners[3] = corners[2]
  int cornerCount = 0;  // 3 or 4
  Vec3 centroid;
  Vec3 normal;          // unit, front side
  double area = 0;
  int face = -1;        // index into Scene::faces of the planar convex polygon it came from
  int polygon = -1;     // number of the input polygon (order of `f` lines), as written to /patches/face
  Vec3 reflectance;
  Vec3 emission;
};

// Newell's normal (not normalised: its length is twice the polygon's area). Robust for any planar polygon.
Vec3 NewellNormal(const Vec3 *corners, int count);

// The largest distance between two corners.
double PolygonDiameter(const std::vector<Vec3> &corners);

// How polygons become patches: either every polygon into 4^subdiv (a quad into n x n quads, a triangle into
// n^2 triangles, n = 2^subdiv), or each by its own extent so that no patch edge is longer than maxPatchSize
// (a quad into na x nb quads, na and nb from its two pairs of opposite edges; a triangle into n^2 triangles,
// n from its longest edge), which gives a scene of mixed scales patches of one size. `patches` asks for a
// total instead; ResolveMeshing turns it into the maxPatchSize that gives it.
struct Meshing {
  int subdiv = 0;
  double maxPatchSize = 0;  // > 0: by size (subdiv is then 0)
  // > 0: lightmap texels of this size as patches (texel_charts.h; subdiv is then 0)
  double texelSize = 0;
  // Texels: the side of a lightmap page in texels; given alone, the texel size is the one that fills one page
  // (ResolveMeshing: lightmap/atlas.h)
  int lightmapResolution = 0;
  long long patches = 0;    // > 0: an approximate total, resolved into maxPatchSize
  // Set: the patches themselves, as `run --refine` left them after `refinePasses` passes of splitting the
  // patches made as above where B varies (refinement.h); MakePatches returns them and CountPatches their count.
  std::shared_ptr<const std::vector<Patch>> refined;
  int refinePasses = 0;
  Meshing(int subdivision = 0) : subdiv(subdivision) {}  // NOLINT: a plain level converts, as before
  // "subdiv 3", "max patch size 0.25", "subdiv 2, refined twice where B varies"
  std::string Describe() const;
};

// A patch of corners[0, count) (3 or 4, planar, convex, counter-clockwise about `faceNormal`) of face `face`,
// with its area and area centroid; its normal is the face's, exactly, so that all patches of a face share it.
Patch PatchOf(const Vec3 *corners, int count, int face, const Material &material, Vec3 faceNormal);

// The four patches a patch splits into, appended to `out` in the order MakePatches gives one piece split in
// two along each side: a quad at the midpoints of its bilinear parameters, a triangle at its edges' midpoints
// (three images of it and one point reflection). Face, polygon, normal and material are the parent's.
void SplitPatch(const Patch &parent, std::vector<Patch> &out);

// The longest edge of a patch.
double LongestEdge(const Patch &p);

// `meshing` with `patches` turned into the smallest maxPatchSize whose total is at most `patches` (the totals
// of neighbouring sizes differ by a few polygons' splits, so the total is close to it). Throws InputError for
// a negative or impossible request (fewer patches than the scene has pieces).
Meshing ResolveMeshing(const Scene &scene, const Meshing &meshing);

// Splits every face as `meshing` says (n-gons, n > 4, are first fan-split into n-2 triangles from their first
// corner). Patches of one face are consecutive; the order is deterministic.
std::vector<Patch> MakePatches(const Scene &scene, const Meshing &meshing);

// Number of patches MakePatches would produce, without making them.
long long CountPatches(const Scene &scene, const Meshing &meshing);

}  // namespace rad
