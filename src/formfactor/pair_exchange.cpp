#include "formfactor/pair_exchange.h"

#include <algorithm>

#include "formfactor/pair.h"

namespace rad {

int RowOwners::OwnerOf(long long row) const {
  if (distribution == Distribution::kCyclic) return int(row % ranks);
  // Block: rank r holds [n r / P, n (r + 1) / P).
  int r = int(std::min<long long>(ranks - 1, row * ranks / std::max(1LL, patchCount)));
  while (r + 1 < ranks && patchCount * (r + 1) / ranks <= row) ++r;
  while (r > 0 && patchCount * r / ranks > row) --r;
  return r;
}

namespace {

// Messages are split so that no count passes MPI's int, whatever the matrix size.
constexpr long long kMaxMessage = 1LL << 26;

void SendReceive(MPI_Comm comm, int to, const std::vector<double> &send, int from, std::vector<double> &receive) {
  const long long sendCount = (long long)send.size(), receiveCount = (long long)receive.size();
  for (long long done = 0; done < std::max(sendCount, receiveCount); done += kMaxMessage) {
    const int s = int(std::clamp(sendCount - done, 0LL, kMaxMessage));
    const int r = int(std::clamp(receiveCount - done, 0LL, kMaxMessage));
    MPI_Sendrecv(send.data() + std::min(done, sendCount), s, MPI_DOUBLE, to, 0,
                 receive.data() + std::min(done, receiveCount), r, MPI_DOUBLE, from, 0, comm, MPI_STATUS_IGNORE);
  }
}

}  // namespace

void ExchangeReverseEntries(const RowOwners &owners, const std::vector<long long> &rows, ReverseEntries &computed,
                            std::vector<double> &out) {
  int rank = 0;
  MPI_Comm_rank(owners.comm, &rank);
  const long long n = owners.patchCount;
  std::vector<int> owner(static_cast<size_t>(n));
  for (long long j = 0; j < n; ++j) owner[size_t(j)] = owners.OwnerOf(j);
  // Per destination, in the order it expects: this rank's rows i, then its rows j.
  std::vector<std::vector<double>> send(static_cast<size_t>(owners.ranks));
  for (size_t r = 0; r < rows.size(); ++r) {
    size_t k = 0;
    for (long long j = 0; j < n; ++j)
      if (owner[size_t(j)] != rank && ComputesPair(rows[r], j))
        send[size_t(owner[size_t(j)])].push_back(computed[r][k++]);
    std::vector<double>().swap(computed[r]);
  }
  // Ring order: in step s every rank sends to rank + s and receives from rank - s, so each step pairs all ranks.
  for (int step = 1; step < owners.ranks; ++step) {
    const int to = (rank + step) % owners.ranks, from = (rank - step + owners.ranks) % owners.ranks;
    // What `from` computed for this rank's rows, in its order: its rows i, then this rank's rows j.
    const std::vector<long long> theirs = OwnedRows(n, from, owners.ranks, owners.distribution);
    auto forEachIncoming = [&](auto &&use) {
      for (long long i : theirs)
        for (size_t r = 0; r < rows.size(); ++r)
          if (ComputesPair(i, rows[r])) use(r, i);
    };
    size_t incoming = 0;
    forEachIncoming([&](size_t, long long) { ++incoming; });
    std::vector<double> receive(incoming);
    SendReceive(owners.comm, to, send[size_t(to)], from, receive);
    std::vector<double>().swap(send[size_t(to)]);
    size_t k = 0;
    forEachIncoming([&](size_t r, long long i) { out[r * size_t(n) + size_t(i)] = receive[k++]; });
  }
}

}  // namespace rad
