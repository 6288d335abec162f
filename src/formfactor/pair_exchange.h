// Each unordered pair once across ranks: a pair whose rows live on two ranks is computed by the one that holds
// the row ComputesPair picks (pair.h), and the entry of the other row, F_ji = A_i F_ij / A_j (bitwise what the
// other rank would have computed), is sent to its owner. Both sides know, from the row distribution alone,
// which entries travel and in what order, so only values cross the network: rank p sends rank q, for each of
// its rows i in ascending order and each row j of q in ascending order with ComputesPair(i, j), F_ji.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "formfactor/distribution.h"

namespace rad {

// Which rank holds each row of F: the distribution the job computes its rows with.
struct RowOwners {
  MPI_Comm comm = MPI_COMM_WORLD;
  long long patchCount = 0;
  int ranks = 1;
  Distribution distribution = Distribution::kCyclic;

  int OwnerOf(long long row) const;
};

// The entries (j, i) a rank computed for rows j held elsewhere: for each of its rows i (in the order of
// `rows`), the values F_ji for the rows j of other ranks with ComputesPair(i, j), j ascending (only values:
// the columns follow from the distribution). ExchangeReverseEntries sends them to j's owner (emptying
// `computed` as it packs) and writes what the others computed for this rank's rows into `out` (rows.size()
// x N, row-major); collective over `owners.comm`. Memory: the values once more, about (P-1)/(2P) of the
// rank's F.
using ReverseEntries = std::vector<std::vector<double>>;
void ExchangeReverseEntries(const RowOwners &owners, const std::vector<long long> &rows, ReverseEntries &computed,
                            std::vector<double> &out);

}  // namespace rad
