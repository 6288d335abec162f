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

#include "util/decomposition.h"

namespace rad {

// Which rank holds each row of F: the distribution the job computes its rows with.
struct RowOwners {
  MPI_Comm comm = MPI_COMM_WORLD;
  long long patchCount = 0;
  int ranks = 1;
  Distribution distribution = Distribution::kCyclic;

  int OwnerOf(long long row) const;
};

// Entries travel in messages of at most this many values; the receiving side holds one such chunk at a time.
constexpr long long kExchangeChunkEntries = 1LL << 22;

// The entries (j, i) a rank computes for rows j held elsewhere, in one buffer laid out as they are sent: by
// destination rank, then the rank's rows i in the order of `rows`, then j ascending. Each destination's part is
// sent as it lies, so the exchange needs no second copy: its memory is these values (about (P-1)/(2P) of the
// rank's F; MemoryModel::ExchangeEntries bounds it) and one received chunk. T is the type F is held in.
template <typename T>
class ReverseEntries {
 public:
  ReverseEntries() = default;
  // Sizes every (destination, row) part from the distribution (rows.size() x N steps) and allocates the values.
  // Rows marked in `done` (per patch, non-zero: their pairs were computed before, by a run that checkpointed
  // them) have empty parts.
  ReverseEntries(const RowOwners &owners, int rank, const std::vector<long long> &rows,
                 const std::vector<uint8_t> *done = nullptr);

  // Where row r's entries for the rows of rank `owner` start (ascending j, one per j with ComputesPair).
  T *Part(int owner, size_t r) { return values_.data() + start_[size_t(owner) * rows_ + r]; }
  int OwnerOf(long long j) const { return owner_[size_t(j)]; }
  size_t Size() const { return values_.size(); }

 private:
  template <typename U>
  friend void ExchangeReverseEntries(const RowOwners &, const std::vector<long long> &, ReverseEntries<U> &,
                                     std::vector<U> &, const std::vector<uint8_t> *);
  size_t rows_ = 0;
  std::vector<int> owner_;          // per row of F
  std::vector<long long> start_;    // per (owner, local row), owner-major, and the end
  std::vector<T> values_;
};

// Sends every rank its part of `computed` and writes what the others computed for this rank's rows into `out`
// (rows.size() x N, row-major); collective over `owners.comm`. Releases `computed` unless `round` is given.
// With `round` (per patch, non-zero for the rows computed since the last exchange, on every rank: rows computed
// in rounds, cpu_form_factors.h), only those rows' entries travel; on each rank they are one run of its rows,
// where rows inside it that are not in the round have empty parts (done before).
template <typename T>
void ExchangeReverseEntries(const RowOwners &owners, const std::vector<long long> &rows, ReverseEntries<T> &computed,
                            std::vector<T> &out, const std::vector<uint8_t> *round = nullptr);

}  // namespace rad
