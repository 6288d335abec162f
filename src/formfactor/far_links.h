// The hierarchical operator's far links (form_factor_rows.h, FarLinks) outside the solve: the nodes' areas (the
// means' denominators) and the links spread into plain CSR entries. The solvers read them through
// solver/sparse_transport.h, on the CPU and on the GPU.
#pragma once

#include <vector>

#include "formfactor/form_factor_rows.h"

namespace rad {

// Per node of links.tree, the sum of links.area over its patches (the means' denominators).
std::vector<double> NodeAreas(const FarLinks &links);

// Per local row of f (CSR with far links), the entries it would hold with its far links spread over their
// targets' patches: at most its stored entries plus the patches of each link's target (an upper bound: a link
// may land on columns already stored).
std::vector<long long> ExpandedEntryBounds(const FormFactorRows &f);

// f (CSR with far links, float64) as plain CSR: each link's value spread over its target's patches in
// proportion to their areas (the share of B the solver gives it) and added to the row's entries, so that the
// expanded row acts on any B as row and links do on the area-weighted means; links cleared. Columns ascending;
// each row's values summed in a fixed order (entries, then links in order), whatever the ranks.
void ExpandFarLinks(FormFactorRows &f);

}  // namespace rad
