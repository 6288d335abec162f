// Checkpoints of the rows of F (`--checkpoint-dir D`), so that a run killed by a time limit, a node failure or a
// signal continues where it was with `--restart`, at the same or another rank count, and ends with the bits of a
// run never stopped. The rows are computed in rounds (cpu_form_factors.h: RowRounds; the hemicube's rows in
// form_factor_stage.cpp); after a round every pair computed so far is in its owners' rows, and a checkpoint is
// those rows as they are, written by all ranks:
//
//   D/formfactors-<generation>.raw   dense rows (the kernel's): the N x N matrix in the raw format
//                                    (io/raw_matrix.h), the entries of the done pairs, 0 elsewhere (float rows
//                                    widened, so read back exactly)
//   D/formfactors-<generation>.h5    CSR rows (the hemicube's and the sparse operators', each row computed whole on
//                                    its own): the CSR datasets of the project's HDF5 file (io/csr_hdf5.h), with
//                                    the rows' dropped sums and far links when they have them, the done rows'
//                                    entries in their own precision, the other rows empty
//   D/checkpoint.json                which rows' pairs are done (ranges of rows), the job they belong to (the
//                                    scene files' hash, patches and every option F depends on), the counts of the
//                                    done pairs' work, and the generation of the matrix
//
// The matrix is written whole under a new name and flushed, then checkpoint.json is replaced by a rename, then
// the older matrix removed: a kill at any moment leaves the previous checkpoint or the new one, never a mixture.
// Rows are global, so a checkpoint does not depend on the rank count that wrote it. The folder is removed of
// them once the job's outputs are complete.
#pragma once

#include <mpi.h>

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/form_factor_rows.h"
#include "io/hdf5_util.h"
#include "scene/patch.h"
#include "pipeline/scene_stamp.h"

namespace rad {

struct CheckpointOptions {
  std::string dir;           // --checkpoint-dir (empty: no checkpoints)
  double everyMinutes = 30;  // --checkpoint-every: at most this long between checkpoints (0: after every round)
  bool restart = false;      // --restart: continue from the folder's checkpoint (a fresh start if it has none)
  bool On() const { return !dir.empty(); }
};

// What F depends on, as (key, value): a checkpoint of another job is refused, naming the keys that differ.
using JobIdentity = KeyValues;

// What the checkpoints of the rows and of the solve (solve_checkpoint.h) share:
// Collective: the text of the checkpoint file `path`, read by rank 0, on every rank; false (on every rank) when
// there is none. InputError naming the file when it cannot be read.
bool ReadCheckpointText(MPI_Comm comm, const std::string &path, std::string &text);
// The keys of `identity` that the checkpoint's JSON object `was` gives another value, or lacks, as
// "key (there, here), ..." ("" when none).
std::string IdentityDifferences(const nlohmann::ordered_json &was, const KeyValues &identity);

// Counts of the done rows' work beyond FormFactorCounters (the sparse operators'), by name.
using NamedCounts = std::vector<std::pair<std::string, long long>>;

// How the checkpoint holds the rows: as the job holds them.
enum class CheckpointRows { kDense, kCsr };

class RowCheckpoint {
 public:
  // Collective. Makes the folder if missing. With `restart`, reads its checkpoint if it has one, checking that it
  // belongs to `job` and to n patches, and that its matrix is whole; without, refuses a folder that holds one
  // (InputError on every rank, naming the file and what is wrong).
  RowCheckpoint(MPI_Comm comm, CheckpointOptions options, JobIdentity job, long long n, bool talk,
                CheckpointRows storage = CheckpointRows::kDense);
  // Collective, before any work: without --restart, InputError on every rank if the folder holds a checkpoint
  // (continuing it, or losing it, is the user's choice).
  static void RefuseUnlessRestarting(MPI_Comm comm, const CheckpointOptions &options);
  // Collective: makes the folder `dir` if missing (InputError on every rank when it cannot), before its
  // checkpoint is locked (util/output_lock.h takes locks in folders that exist).
  static void MakeFolder(MPI_Comm comm, const std::string &dir);
  static std::string JsonPathIn(const std::string &dir);

  // Per patch, non-zero where the row's pairs are in the checkpoint read back (empty when none was).
  const std::vector<uint8_t> &Done() const { return done_; }
  long long DoneRows() const { return doneRows_; }
  // All ranks' counts of the work of the done pairs, as the run that computed them counted it.
  const FormFactorCounters &DoneCounters() const { return doneCounters_; }
  // All ranks' count `name` (AfterRound's `more`) of the done rows' work, 0 when the checkpoint has none.
  long long DoneCount(const std::string &name) const;
  // Collective: this rank's rows of `f` from the checkpoint's matrix. Dense: into rows allocated in their
  // precision. CSR: f.rows (f.n set) made CSR rows in the stored precision, the rows not done empty, with their
  // dropped sums and far links where the checkpoint holds them (the links' tree made of `patches`).
  void Restore(FormFactorRows &f, const std::vector<Patch> *patches = nullptr) const;
  // Collective, after a round: `done` (per patch) the rows whose pairs are all in the rows of `f`, `mine` this
  // rank's counts of this run's work. Writes a checkpoint when the interval has passed since the last, when a
  // signal came (and then stops the process: exit 128 + signal) or when every row is done.
  void AfterRound(const FormFactorRows &f, const std::vector<uint8_t> &done, const FormFactorCounters &mine);
  // The same, with the rows asked for only when a checkpoint is written (`rows` may assemble them then), and
  // `more` counts of this rank's work (the same names on every rank), kept beside the counters.
  void AfterRound(const std::function<const FormFactorRows &()> &rows, const std::vector<uint8_t> &done,
                  const FormFactorCounters &mine, const NamedCounts &more = {});
  // Collective: removes the checkpoint (and the solve's, solve_checkpoint.h), once the job's outputs are complete.
  void Remove();

  const std::string &JsonPath() const { return json_; }
  long long Patches() const { return n_; }
  long long Generation() const { return generation_; }  // of the newest checkpoint (0: none)
  bool Complete() const { return generation_ > 0 && writtenRows_ == n_; }  // it holds every row
  std::string JobHash() const;  // of the job's identity

 private:
  void Read(const std::string &text);  // rank 0's checkpoint.json, on every rank
  void RestorePerRow(hid_t file, const std::string &matrix, FormFactorRows &f, const std::vector<Patch> *patches) const;
  void Write(const FormFactorRows &f, const std::vector<uint8_t> &done, const FormFactorCounters &all,
             const NamedCounts &more);
  std::string MatrixPath(long long generation) const;

  MPI_Comm comm_;
  CheckpointOptions o_;
  JobIdentity job_;
  long long n_ = 0;
  bool talk_ = false;
  CheckpointRows storage_ = CheckpointRows::kDense;
  std::string json_;
  long long generation_ = 0;  // of the matrix checkpoint.json names (0: none yet)
  std::vector<uint8_t> done_;
  long long doneRows_ = 0;     // in the checkpoint read back
  long long writtenRows_ = 0;  // in the newest checkpoint, read back or written
  FormFactorCounters doneCounters_;
  NamedCounts doneMore_;  // in the checkpoint read back (this run's are added to them when one is written)
  double lastWrite_ = 0;  // when the last checkpoint was written, or the job started (rank 0's clock)
};

}  // namespace rad
