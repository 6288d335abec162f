// The hierarchical operator's far links in the project's HDF5 file, beside its CSR entries (CONTRACTS.md):
//   /formfactors/link_ptr    int64 [N+1]  row i's links are link_ptr[i] .. link_ptr[i+1]-1
//   /formfactors/link_target int32 [L]    >= 0: a node of the patch tree BuildPatchTree makes of /patches
//                                         (median splits, leaves of 8); < 0: patch -(t+1)
//   /formfactors/link_value  float64 [L]  the estimated sum of the row's F over the target's patches
// and the attributes far_links (L) and tree_nodes; and the links held by elements of the polygons (element_links.h):
//   /formfactors/element_link_ptr    int64 [E+1]  element e's links (e a node of the ElementForest that
//                                                 BuildElementForest makes of /patches, E its node count)
//   /formfactors/element_link_target int32 [K]    a node of the patch tree
//   /formfactors/element_link_value  float64 [K]  the link's estimate at the element's area-weighted centre
//   /formfactors/element_link_gradient  float64 [2K] its derivatives along the element's axes u, v
//   /formfactors/element_link_curvature float64 [3K] its second derivatives uu, uv, vv
//     (the axes: n the normal of the element's first patch, u = n x (1, 0, 0), or n x (0, 1, 0) when |n_x| >=
//     0.9, normalised, and v = n x u; files from versions before the curvature hold element_link_slope [3K],
//     the gradient in x, y, z, and no curvature: linear links, read as such)
//   /formfactors/element_order int32 [N], element_first, element_count int32 [E], element_centre float64 [3E]:
//                                    element e's patches are element_order[first, first + count), its centre the
//                                    area-weighted mean of their centroids
// with the attributes element_links (K) and forest_nodes (E): row i reads the links of every element that holds
// its patch at its centroid, value + g_u d_u + g_v d_v + (c_uu d_u^2 + 2 c_uv d_u d_v + c_vv d_v^2) / 2 with
// d = centroid - element centre, d_u = d . u and d_v = d . v. Neither tree is stored: the same patches
// give the same trees, and the reader checks their sizes. B reaches row i through a link as the area-weighted
// mean of B over the target's patches (far_links.h).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "io/hdf5_util.h"
#include "scene/patch.h"

namespace rad {

// Collective: f's far links (block rows, as its CSR rows) into the existing /formfactors group of `file`.
void WriteFarLinks(MPI_Comm comm, hid_t file, const FormFactorRows &f);

// One process: whether the file's /formfactors holds far links, and if so link_ptr, checked against `n` patches
// and the lengths of link_target and link_value (InputError naming `path`); empty when there are none.
std::vector<long long> InspectFarLinks(hid_t file, const std::string &path, long long n);

// Collective: the far links of f.rows (any distribution) from `linkPtr` (InspectFarLinks, on every rank), with
// the tree rebuilt from `patches` and their areas. A target outside the tree or the patches, a value that is not
// finite, or a tree of another size is an InputError naming `path` on every rank.
void ReadFarLinks(MPI_Comm comm, hid_t file, const std::string &path, const std::vector<long long> &linkPtr,
                  const std::vector<Patch> &patches, FormFactorRows &f);

}  // namespace rad
