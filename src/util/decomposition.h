// Which rank owns which of N items: rows of F, patches, scanlines of an image. Everything that splits items
// among ranks asks here, so that the writer of a row, its reader and the exchange agree by construction.
// Cyclic (item i on rank i % P) is the reference paper's split of F and balances items whose cost varies along
// their order; block (rank r holds [N r / P, N (r + 1) / P)) keeps each rank's items contiguous. Patches and
// scanlines are always split cyclically; the rows of F by --distribution.
#pragma once

#include <string>
#include <vector>

#include "util/hd.h"

namespace rad {

enum class Distribution { kCyclic, kBlock };

Distribution ParseDistribution(const std::string &name);  // "cyclic" | "block"; throws InputError
const char *DistributionName(Distribution d);

// Cyclic. I is the item's integer type (int for scanlines, long long for rows and patches): the arithmetic is
// done in it, as by the callers before.
// The rank that owns item i.
template <typename I>
RAD_HD RAD_INLINE int CyclicOwner(I i, int ranks) {
  return int(i % I(ranks));
}
// The k-th item of `rank` (k = 0, 1, ...): rank, rank + ranks, ...
template <typename I>
RAD_HD RAD_INLINE I CyclicItem(I k, int rank, int ranks) {
  return rank + k * ranks;
}
// How many of the items 0 .. n-1 `rank` owns.
template <typename I>
RAD_HD RAD_INLINE I CyclicCount(I n, int rank, int ranks) {
  return rank < n ? (n - rank + ranks - 1) / ranks : 0;
}

// Block: rank r holds [BlockBegin(n, r, ranks), BlockBegin(n, r + 1, ranks)).
inline long long BlockBegin(long long n, int rank, int ranks) { return n * rank / ranks; }

// Either distribution, for N items on `ranks` ranks.
int OwnerOf(long long i, long long n, int ranks, Distribution d);
std::vector<long long> OwnedRows(long long n, int rank, int ranks, Distribution d);  // ascending
long long OwnedCount(long long n, int rank, int ranks, Distribution d);               // OwnedRows(...).size()
// The most items any rank holds, ceil(N / ranks), in either distribution (one rank when ranks < 1).
long long MostRows(long long n, int ranks);

}  // namespace rad
