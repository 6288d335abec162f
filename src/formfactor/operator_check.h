// The achieved error of a sparse or hierarchical F, measured rather than bounded: a few rows, evenly spread over
// the patches, are computed in full by the dense kernel (every entry, exact visibility as configured) and set
// against what the operator holds for them: its kept entries, which must be the dense kernel's bits, and what it
// says of the rest of the row (the sparse operator's dropped sum, or the far links' estimate), against the exact
// sum of the entries it did not keep.
#pragma once

#include <mpi.h>

#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/form_factor_rows.h"
#include "formfactor/geometry.h"

namespace rad {

struct ElementWalk;

struct OperatorCheck {
  long long rows = 0;            // rows checked, over all ranks
  long long keptMismatches = 0;  // kept entries that are not the dense kernel's (0: they are its bits)
  // Patches of the checked rows that two of a row's links carry, or a link and a kept entry (0: each entry is
  // carried once).
  long long carriedTwice = 0;
  // Per checked row: |what the operator says of the entries it did not keep - their exact sum|.
  double farErrorMean = 0, farErrorMax = 0;
  // The mean of the signed errors (what the operator says less the exact sum): a bias of the far links shows
  // here, where noise of either sign cancels.
  double farBias = 0;
  long long farErrorMaxRow = -1;
  double notKeptMean = 0;  // the exact sum of the entries not kept, mean over the checked rows
  // The hierarchical operator's far error by where it comes from, per checked row: what each kind of link
  // carries less the exact sum over its patches (the rows' links to nodes, their links to single patches, the
  // elements' links the row reads), and the exact sum that no link and no kept entry carries (links found
  // hidden, or estimated 0, and not kept). They add up: nodes + patches + elements - left out is the signed
  // error. Each as the mean of its signed value and of its absolute value over the checked rows.
  struct Part {
    double mean = 0, absMean = 0;
  };
  Part nodeLinks, patchLinks, elementLinks, leftOut;
  // What is left out, by where: below the nodes the row's own walk started from (its own links measured hidden
  // or estimated 0: not stored), and elsewhere (nodes an element above the row found hidden whole, so that no
  // row below it walks them). They add up to leftOut.
  Part leftOutByRows, leftOutByElements;
};

// The rows checked for `count` rows of n: the middles of `count` equal slices of [0, n), fewer when n is small.
std::vector<long long> OperatorCheckRows(long long n, long long count);

// Collective over `comm`: each rank computes the checked rows it holds (f's rows: CSR, with or without far
// links), and the figures are reduced in row order, so they do not depend on the number of ranks. `walk`: where
// the rows' own walks started (the elements', made for f's rows), for leftOutByRows; null: the tree's root.
OperatorCheck CheckOperatorRows(MPI_Comm comm, const FormFactorGeometry &g, const EmbreeScene &embree,
                                const FormFactorOptions &options, const FormFactorRows &f, long long count,
                                const ElementWalk *walk = nullptr);

}  // namespace rad
