#include "formfactor/distribution.h"

#include "util/error.h"

namespace rad {

Distribution ParseDistribution(const std::string &name) {
  if (name == "cyclic") return Distribution::kCyclic;
  if (name == "block") return Distribution::kBlock;
  throw InputError("--distribution must be 'cyclic' or 'block', not '" + name + "'");
}

const char *DistributionName(Distribution d) { return d == Distribution::kCyclic ? "cyclic" : "block"; }

std::vector<long long> OwnedRows(long long n, int rank, int size, Distribution d) {
  std::vector<long long> rows;
  if (d == Distribution::kCyclic) {
    for (long long i = rank; i < n; i += size) rows.push_back(i);
  } else {
    const long long begin = n * rank / size, end = n * (rank + 1) / size;
    for (long long i = begin; i < end; ++i) rows.push_back(i);
  }
  return rows;
}

}  // namespace rad
