#include "solver/read_exchange.h"

#include <utility>

#include "formfactor/patch_tree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

// Collective: what each rank asks of each other (`asks[q]`: of rank q) becomes, on rank q, what it sends to
// each asking rank.
std::vector<std::vector<int32_t>> Transpose(MPI_Comm comm, const std::vector<std::vector<int32_t>> &asks) {
  const size_t size = asks.size();
  const int ranks = int(size);
  std::vector<int> sendCounts(size), receiveCounts(size), sendDispl(size, 0), receiveDispl(size, 0);
  for (int q = 0; q < ranks; ++q) sendCounts[size_t(q)] = int(asks[size_t(q)].size());
  RAD_MPI(MPI_Alltoall(sendCounts.data(), 1, MPI_INT, receiveCounts.data(), 1, MPI_INT, comm));
  std::vector<int32_t> sent, received;
  for (int q = 0; q < ranks; ++q) {
    sendDispl[size_t(q)] = int(sent.size());
    sent.insert(sent.end(), asks[size_t(q)].begin(), asks[size_t(q)].end());
    receiveDispl[size_t(q)] = q == 0 ? 0 : receiveDispl[size_t(q) - 1] + receiveCounts[size_t(q) - 1];
  }
  received.resize(size_t(receiveDispl.back() + receiveCounts.back()));
  RAD_MPI(MPI_Alltoallv(sent.data(), sendCounts.data(), sendDispl.data(), MPI_INT32_T, received.data(),
                        receiveCounts.data(), receiveDispl.data(), MPI_INT32_T, comm));
  std::vector<std::vector<int32_t>> wanted(size);
  for (int q = 0; q < ranks; ++q)
    wanted[size_t(q)].assign(received.begin() + receiveDispl[size_t(q)],
                             received.begin() + receiveDispl[size_t(q)] + receiveCounts[size_t(q)]);
  return wanted;
}

// Counts and displacements of 3 values per item of lists[q].
void Layout(const std::vector<std::vector<int32_t>> &lists, std::vector<int> &counts, std::vector<int> &displ) {
  counts.assign(lists.size(), 0);
  displ.assign(lists.size(), 0);
  long long total = 0;
  for (size_t q = 0; q < lists.size(); ++q) {
    displ[q] = int(total);
    counts[q] = int(3 * lists[q].size());
    total += counts[q];
  }
  RAD_CHECK(total < (1LL << 31), "ReadExchange: more than 2^31 values to exchange in one call");
}

}  // namespace

ReadPlan MakeReadPlan(const PatchTree *tree, const std::vector<int32_t> &patchOwner, int rank, int ranks,
                      const std::vector<int32_t> &readNodes, const std::vector<int32_t> &readPatches) {
  ReadPlan p;
  p.rank = rank;
  p.ranks = ranks;
  p.nodesFrom.resize(size_t(ranks));
  p.patchesFrom.resize(size_t(ranks));
  // Marks, then lists in ascending order, so that each item is asked for once.
  std::vector<uint8_t> patchAsked(patchOwner.size(), 0);
  for (int32_t j : readPatches) patchAsked[size_t(j)] = 1;
  if (tree != nullptr) {
    const size_t count = tree->nodes.size();
    p.nodeOwner.assign(count, -1);
    for (size_t k = count; k-- > 0;) {  // children first
      const PatchTreeNode &node = tree->nodes[k];
      int32_t owner = -1;
      if (node.IsLeaf()) {
        if (node.count > 0) owner = patchOwner[size_t(tree->order[size_t(node.first)])];
        for (int32_t q = node.first; q < node.first + node.count; ++q)
          if (patchOwner[size_t(tree->order[size_t(q)])] != owner) owner = -1;
      } else if (p.nodeOwner[size_t(node.left)] == p.nodeOwner[size_t(node.right)]) {
        owner = p.nodeOwner[size_t(node.left)];
      }
      p.nodeOwner[k] = owner;
      if (owner == rank) p.ownNodes.push_back(int32_t(k));
    }
    // A node read is summed here or asked for; a mixed one summed here needs its children the same way.
    std::vector<uint8_t> needed(count, 0);
    for (int32_t k : readNodes) needed[size_t(k)] = 1;
    for (size_t k = 0; k < count; ++k) {  // parents first
      if (!needed[k] || p.nodeOwner[k] >= 0) continue;
      const PatchTreeNode &node = tree->nodes[k];
      if (node.IsLeaf()) {
        for (int32_t q = node.first; q < node.first + node.count; ++q) patchAsked[size_t(tree->order[size_t(q)])] = 1;
      } else {
        needed[size_t(node.left)] = needed[size_t(node.right)] = 1;
      }
    }
    for (size_t k = count; k-- > 0;)
      if (needed[k] && p.nodeOwner[k] < 0) p.mixedNodes.push_back(int32_t(k));
    for (size_t k = 0; k < count; ++k) {
      const int32_t owner = p.nodeOwner[k];
      if (needed[k] && owner >= 0 && owner != rank) p.nodesFrom[size_t(owner)].push_back(int32_t(k));
    }
  }
  for (size_t j = 0; j < patchAsked.size(); ++j) {
    const int32_t owner = patchOwner[j];
    if (patchAsked[j] && owner >= 0 && owner != rank) p.patchesFrom[size_t(owner)].push_back(int32_t(j));
  }
  return p;
}

void RowsRead(const FormFactorRows &f, std::vector<int32_t> &nodes, std::vector<int32_t> &patches) {
  // Marks, not a sorted copy of the columns: a rank's entries can be far more than its patches.
  std::vector<uint8_t> patchRead(size_t(f.n), 0), nodeRead;
  for (size_t r = 0; r < f.RowCount(); ++r) f.ForEachEntry(r, [&](int32_t j, long long) { patchRead[size_t(j)] = 1; });
  if (!f.links.Empty()) {
    nodeRead.assign(f.links.tree->nodes.size(), 0);
    for (size_t r = 0; r < f.RowCount(); ++r)
      f.links.ForEachLink(r, [&](int32_t t, long long) { (t >= 0 ? nodeRead[size_t(t)] : patchRead[size_t(-(t + 1))]) = 1; });
    for (int32_t t : f.links.elements.target) nodeRead[size_t(t)] = 1;
  }
  patches.clear();
  nodes.clear();
  for (size_t j = 0; j < patchRead.size(); ++j)
    if (patchRead[j]) patches.push_back(int32_t(j));
  for (size_t k = 0; k < nodeRead.size(); ++k)
    if (nodeRead[k]) nodes.push_back(int32_t(k));
}

ReadExchange::ReadExchange(MPI_Comm comm, const FormFactorRows &f, const Exchange &all, std::vector<double> nodeArea,
                           SweepExchange mode)
    : comm_(comm), f_(f), all_(all), nodeArea_(std::move(nodeArea)), localOf_(LocalRows(size_t(f.n), f.rows)) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::vector<int32_t> patchOwner(size_t(f.n), -1);
  for (int q = 0; q < ranks; ++q) {
    const size_t first = size_t(all.displacements[size_t(q)] / 3), count = size_t(all.counts[size_t(q)] / 3);
    for (size_t i = first; i < first + count; ++i) patchOwner[size_t(all.allRows[i])] = q;
  }
  std::vector<int32_t> readPatches;
  RowsRead(f, readNodes_, readPatches);
  const PatchTree *tree = f.links.Empty() ? nullptr : f.links.tree.get();
  plan_ = MakeReadPlan(tree, patchOwner, rank, ranks, readNodes_, readPatches);
  if (tree != nullptr) sums_.assign(3 * tree->nodes.size(), 0.0);
  allRows_ = 3 * ((long long)all.allRows.size() - (long long)f.rows.size());
  for (int q = 0; q < ranks; ++q)
    if (q != rank)
      received_ += 3 * (long long)(plan_.nodesFrom[size_t(q)].size() + plan_.patchesFrom[size_t(q)].size());
  long long mine[2] = {received_, allRows_}, total[2] = {0, 0};
  RAD_MPI(MPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, comm));
  readOnly_ = mode == SweepExchange::kRead || (mode == SweepExchange::kAuto && total[0] <= total[1]);
  if (readOnly_) {  // every rank takes the same branch (the totals are all ranks')
    nodesTo_ = Transpose(comm, plan_.nodesFrom);
    patchesTo_ = Transpose(comm, plan_.patchesFrom);
    return;
  }
  // Every row to every rank: each rank has every patch, so it sums every node itself.
  received_ = allRows_;
  ReadPlan whole;
  whole.rank = rank;
  whole.ranks = ranks;
  if (tree != nullptr)
    for (size_t k = tree->nodes.size(); k-- > 0;) whole.ownNodes.push_back(int32_t(k));
  plan_ = std::move(whole);
  gathered_.resize(3 * all.allRows.size());
}

template <typename Pack, typename Unpack>
void ReadExchange::Swap(const std::vector<std::vector<int32_t>> &send,
                        const std::vector<std::vector<int32_t>> &receive, Pack &&pack, Unpack &&unpack) {
  std::vector<int> sendCounts, sendDispl, receiveCounts, receiveDispl;
  Layout(send, sendCounts, sendDispl);
  Layout(receive, receiveCounts, receiveDispl);
  sendBuffer_.resize(size_t(sendDispl.back() + sendCounts.back()));
  receiveBuffer_.resize(size_t(receiveDispl.back() + receiveCounts.back()));
  for (size_t q = 0; q < send.size(); ++q)
    for (size_t i = 0; i < send[q].size(); ++i) pack(send[q][i], &sendBuffer_[size_t(sendDispl[q]) + 3 * i]);
  RAD_MPI(MPI_Alltoallv(sendBuffer_.data(), sendCounts.data(), sendDispl.data(), MPI_DOUBLE, receiveBuffer_.data(),
                        receiveCounts.data(), receiveDispl.data(), MPI_DOUBLE, comm_));
  for (size_t q = 0; q < receive.size(); ++q)
    for (size_t i = 0; i < receive[q].size(); ++i)
      unpack(receive[q][i], &receiveBuffer_[size_t(receiveDispl[q]) + 3 * i]);
}

void ReadExchange::NodeMeans(ChannelVectors &x, std::vector<double> &means) {
  const PatchTree &tree = *f_.links.tree;
  const size_t count = tree.nodes.size();
  const std::vector<double> &area = f_.links.area;
  auto sum = [&](int32_t k) {
    for (size_t c = 0; c < 3; ++c) {
      double *channel = &sums_[c * count];
      channel[size_t(k)] = BottomUpNodeSum(
          tree, size_t(k), [&](size_t j) { return area[j] * x.c[c][j]; }, [&](size_t child) { return channel[child]; });
    }
  };
  for (int32_t k : plan_.ownNodes) sum(k);

  if (readOnly_) {
    Swap(
        nodesTo_, plan_.nodesFrom,
        [&](int32_t k, double *out) {
          for (size_t c = 0; c < 3; ++c) out[c] = sums_[size_t(k) + c * count];
        },
        [&](int32_t k, const double *in) {
          for (size_t c = 0; c < 3; ++c) sums_[size_t(k) + c * count] = in[c];
        });
    for (int32_t k : plan_.mixedNodes) sum(k);
  }
  means.assign(3 * count, 0.0);
  for (int32_t k : readNodes_)
    for (size_t c = 0; c < 3; ++c)
      means[size_t(k) + c * count] = nodeArea_[size_t(k)] > 0 ? sums_[size_t(k) + c * count] / nodeArea_[size_t(k)] : 0.0;
}

void ReadExchange::ShareRows(const std::vector<double> &packed, ChannelVectors &x) {
  if (!readOnly_) {
    GatherInto(comm_, all_, packed, gathered_, x);
    return;
  }
  for (size_t r = 0; r < f_.rows.size(); ++r)
    for (size_t c = 0; c < 3; ++c) x.c[c][size_t(f_.rows[r])] = packed[3 * r + c];
  Swap(
      patchesTo_, plan_.patchesFrom,
      [&](int32_t j, double *out) {
        const size_t r = size_t(localOf_[size_t(j)]);
        for (size_t c = 0; c < 3; ++c) out[c] = packed[3 * r + c];
      },
      [&](int32_t j, const double *in) {
        for (size_t c = 0; c < 3; ++c) x.c[c][size_t(j)] = in[c];
      });
}

}  // namespace rad
