// Each unordered pair once: the choice of the computing entry and the row owners the exchange relies on.
#include <gtest/gtest.h>

#include <cstdlib>

#include "formfactor/pair.h"
#include "formfactor/pair_exchange.h"

namespace rad {
namespace {

TEST(PairExchange, ExactlyOneEntryOfEveryPairComputesItAndRowsShareTheWork) {
  const long long n = 101;
  for (long long i = 0; i < n; ++i) {
    long long computed = 0;
    for (long long j = 0; j < n; ++j) {
      if (j == i) continue;
      EXPECT_NE(ComputesPair(i, j), ComputesPair(j, i)) << i << " " << j;
      computed += ComputesPair(i, j) ? 1 : 0;
    }
    // Half of the other entries, give or take one: no row carries more of the pairs than another.
    EXPECT_LE(std::llabs(2 * computed - (n - 1)), 2) << "row " << i;
  }
}

TEST(PairExchange, OwnersAgreeWithTheDistributedRows) {
  for (Distribution d : {Distribution::kCyclic, Distribution::kBlock})
    for (long long n : {1LL, 7LL, 100LL, 2944LL})
      for (int ranks : {1, 2, 3, 4, 7}) {
        const RowOwners owners{MPI_COMM_WORLD, n, ranks, d};
        long long seen = 0;
        for (int r = 0; r < ranks; ++r)
          for (long long row : OwnedRows(n, r, ranks, d)) {
            EXPECT_EQ(owners.OwnerOf(row), r) << DistributionName(d) << " n " << n << " ranks " << ranks;
            ++seen;
          }
        EXPECT_EQ(seen, n);
      }
}

}  // namespace
}  // namespace rad
