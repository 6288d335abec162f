// Where a command runs: this rank among the ranks, its share of the node's cores, the backend (CPU or one GPU
// per rank), the phase timers and how much it says. Made once per command, before any stage, so that threads,
// backend and device are decided in one place and every stage sees the same answer.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "pipeline/backend.h"
#include "util/thread_limit.h"
#include "util/timers.h"

namespace rad {

int WorldRank();
int WorldSize();
// Threads this rank should use: the node's cores divided among the node's ranks (no more than the CPUs the
// rank is bound to), unless `requested` > 0. `note` receives a hint when binding limits the rank.
int DefaultThreadsPerRank(int requested, std::string *note = nullptr);
// Throws InputError(message) on every rank if `ok` is false on any rank (the lowest such rank's message).
void AgreeOrThrow(bool ok, const std::string &message);

// What the user asked for (--threads, --quiet, --backend), before anything is resolved.
struct ExecutionOptions {
  int threads = 0;               // 0: the rank's share of the node's cores
  bool quiet = false;            // no progress lines
  std::string backend = "auto";  // auto, cpu or gpu
};

class Execution {
 public:
  // Collective on MPI_COMM_WORLD: resolves the backend (InputError on every rank when the GPU is asked for and
  // some rank has none), selects the rank's GPU when it runs there, and bounds the rank's threads for as long
  // as the object lives. Prints nothing (Announce does).
  explicit Execution(const ExecutionOptions &options);
  Execution(const Execution &) = delete;
  Execution &operator=(const Execution &) = delete;

  int Rank() const { return rank_; }
  int Ranks() const { return ranks_; }
  int NodeRank() const { return nodeRank_; }  // this rank's number among the ranks of its node
  int Threads() const { return threads_; }
  Backend UsedBackend() const { return backend_; }
  bool Quiet() const { return options_.quiet; }
  // Rank 0 and not --quiet: the rank that prints progress.
  bool Talks() const { return rank_ == 0 && !options_.quiet; }
  const ExecutionOptions &Options() const { return options_; }
  PhaseTimers &Timers() { return timers_; }
  double Start() const { return start_; }
  // The hint of DefaultThreadsPerRank when the rank's binding limits it (empty if none).
  const std::string &ThreadNote() const { return threadNote_; }

  // Rank 0, unless quiet: the one-line notice when `auto` fell back to the CPU. Called once the command's input
  // is validated, so that a bad input still gives exactly one line. Said once per job (`run --refine` computes
  // form factors once per pass).
  void AnnounceBackend() const;

 private:
  ExecutionOptions options_;
  int rank_ = 0, ranks_ = 1, nodeRank_ = 0, threads_ = 1;
  Backend backend_ = Backend::kCpu;
  std::string threadNote_;
  PhaseTimers timers_;
  double start_ = 0;
  std::unique_ptr<ThreadLimit> limit_;
  mutable bool announced_ = false;
};

}  // namespace rad
