// What a rank's CSR rows read of the iterate, and how a sweep gets just that from the ranks that own it, instead
// of every rank's new values gathered on every rank (MPI_Allgatherv of all of B, as dense rows need).
//
// A row reads the patches of its stored entries and of its links to single patches, and the area-weighted means
// of the tree nodes that its links and its elements' links target (far_links.h). A node's weighted sum is taken
// bottom-up, as the node areas are: a leaf's over its patches in the tree's order, any other node's as its left
// child's plus its right child's. So a sum has the same bits on whichever rank takes it, for any number of ranks.
//  - A node whose patches one rank owns all of ("own" to that rank) is summed by that rank.
//  - A node whose patches more than one rank owns ("mixed": those above a boundary between ranks' patches) is
//    summed by each rank that reads it, from its children: mixed ones summed the same way, own ones' sums asked
//    of their owners, and at a mixed leaf its patches' values.
//  - A sweep asks the owners for the sums of the nodes that a rank reads or sums from (one MPI_Alltoallv, before
//    it), and sends each rank's new values to the ranks that read them or sum from them (one MPI_Alltoallv,
//    after it), on lists fixed before the first sweep.
// Each rank still holds vectors of all n patches (the solver's), of which it keeps current only what it reads.
// Where the rows' patches are spread over the tree (rows are owned in blocks of patch index, not by subtree),
// most nodes can be mixed and each rank can read most of the others' patches: SweepExchange::kAuto then
// gathers every row instead (the node sums are the same bits either way).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "solver/channel_vectors.h"
#include "solver/radiosity_solver.h"
#include "solver/solver_common.h"

namespace rad {

// Who sums which node and who sends what to whom; the same on every rank but for the lists of what this rank
// reads (no MPI: a function of the patches' owners and of what the rows read).
struct ReadPlan {
  int rank = 0, ranks = 1;
  std::vector<int32_t> nodeOwner;  // per node of the tree: the rank that owns all its patches, -1 when mixed
  // Children before parents (descending node index: BuildPatchTree builds a node's children after it).
  std::vector<int32_t> ownNodes;    // the nodes own to this rank
  std::vector<int32_t> mixedNodes;  // the mixed nodes this rank reads, and the mixed nodes below them
  // Per other rank, ascending: its own nodes whose sums this rank reads or sums the mixed nodes from, and its
  // patches whose values this rank's rows read or its mixed leaves hold.
  std::vector<std::vector<int32_t>> nodesFrom, patchesFrom;
};

// tree: the far links' tree, or null (no far links: patches only). patchOwner: per patch, the rank whose rows
// hold it (-1: none, its value never changes). readNodes, readPatches: what this rank's rows read.
ReadPlan MakeReadPlan(const PatchTree *tree, const std::vector<int32_t> &patchOwner, int rank, int ranks,
                      const std::vector<int32_t> &readNodes, const std::vector<int32_t> &readPatches);

// What the rows of f read: the nodes that its links and its elements' links target, and the patches of its
// entries and of its links to single patches (ascending, each once).
void RowsRead(const FormFactorRows &f, std::vector<int32_t> &nodes, std::vector<int32_t> &patches);

class ReadExchange {
 public:
  // Collective: every rank tells the others what it reads of theirs, and all agree on the mode. nodeArea: per
  // node, the means' denominator.
  ReadExchange(MPI_Comm comm, const FormFactorRows &f, const Exchange &all, std::vector<double> nodeArea,
               SweepExchange mode);

  // Collective. The means (column-major, nodes x 3) of every node this rank's links read, from x, whose values
  // at this rank's rows and at the patches it reads of others are the iterate's.
  void NodeMeans(ChannelVectors &x, std::vector<double> &means);
  // Collective. After a sweep: the rank's new values (`packed`, 3 per local row) into x at its rows, and to the
  // ranks that read them, into their x.
  void ShareRows(const std::vector<double> &packed, ChannelVectors &x);

  // Values this rank receives in a sweep (both calls), and those MPI_Allgatherv of every row brings.
  long long ValuesReceived() const { return received_; }
  long long ValuesOfAllRows() const { return allRows_; }
  bool ReadOnly() const { return readOnly_; }  // only what the rows read (else every row)

 private:
  // MPI_Alltoallv of 3 values per item: send[q] for rank q, from `pack`; what comes is given to `unpack`.
  template <typename Pack, typename Unpack>
  void Swap(const std::vector<std::vector<int32_t>> &send, const std::vector<std::vector<int32_t>> &receive,
            Pack &&pack, Unpack &&unpack);

  MPI_Comm comm_;
  const FormFactorRows &f_;
  const Exchange &all_;
  bool readOnly_ = true;
  std::vector<double> nodeArea_;
  ReadPlan plan_;
  std::vector<int32_t> readNodes_;
  std::vector<int32_t> localOf_;                        // per patch, its local row here, or -1
  std::vector<std::vector<int32_t>> nodesTo_, patchesTo_;  // per rank: what it reads of this rank's
  std::vector<double> sums_;                            // per node x 3 channels, column-major
  std::vector<double> sendBuffer_, receiveBuffer_, gathered_;
  long long received_ = 0, allRows_ = 0;
};

}  // namespace rad
