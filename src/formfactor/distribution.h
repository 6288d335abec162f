// Which rank owns which rows of F. Cyclic (row i on rank i % P) is the reference paper's split and balances
// scenes whose patch costs vary along the patch order; block keeps each rank's rows contiguous.
#pragma once

#include <string>
#include <vector>

namespace rad {

enum class Distribution { kCyclic, kBlock };

Distribution ParseDistribution(const std::string &name);  // "cyclic" | "block"; throws InputError
const char *DistributionName(Distribution d);

std::vector<long long> OwnedRows(long long n, int rank, int size, Distribution d);

}  // namespace rad
