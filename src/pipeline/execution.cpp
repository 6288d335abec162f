#include "pipeline/execution.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "util/agree.h"

namespace rad {

int WorldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int WorldSize() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

namespace {

// This rank's number among its node's ranks, and how many ranks the node runs.
std::pair<int, int> NodeRankAndSize() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0, size = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  return {rank, size};
}

}  // namespace

int DefaultThreadsPerRank(int requested, std::string *note) {
  if (requested > 0) return requested;
  const int ranksOnNode = NodeRankAndSize().second;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const int share = std::max(1, cores / ranksOnNode);
  // mpirun binds each rank to a core by default (Open MPI, up to 2 ranks): more threads than the CPUs the
  // rank may run on would only time-share them.
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : share;
  if (allowed < share && note) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "each rank may use %d of the node's %d cores for its share of %d; use `mpirun --bind-to none` "
                  "or `--map-by slot:PE=%d` to give ranks more cores",
                  allowed, cores, share, share);
    *note = text;
  }
  return std::max(1, std::min(share, allowed));
}

void AgreeOrThrow(bool ok, const std::string &message) { AgreeOrThrow(MPI_COMM_WORLD, ok, message); }

Execution::Execution(const ExecutionOptions &options) : options_(options), start_(Now()) {
  rank_ = WorldRank();
  ranks_ = WorldSize();
  nodeRank_ = NodeRankAndSize().first;
  backend_ = ResolveBackend(MPI_COMM_WORLD, options_.backend);  // a missing GPU fails before anything is created
  threads_ = DefaultThreadsPerRank(options_.threads, &threadNote_);
  limit_ = std::make_unique<ThreadLimit>(threads_);
  SelectDevice(MPI_COMM_WORLD, backend_);
}

void Execution::AnnounceBackend() const {
  if (announced_) return;
  announced_ = true;
  rad::AnnounceBackend(MPI_COMM_WORLD, options_.backend, backend_, options_.quiet);
}

}  // namespace rad
