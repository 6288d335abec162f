// Checkpoints of the solve of `run --checkpoint-dir D`, after those of the rows of F (row_checkpoint.h): a run
// stopped during the solve continues it with --restart from the kept iterate rather than from B = E, and ends
// with the bits of a run never stopped. Kept in the same folder:
//
//   D/solve.json            the sweep k the iterate starts, the residuals of the sweeps before it, and what the
//                           sweeps depend on beyond F: the solver and its options, the patch count, how the
//                           rows are split over the ranks, and the generation of the rows' checkpoint
//   D/iterate-<k>.bin       B^k, 3 float64 per patch (little-endian), flushed to the disk before solve.json
//                           names it
//
// They are removed with the rows' checkpoint (RowCheckpoint::Remove).
// Gauss-Seidel is rank-local (radiosity_solver.h), so its iterates depend on how rows are split: an iterate is
// taken only by a solve with the same split and the same solver options (Jacobi included, for one rule);
// otherwise the solve starts from B = E and says so. That costs the solve's time again, which is small beside F's.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/row_checkpoint.h"
#include "pipeline/scene_stamp.h"
#include "solver/radiosity_solver.h"

namespace rad {

class SolveCheckpoint : public IterateKeeper {
 public:
  // Collective, once the rows of F are complete and their checkpoint says so (`rows`). `myRows`: this rank's rows
  // of F. Signals are held (acted on after the next exchange) until Finish or destruction.
  SolveCheckpoint(MPI_Comm comm, const RowCheckpoint &rows, const CheckpointOptions &options,
                  const SolverOptions &solver, const std::vector<long long> &myRows, bool talk);
  ~SolveCheckpoint() override;
  SolveCheckpoint(const SolveCheckpoint &) = delete;
  SolveCheckpoint &operator=(const SolveCheckpoint &) = delete;

  // With --restart, the kept iterate of this solve (InputError on every rank for a damaged one); else nullptr.
  const SolverIterate *Resume() override;
  // Keeps the iterate when --checkpoint-every has passed since the last, or a signal came (and then stops:
  // exit 128 + signal).
  void AfterExchange(int k, const std::function<SolverIterate()> &iterate) override;
  // Collective, when the solve has ended: signals act at once again; one held since the last exchange stops the
  // run now.
  void Finish();
  static std::string JsonPathIn(const std::string &dir);
  static constexpr const char *kIteratePrefix = "iterate-", *kIterateSuffix = ".bin";

 private:
  std::string IteratePath(int k) const;
  void Write(const SolverIterate &state);

  MPI_Comm comm_;
  CheckpointOptions o_;
  KeyValues identity_;  // what an iterate must match to be continued
  long long n_ = 0;
  bool talk_ = false;
  bool holding_ = false;
  std::string json_;
  int kept_ = 0;  // the sweep of the iterate solve.json names (0: none)
  std::unique_ptr<SolverIterate> resumed_;
  double lastWrite_ = 0;
};

}  // namespace rad
