// Groups of patches, for what engineers sum over surfaces: by input polygon (/patches/face) or by material of the
// scene. View factors between groups (`export --format groups|energyplus`) and heat rates per material
// (`thermal`) are sums over them.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

enum class PatchGrouping { kPolygon, kMaterial };
PatchGrouping ParsePatchGrouping(const std::string &name);  // "polygon" | "material"; InputError otherwise

// The scene material of each patch, through the input polygon it came from. InputError naming `input` for a
// patch whose polygon the scene does not have (F of another scene).
std::vector<int> MaterialOfPatches(const Scene &scene, const std::vector<Patch> &patches, const std::string &input);

struct PatchGroups {
  std::vector<std::string> names;  // "polygon 12", or the material's name
  std::vector<int> ofPatch;        // index into names
  std::vector<double> area;        // per group
};
// By polygon (the groups in the order of their polygon numbers) or by material (in the scene's order; `scene`
// is then needed). Groups without patches are left out.
PatchGroups GroupPatches(PatchGrouping grouping, const std::vector<Patch> &patches, const Scene *scene,
                         const std::string &input);

// Collective: the view factors between groups, K x K row-major on every rank: G[a][b] = sum over a's patches i of
// A_i sum over b's patches j of F_ij, over A_a (the area-weighted mean of a's rows over b's columns), from each
// rank's rows of F (their entries: far links are not read). Reciprocity holds: A_a G_ab = A_b G_ba. The sums are
// exact to about 1e-18 of the scene's area and the same bits for any rank and thread count.
std::vector<double> GroupViewFactors(MPI_Comm comm, const FormFactorRows &f, const std::vector<Patch> &patches,
                                     const PatchGroups &groups);

}  // namespace rad
