// The form-factor stage: scene loading, the rank's rows of F on the execution's backend, closure statistics,
// output, and the timing report. Used by `formfactors`, `run` and `validate`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/geometry.h"
#include "formfactor/hemicube_rows.h"
#include "formfactor/operator_check.h"
#include "formfactor/patch_tree.h"
#include "formfactor/sparse_form_factors.h"
#include "solver/radiosity_solver.h"
#include "io/radiosity_file.h"
#include "pipeline/execution.h"
#include "pipeline/row_checkpoint.h"
#include "pipeline/scene_input.h"
#include "scene/scene.h"
#include "util/decomposition.h"
#include "util/memory_budget.h"
#include "util/output_lock.h"
#include "util/timers.h"

namespace rad {

// How F is held: every entry (dense); the entries at or above a threshold in CSR, computed without visiting
// the pairs below it (sparse); or those exact entries and far links that carry the rest (hierarchical,
// sparse_form_factors.h and far_links.h). Auto: dense while it fits in the memory at hand, else
// FormFactorJobOptions::beyondDense, decided once the patch count is known (FormFactorJob::Prepare).
enum class FormFactorOperator { kDense, kSparse, kHierarchical, kAuto };
// How entries are computed: the kernel (exact cubature, with exact or ray visibility), or hemicube gathering
// (hemicube.h: sparse rows at a pixel resolution, for texel patches).
enum class FormFactorMethod { kKernel, kHemicube };
const char *OperatorName(FormFactorOperator op);

struct FormFactorJobOptions {
  SceneInput input;
  Meshing meshing;
  // Exact visibility is the default (docs/method.md, "Occluded pairs"); rays are for previews.
  VisibilityMethod visibility = VisibilityMethod::kExact;
  unsigned shadowRays = 32;
  double gpuWorkLimit = kDeviceOccludedWork;  // --gpu-work-limit
  unsigned long long seed = 1;
  double tolerance = 1e-5;
  Precision precision = Precision::kDouble;
  Distribution distribution = Distribution::kCyclic;
  bool normalizeRows = false;
  FormFactorOperator op = FormFactorOperator::kAuto;
  // What auto takes when dense F does not fit: sparse where F is written to a file, hierarchical for `run`.
  FormFactorOperator beyondDense = FormFactorOperator::kSparse;
  double dropBelow = 1e-6;  // the sparse operator's threshold: a pair is kept when F_ij or F_ji reaches it
  // The hierarchical operator's: pairs whose bound is below it are far links. 5e-5 rather than 1e-4 (until
  // 2026-11-30): the rows' far error is 1 to 2 times the tolerance on cities of 7e3 to 1e5 patches, and the
  // rows should be within 1e-4 of their exact sums where dense F can check them (jobs/README.md).
  double operatorTolerance = 5e-5;
  long long checkRows = 16;  // sparse and hierarchical: rows computed in full to measure the error (0: none)
  FormFactorMethod method = FormFactorMethod::kKernel;
  HemicubeOptions hemicube;  // --method hemicube: resolution and rotation (its seed is `seed`)
  bool hemicubeGather = false;  // `run --hemicube-mode gather`: no rows; hemicubes traced again every iteration
  std::string memoryLimit;  // --memory-limit (empty: the node's available memory shared among its ranks)
  CheckpointOptions checkpoint;  // --checkpoint-dir, --checkpoint-every, --restart (dense rows, hemicube rows)
  // Outputs (empty = not written).
  std::string output, raw, timings;
};

struct ClosureStats {
  double minRowSum = 0, meanRowSum = 0, maxRowSum = 0;
};

class FormFactorJob {
 public:
  // Runs where `exec` says (backend, threads, verbosity) and times its phases in exec's timers.
  FormFactorJob(FormFactorJobOptions options, Execution &exec);
  // Collective: loads the scene and checks that this rank's rows (and the buffers computing them takes) fit
  // in the memory the rank may use (memory_budget.h); InputError on every rank if they do not. Allocates
  // nothing large and creates no file.
  void Prepare();
  void Run();           // Prepare() if not done, then computes this rank's rows
  // --hemicube-mode gather: Prepare() if not done, then the radiosity by hemicubes traced every iteration
  // (solver/hemicube_gathering.h) in place of Run() and a solve; the rows' sums, from the first pass, are the
  // closure reported.
  SolverResult RunGathering(double tolerance, int maxIterations);
  void WriteOutputs();  // collective: the files named in the options
  // Collective: removes the checkpoint (--checkpoint-dir), once everything the command writes is complete.
  void DiscardCheckpoint();
  // The rows' checkpoint (--checkpoint-dir), complete once Run has returned; nullptr without one.
  const RowCheckpoint *Checkpoint() const { return checkpoint_.get(); }
  // The rows' checkpoint with its lock, for a caller that removes it later (`run --refine`: each pass's until the
  // outputs are complete); the job keeps neither.
  struct HeldCheckpoint {
    std::unique_ptr<OutputLocks> lock;
    std::unique_ptr<RowCheckpoint> rows;
  };
  HeldCheckpoint ReleaseCheckpoint() { return {std::move(checkpointLock_), std::move(checkpoint_)}; }
  // Collective: /formfactors/F with its attributes into a file being written (for `run --save-formfactors`).
  void WriteFormFactors(RadiosityFileWriter &writer) const;
  // Collective: the raw matrix file (int32 N, N*N float64) at `path`, and its scene stamp beside it.
  void WriteRaw(const std::string &path) const;
  // What F was computed for (pipeline/scene_stamp.h); AddSceneStamp puts it in an HDF5 file's attributes.
  KeyValues SceneStamp() const;
  void AddSceneStamp(Attributes &file) const;
  // Collective: the timing report; `extra` lines are added to the form-factor figures.
  void Report(const std::string &title, std::vector<std::pair<std::string, std::string>> extra = {});

  // This rank's rows of F (float64, or float32 with --precision float; CSR with the sparse operator).
  const FormFactorRows &Rows() const { return f_; }
  const MemoryBudget &Memory() const { return memory_; }
  const FormFactorGeometry &Geometry() const { return geometry_; }
  const FormFactorJobOptions &Options() const { return o_; }
  long long PatchCount() const { return patchCount_; }
  ClosureStats Closure() const { return closure_; }
  const Meshing &UsedMeshing() const { return meshing_; }
  const Scene &LoadedScene() const { return scene_; }  // with --patches resolved into a patch size

 private:
  void ReportInterpenetrations() const;
  void ReportRowsAboveOne(const std::vector<double> &rowSums, double limit) const;
  std::string DescribePolygon(int face) const;  // "12 (line 40)": input polygon number and its line

  FormFactorJobOptions o_;
  Execution &exec_;
  Distribution distribution_ = Distribution::kCyclic;
  Scene scene_;
  Meshing meshing_;
  FormFactorGeometry geometry_;
  long long patchCount_ = 0;
  bool prepared_ = false;
  MemoryBudget memory_;
  FormFactorRows f_;  // the rank's rows
  FormFactorCounters counters_;  // this rank's
  FormFactorCounters totals_;    // all ranks' 
  ClosureStats closure_;
  std::vector<double> allRowSums_;  // every patch's row sum of F, on every rank
  void WriteFormFactorRows(RadiosityFileWriter &writer) const;  // /formfactors: F (dense or CSR) and attributes
  // The sparse operator's: the patch tree, this rank's candidate entries (an upper bound on its entries), the
  // counts of the walk (all ranks'), and each row's sky view factor (1 - its kept and dropped sums).
  std::shared_ptr<PatchTree> tree_;
  std::shared_ptr<ElementForest> elements_;    // the hierarchical operator's receivers
  std::unique_ptr<ElementWalk> elementWalk_;   // and their links
  double heldBytes_ = 0;  // what the sparse rows' rank holds besides the rows (sparse_form_factors.h)
  std::vector<long long> linkBounds_;           // per row, the far links it may make (its walk's skips)
  std::unique_ptr<EmbreeScene> embree_;
  std::vector<long long> candidateCounts_;  // per row
  long long candidates_ = 0;
  OperatorCheck check_;
  double denseBytesPerRank_ = 0;  // this rank's dense rows of F, for --operator auto's notice
  SparseCounters sparseTotals_;
  // What the largest rank's rows hold at their end, in bytes: the entries kept (columns and values), the rows'
  // far links, the elements' links, and the most entries held at once for rows of later blocks.
  double rowsMemory_[4] = {0, 0, 0, 0};
  std::vector<double> skyViewFactor_;
  std::unique_ptr<OutputLocks> locks_;           // this job's outputs, while it runs
  std::unique_ptr<OutputLocks> checkpointLock_;  // its checkpoint's, while it is kept
  std::unique_ptr<RowCheckpoint> checkpoint_;  // --checkpoint-dir
  void PrepareCheckpoint();
  JobIdentity Identity() const;  // what the rows depend on, for the checkpoint
  long long hemicubeRays_ = 0;  // --method hemicube: this rank's rays
  struct SparseSummary {
    double droppedMean = 0, droppedMax = 0, skyMin = 0, skyMean = 0, skyMax = 0;
    long long nonzeros = 0;
  } sparseSummary_;
  void PrepareSparse();
  void CheckTexelMemory();
  void PrepareHemicube();
  void RunHemicube();
  void RunHemicubeInRounds();
  void RunRowsAloneInRounds(const char *what, bool sums,
                            const std::function<void(size_t, size_t, FormFactorRows &)> &compute,
                            const std::function<NamedCounts()> &more = {});
  NamedCounts RowWork(const SparseCounters &c);
  static long long *RowWorkField(SparseCounters &c, const std::string &name);
  long long elementSmoothLinks_ = 0;
  double restoredBytes_ = 0;  // the rows a restart read back, held beside those computed until the last round  // the elements' smooth links, which a restart's walk counts again
  int AgreedRoundCount() const;  // collective
  std::vector<double> GatherPerPatch(const std::vector<double> &perRow) const;  // collective
  bool Hemicube() const { return o_.method == FormFactorMethod::kHemicube; }
  // The refusal of the sparse rows' memory check: before the walks (rowsDone -1: geometry and trees alone), before
  // the rows (0), or before a block of them (the rows done).
  std::string SparseRefusal(double need, double limit, const std::string &source, long long rowsDone) const;
  // What to change when the sparse rows do not fit: "raise --operator-tolerance, use more ranks, ...".
  std::string SparseRemedy() const;
  void PrepareDense();
  void RunDense(const FormFactorOptions &ff, const RowOwners &owners);
  void CheckSparseOptions() const;
  void ChooseOperator(long long rank, long long size);  // collective: resolves --operator auto
  void RunSparse(const FormFactorOptions &ff);
  void SummariseSparse(const std::vector<double> &rowSums);  // collective
  // The operators that walk the patch tree: sparse and hierarchical.
  bool Sparse() const { return o_.op == FormFactorOperator::kSparse || Hierarchical(); }
  bool Hierarchical() const { return o_.op == FormFactorOperator::kHierarchical; }
  double WalkThreshold() const { return Hierarchical() ? o_.operatorTolerance : o_.dropBelow; }
};

}  // namespace rad
