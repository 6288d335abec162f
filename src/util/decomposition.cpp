#include "util/decomposition.h"

#include <algorithm>

#include "util/error.h"

namespace rad {

Distribution ParseDistribution(const std::string &name) {
  if (name == "cyclic") return Distribution::kCyclic;
  if (name == "block") return Distribution::kBlock;
  throw InputError("--distribution must be 'cyclic' or 'block', not '" + name + "'");
}

const char *DistributionName(Distribution d) { return d == Distribution::kCyclic ? "cyclic" : "block"; }

int OwnerOf(long long i, long long n, int ranks, Distribution d) {
  if (d == Distribution::kCyclic) return CyclicOwner(i, ranks);
  // Block: a first guess from the proportion, then the rank whose range holds i.
  int r = int(std::min<long long>(ranks - 1, i * ranks / std::max(1LL, n)));
  while (r + 1 < ranks && BlockBegin(n, r + 1, ranks) <= i) ++r;
  while (r > 0 && BlockBegin(n, r, ranks) > i) --r;
  return r;
}

std::vector<long long> OwnedRows(long long n, int rank, int ranks, Distribution d) {
  std::vector<long long> rows;
  if (d == Distribution::kCyclic) {
    const long long count = CyclicCount(n, rank, ranks);
    for (long long k = 0; k < count; ++k) rows.push_back(CyclicItem(k, rank, ranks));
  } else {
    const long long end = BlockBegin(n, rank + 1, ranks);
    for (long long i = BlockBegin(n, rank, ranks); i < end; ++i) rows.push_back(i);
  }
  return rows;
}

long long OwnedCount(long long n, int rank, int ranks, Distribution d) {
  if (d == Distribution::kCyclic) return CyclicCount(n, rank, ranks);
  return BlockBegin(n, rank + 1, ranks) - BlockBegin(n, rank, ranks);
}

long long MostRows(long long n, int ranks) {
  const long long p = std::max(1, ranks);
  return (n + p - 1) / p;
}

}  // namespace rad
