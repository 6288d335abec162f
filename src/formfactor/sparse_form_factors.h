// The sparse operator: a rank's rows of F computed straight into CSR, for scenes past the dense wall (a city,
// a scanned building) whose rows are mostly negligible. A pair {i, j} is kept when F_ij or F_ji reaches the
// drop threshold and dropped as a whole otherwise, so the pattern is symmetric and every kept entry keeps
// reciprocity. Kept entries are the dense operator's, bit for bit (the same exact kernel, visibility and
// shadow rays). Whole cluster pairs that cannot reach the threshold are never evaluated: each row walks the
// patch tree (patch_tree.h) and skips the nodes whose bound is below it, so the cost follows the entries
// kept, not N^2. What a row leaves out is reported: entries computed and dropped exactly, skipped patches by
// the point kernel at their centroids times one shadow ray between them, skipped nodes by their cluster
// estimate (opened where a node is wide for its distance) times the visible share of 32 of their patches
// (weighted by the point kernel, two random shadow rays each).
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/element_links.h"
#include "formfactor/pair_exchange.h"
#include "formfactor/form_factor_rows.h"
#include "formfactor/patch_tree.h"

namespace rad {

struct SparseCounters {
  long long candidates = 0;      // (row, column) slots the walk left to the kernel
  long long pairsEvaluated = 0;  // exact-kernel evaluations (a pair whose two rows are here: once)
  long long kept = 0;            // entries stored
  long long droppedEntries = 0;  // non-zero entries evaluated and dropped
  long long nodesSkipped = 0;    // tree nodes left out whole by their bound
  long long patchesSkipped = 0;  // single patches of a visited leaf left out by their bound
  long long links = 0;           // far links (the hierarchical operator), per row
  long long elementLinks = 0;    // far links taken by elements (before each row takes its elements')
  long long smoothLinks = 0;     // of both, those taken smooth (SmoothLink, far_field.h)
  // The most bytes of entries held at once for rows of later blocks (evaluated from the other row's side, or
  // by another rank): the rows' memory beside what they keep. Added as a maximum.
  double handedPeakBytes = 0;
  void Add(const SparseCounters &c) {
    handedPeakBytes = std::max(handedPeakBytes, c.handedPeakBytes);
    links += c.links;
    elementLinks += c.elementLinks;
    smoothLinks += c.smoothLinks;
    candidates += c.candidates;
    pairsEvaluated += c.pairsEvaluated;
    kept += c.kept;
    droppedEntries += c.droppedEntries;
    nodesSkipped += c.nodesSkipped;
    patchesSkipped += c.patchesSkipped;
  }
};

// Per row of `rows`, the candidates the walk at threshold `dropBelow` leaves to the kernel (a walk of the tree
// without the kernel; with `walk`, each row from where the elements above it left it, element_links.h), and in
// `skipped` the nodes and patches each row skips (an upper bound on its far links, hierarchical operator): upper
// bounds on the row's entries, for the memory check before anything is computed. `smoothLinks`: walk as the
// hierarchical operator does (ComputeSparseRowsCpu with far links).
std::vector<long long> CountSparseCandidates(const std::vector<Patch> &patches, const PatchTree &tree,
                                             const std::vector<long long> &rows, double dropBelow,
                                             const ElementWalk *walk = nullptr,
                                             std::vector<long long> *skipped = nullptr, bool smoothLinks = false);

// Bytes per candidate of the block of rows at hand (column, value and flag; float rows add their narrowed
// copy).
constexpr double SparseBytesPerCandidate(bool floatRows) { return 4 + 8 + 1 + (floatRows ? 4 : 0); }
// Per entry kept (its column's 16 bits and its value: FormFactorRows), per row kept (its pointer and its columns'
// span table; with far links, theirs too: `linkNames` the tree's nodes and the patches, FarLinks::names, 0
// without) and per far link (its name's 16 bits, and its value in binary16: FarLinks); a far link in the walk,
// before its row is appended, holds its target whole (4 + 2 bytes).
constexpr double KeptEntryBytes(bool floatRows) { return 2 + (floatRows ? 4 : 8); }
inline double KeptRowBytes(long long n, long long linkNames = 0) {
  return 8 + 4.0 * double(ColumnSpans(n) - 1) + (linkNames > 0 ? 8 + 4.0 * double(ColumnSpans(linkNames) - 1) : 0);
}
constexpr double kBytesPerFarLink = 2 + 2;
constexpr double kBytesPerWalkedFarLink = 4 + 2;

// ComputeSparseRowsCpu takes a rank's rows in blocks of consecutive rows, about `blockSize` candidates each, with
// the far links their walks may make when `linkBounds` (per row) is given (0: a sixteenth of the rank's, at least
// 4 Mi): the first row of each block, and the end. A city's last rows (its sky) have few candidates and many
// links: counted by candidates alone, their block held a third of the links twice (per row, then appended).
std::vector<size_t> SparseRowBlocks(const std::vector<long long> &candidateCounts, long long blockSize = 0,
                                    const std::vector<long long> *linkBounds = nullptr);
// The most the block of rows [first, last) adds to what the rows before it kept: its candidates, what it may
// hand on to later rows when `handsOn` (not being the last), and its far links (at most `linkBounds`, per row).
double SparseBlockBytes(const std::vector<long long> &candidateCounts, const std::vector<long long> *linkBounds,
                        size_t first, size_t last, bool farLinks, bool floatRows, bool handsOn);

// How ComputeSparseRowsCpu streams its rows, and within what memory.
struct SparseStreaming {
  long long blockCandidates = 0;  // SparseRowBlocks's block size (with linkBounds)
  // With limitBytes > 0, before each block: the rank's `heldBytes` (its geometry, trees and elements), what the
  // rows before kept, and SparseBlockBytes of the block (its link bound from `linkBounds`, per row, when set)
  // against the limit; InputError(refuse(need, limit, rows done)) when over.
  double limitBytes = 0;
  double heldBytes = 0;
  const std::vector<long long> *linkBounds = nullptr;
  std::function<std::string(double, double, long long)> refuse;
  // With limitBytes > 0, after each block that ends with at least a twentieth of the rows done and some left:
  // what the rows kept so far, carried on at their pace to every row, beside heldBytes. Past the limit,
  // outpaced(that projection, limit, rows done) is called once, so that a run the blocks' check would stop
  // late (a million patches: after 45 minutes, at four fifths of the rows) says so early. Not called where
  // each call takes part of the rows (rowsAlone): the pace is the whole run's.
  std::function<void(double, double, long long)> outpaced;
  // Each row on its own: every pair of a row's candidates evaluated from the row's side (FormFactorPair gives
  // the same bits from either side), nothing handed between rows or ranks, so that a row is done when its block
  // ends, whatever the other rows (checkpoints), and the pairs evaluated are each row's own, however the rows are
  // split. The same rows, bit for bit; about twice the kernel's pairs.
  bool rowsAlone = false;
  // With rowsAlone: which of the rows `walk` was made for is out.rows[0] (a call over a contiguous part of them,
  // such as a checkpointed round's rows not done yet).
  size_t walkFirstRow = 0;
};

// With `owners`, the other rows are on the other ranks of owners->comm, each calling this collectively, and a
// pair whose rows are on two ranks is evaluated once too (the rank of the row ComputesPair picks answers the
// other's request, found by a walk that lists candidates only; phase "sparse pair exchange").
// Fills `out` (n, rows and precision set by the caller) with CSR rows and their dropped sums, `candidateCounts`
// being CountSparseCandidates of out.rows. `dropBelow` > 0. Block by block of rows (SparseRowBlocks): the
// walk, then the kernel over the candidates (a pair whose two rows are both here once: a row of an earlier
// block hands its entry to the later row), then the kept entries gathered, so that only one block's
// candidates are held; rows in parallel, each row's work in a fixed order, so neither the thread count, the
// blocks nor the rank count shows in the results. Phases "sparse walk" and "sparse form factors" in `timers`.
// With `farLinks` (the hierarchical operator), every evaluated entry is kept, and what the walk skips becomes
// out.links (targets and values; the caller sets links.tree and links.area) instead of dropped sums: the far
// field is transported, through the same estimates, rather than lost; the walk also skips, as links, the nodes
// whose link is smooth though their entries may reach the threshold (SmoothLink, far_field.h). With `walk`
// (WalkElements, far links only), each row's walk starts where its elements left it; the caller holds the
// elements' links (HoldElementLinks, element_links.h) in out.links.elements.
void ComputeSparseRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const PatchTree &tree,
                          const std::vector<long long> &candidateCounts, double dropBelow, bool farLinks,
                          const FormFactorOptions &options, FormFactorRows &out, PhaseTimers &timers,
                          FormFactorCounters &counters, SparseCounters &sparse, bool showProgress,
                          const RowOwners *owners = nullptr, const ElementWalk *walk = nullptr,
                          const SparseStreaming &streaming = SparseStreaming{});

}  // namespace rad
