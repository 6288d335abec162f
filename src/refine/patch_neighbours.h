// Which patches lie next to which: the neighbours that adaptive refinement (refinement.h) compares B across.
#pragma once

#include <cstdint>
#include <vector>

#include "scene/patch.h"

namespace rad {

// Per patch, the patches that touch it (share an edge, part of one, or a corner) in the same plane with the
// same material, in increasing index order. Across a crease (a wall meeting the floor) or a change of material,
// B jumps whatever the patch size, so those are no neighbours. Found with the patch tree (patch_tree.h), so the
// cost grows as N log N.
std::vector<std::vector<int32_t>> PatchNeighbours(const std::vector<Patch> &patches);

// Whether patches a and b touch: some corner of one lies within `tolerance` of the other's boundary. For
// patches that tile a plane without overlapping, that is sharing an edge, part of one (a T-junction, where one
// was split and the other not), or a corner.
bool PatchesTouch(const Patch &a, const Patch &b, double tolerance);

}  // namespace rad
