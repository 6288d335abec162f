#include "formfactor/pair_exchange.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <type_traits>

#include "formfactor/pair.h"
#include "util/mpi_check.h"

namespace rad {

int RowOwners::OwnerOf(long long row) const { return rad::OwnerOf(row, patchCount, ranks, distribution); }

template <typename T>
ReverseEntries<T>::ReverseEntries(const RowOwners &owners, int rank, const std::vector<long long> &rows,
                                  const std::vector<uint8_t> *done)
    : rows_(rows.size()) {
  const long long n = owners.patchCount;
  owner_.resize(size_t(n));
  for (long long j = 0; j < n; ++j) owner_[size_t(j)] = owners.OwnerOf(j);
  if (owners.ranks <= 1) {  // nothing is held elsewhere
    start_.assign(rows_ + 1, 0);
    return;
  }
  // Count, then place: each part's size first (row r writes only its own counts), then where each begins.
  start_.assign(size_t(owners.ranks) * rows_ + 1, 0);
  tbb::parallel_for(size_t(0), rows_, [&](size_t r) {
    if (done != nullptr && (*done)[size_t(rows[r])]) return;
    for (long long j = 0; j < n; ++j) {
      const int owner = owner_[size_t(j)];
      if (owner != rank && ComputesPair(rows[r], j)) ++start_[size_t(owner) * rows_ + r];
    }
  });
  long long total = 0;
  for (long long &s : start_) {
    const long long count = s;
    s = total;
    total += count;
  }
  values_.assign(size_t(total), T(0));
}

template <typename T>
void ExchangeReverseEntries(const RowOwners &owners, const std::vector<long long> &rows, ReverseEntries<T> &computed,
                            std::vector<T> &out, const std::vector<uint8_t> *round) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "F is held as double or float");
  const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
  int rank = 0;
  MPI_Comm_rank(owners.comm, &rank);
  const long long n = owners.patchCount;
  const size_t local = rows.size();
  auto inRound = [&](long long i) { return round == nullptr || (*round)[size_t(i)] != 0; };
  // This rank's rows in the round: one run [first, last) of local rows (those inside it not in the round have
  // empty parts), so that each destination's part of it lies in one piece.
  size_t first = local, last = 0;
  for (size_t r = 0; r < local; ++r)
    if (inRound(rows[r])) {
      first = std::min(first, r);
      last = r + 1;
    }
  if (first > last) first = last;
  std::vector<T> chunk;
  std::vector<MPI_Request> sends;
  // Ring order: in step s every rank sends to rank + s and receives from rank - s, so each step pairs all ranks.
  for (int step = 1; step < owners.ranks; ++step) {
    const int to = (rank + step) % owners.ranks, from = (rank - step + owners.ranks) % owners.ranks;
    // Outgoing: the part for `to`, as it lies, in messages of at most kExchangeChunkEntries values.
    const long long sendBegin = computed.start_[size_t(to) * local + first];
    const long long sendEnd = computed.start_[size_t(to) * local + last];
    sends.clear();
    sends.reserve(size_t((sendEnd - sendBegin + kExchangeChunkEntries - 1) / kExchangeChunkEntries));
    for (long long done = sendBegin; done < sendEnd; done += kExchangeChunkEntries) {
      sends.emplace_back();
      RAD_MPI(MPI_Isend(computed.values_.data() + done, int(std::min(kExchangeChunkEntries, sendEnd - done)), type,
                        to, 0, owners.comm, &sends.back()));
    }
    // Incoming: what `from` computed for this rank's rows, in its order: its rows i, then this rank's rows j.
    std::vector<long long> theirs = OwnedRows(n, from, owners.ranks, owners.distribution);
    theirs.erase(std::remove_if(theirs.begin(), theirs.end(), [&](long long i) { return !inRound(i); }), theirs.end());
    long long incoming = 0;
    for (long long i : theirs)
      for (size_t r = 0; r < local; ++r) incoming += ComputesPair(i, rows[r]) ? 1 : 0;
    size_t a = 0, r = 0;  // the next (row of theirs, row of this rank) to consider
    auto place = [&](T value) {
      for (;;) {
        if (r == local) {
          r = 0;
          ++a;
        }
        const long long i = theirs[a];
        const size_t mine = r++;
        if (ComputesPair(i, rows[mine])) {
          out[mine * size_t(n) + size_t(i)] = value;
          return;
        }
      }
    };
    chunk.resize(size_t(std::min(incoming, kExchangeChunkEntries)));
    for (long long done = 0; done < incoming; done += kExchangeChunkEntries) {
      const int count = int(std::min(kExchangeChunkEntries, incoming - done));
      RAD_MPI(MPI_Recv(chunk.data(), count, type, from, 0, owners.comm, MPI_STATUS_IGNORE));
      for (int k = 0; k < count; ++k) place(chunk[size_t(k)]);
    }
    RAD_MPI(MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE));
  }
  if (round == nullptr) computed = ReverseEntries<T>();
}

template class ReverseEntries<double>;
template class ReverseEntries<float>;
template void ExchangeReverseEntries(const RowOwners &, const std::vector<long long> &, ReverseEntries<double> &,
                                     std::vector<double> &, const std::vector<uint8_t> *);
template void ExchangeReverseEntries(const RowOwners &, const std::vector<long long> &, ReverseEntries<float> &,
                                     std::vector<float> &, const std::vector<uint8_t> *);

}  // namespace rad
