#include "pipeline/form_factor_stage.h"

#include "scene/texel_charts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <iterator>
#include <limits>

#include "formfactor/pair_exchange.h"
#include "formfactor/visible_region.h"
#include "formfactor/embree_scene.h"
#include "cuda/gpu_hemicube.h"
#include "formfactor/hemicube.h"
#include "formfactor/hemicube_bvh.h"
#include "formfactor/hemicube_rows.h"
#include "solver/hemicube_gathering.h"
#include "io/csr_hdf5.h"
#include "io/raw_matrix.h"
#include "pipeline/outputs.h"
#include "scene/texel_charts.h"
#include "util/error.h"
#include "util/interrupts.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

const char *OperatorName(FormFactorOperator op) {
  switch (op) {
    case FormFactorOperator::kSparse: return "sparse";
    case FormFactorOperator::kHierarchical: return "hierarchical";
    case FormFactorOperator::kAuto: return "auto";
    default: return "dense";
  }
}

FormFactorJob::FormFactorJob(FormFactorJobOptions options, Execution &exec) : o_(std::move(options)), exec_(exec) {
  distribution_ = o_.distribution;
  if (Hemicube()) {  // its rows are sparse by nature, one entry per patch a pixel sees
    if (o_.op != FormFactorOperator::kAuto)
      throw InputError("--method hemicube makes sparse rows of its own: --operator " + std::string(OperatorName(o_.op)) +
                       " does not apply");
    if (o_.normalizeRows) throw InputError("--method hemicube: --normalize-rows does not apply (a closed scene's "
                                           "hemicube rows sum to 1 already, an open one's say what escapes)");
    if (o_.hemicube.resolution < 2 || o_.hemicube.resolution % 2 != 0)
      throw InputError("--hemicube " + std::to_string(o_.hemicube.resolution) + ": the resolution must be even");
    o_.hemicube.seed = o_.seed;
  }
  if (o_.hemicubeGather && !Hemicube()) throw InputError("--hemicube-mode gather needs --method hemicube");
  if (o_.hemicubeGather && !o_.raw.empty())
    throw InputError("--hemicube-mode gather keeps no F to write: --raw needs --hemicube-mode rows");
  // What only the dense operator writes or does leaves auto no choice.
  if (o_.op == FormFactorOperator::kAuto && (o_.normalizeRows || !o_.raw.empty())) o_.op = FormFactorOperator::kDense;
  if (Sparse()) CheckSparseOptions();
  if (o_.checkpoint.On()) {
    if (o_.hemicubeGather)
      throw InputError("--checkpoint-dir: --hemicube-mode gather keeps no rows to checkpoint (use --hemicube-mode rows)");
    if (!(o_.checkpoint.everyMinutes >= 0)) throw InputError("--checkpoint-every must be 0 or more minutes");
  } else if (o_.checkpoint.restart) {
    throw InputError("--restart needs --checkpoint-dir: the folder to continue from");
  }
  const std::string checkpointJson = o_.checkpoint.On() ? RowCheckpoint::JsonPathIn(o_.checkpoint.dir) : "";
  CheckOutputsDistinct(SceneInputPaths(o_.input.files, o_.input.materials),
                       {{"--output", o_.output}, {"--raw", o_.raw}, {"--timings", o_.timings},
                        {"--checkpoint-dir", checkpointJson}});
  // The checkpoint is an output too: two runs continuing one checkpoint, or starting one, would each write it.
  locks_ = std::make_unique<OutputLocks>(MPI_COMM_WORLD, std::vector<std::string>{o_.output, o_.raw, o_.timings});
  if (o_.checkpoint.On()) {
    RowCheckpoint::MakeFolder(MPI_COMM_WORLD, o_.checkpoint.dir);
    checkpointLock_ = std::make_unique<OutputLocks>(MPI_COMM_WORLD, std::vector<std::string>{checkpointJson});
  }
  if (!o_.output.empty()) CheckOutputPath("--output", o_.output);
  if (!o_.raw.empty()) CheckOutputPath("--raw", o_.raw);
  if (!o_.timings.empty()) CheckOutputPath("--timings", o_.timings);
  if (o_.checkpoint.On()) RowCheckpoint::RefuseUnlessRestarting(MPI_COMM_WORLD, o_.checkpoint);
}

void FormFactorJob::CheckSparseOptions() const {
  if (o_.normalizeRows)
    throw InputError("--normalize-rows scales whole rows; the sparse operator keeps F as computed and reports "
                     "what it drops (leave out --normalize-rows, or use --operator dense)");
  if (!o_.raw.empty())
    throw InputError("--raw writes the dense N x N matrix; the sparse operator writes CSR into the HDF5 file "
                     "(use --operator dense for --raw)");
  if (!(o_.dropBelow > 0 && o_.dropBelow < 1))
    throw InputError("--drop-below must be in (0, 1) for the sparse operator");
}

// Polygons passing through each other are a mesh problem the user should know of: how many pairs, and the first
// few by polygon number (0-based, as in /patches/face) and OBJ line (or file and face).
std::string FormFactorJob::DescribePolygon(int face) const {
  return std::to_string(scene_.faces[size_t(face)].polygon) + " (" + FaceOrigin(scene_, size_t(face)) + ")";
}

void FormFactorJob::ReportInterpenetrations() const {
  const Interpenetrations &x = geometry_.interpenetrations;
  if (!exec_.Talks()) return;
  auto list = [&](const std::vector<std::pair<int, int>> &pairs) {
    std::string text;
    for (const auto &[f, g] : pairs) text += (text.empty() ? "" : ", ") + DescribePolygon(f) + " and " + DescribePolygon(g);
    return text;
  };
  if (x.pairCount > 0)
    std::fprintf(stderr,
                 "radiosity: warning: %s: %lld pair(s) of polygons pass through each other, e.g. polygons %s; the "
                 "closed surfaces they belong to are treated as open\n",
                 o_.input.Label().c_str(), static_cast<long long>(x.pairCount), list(x.first).c_str());
  if (x.overlapPairCount > 0)
    std::fprintf(stderr,
                 "radiosity: warning: %s: %lld pair(s) of polygons overlap in one plane facing the same way, e.g. "
                 "polygons %s; the light reaching them is counted twice, so rows of F sum above 1\n",
                 o_.input.Label().c_str(), static_cast<long long>(x.overlapPairCount), list(x.firstOverlaps).c_str());
}

// A closed scene's rows sum to 1: rows well above it mean light counted twice (overlapping or interpenetrating
// polygons), and the user is told which rows and polygons, largest first. Collective.
void FormFactorJob::ReportRowsAboveOne(const std::vector<double> &rowSums, double limit) const {
  constexpr int kListed = 3;
  std::vector<std::pair<double, double>> mine;  // (row sum, patch), the rank's largest above the limit
  for (size_t r = 0; r < f_.RowCount(); ++r)
    if (rowSums[r] > limit) mine.emplace_back(rowSums[r], double(f_.rows[r]));
  long long count = (long long)mine.size(), total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total == 0) return;
  std::sort(mine.begin(), mine.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  mine.resize(kListed, {-1.0, -1.0});
  std::vector<std::pair<double, double>> all(size_t(kListed) * size_t(WorldSize()));
  MPI_Allgather(mine.data(), 2 * kListed, MPI_DOUBLE, all.data(), 2 * kListed, MPI_DOUBLE, MPI_COMM_WORLD);
  if (!exec_.Talks()) return;
  std::sort(all.begin(), all.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::string text;
  for (int k = 0; k < kListed && all[size_t(k)].first > limit; ++k) {
    const Patch &p = geometry_.patches[size_t(all[size_t(k)].second)];
    char sum[32];
    std::snprintf(sum, sizeof sum, "%.6f", all[size_t(k)].first);
    text += std::string(text.empty() ? "" : "; ") + "patch " + std::to_string(static_cast<long long>(all[size_t(k)].second)) +
            " of polygon " + DescribePolygon(p.face) + ": " + sum;
  }
  std::fprintf(stderr,
               "radiosity: warning: %s: %lld row(s) of F sum above %.6g (no closed scene does), largest: %s; "
               "look for overlapping, duplicated or interpenetrating polygons there\n",
               o_.input.Label().c_str(), total, limit, text.c_str());
}

namespace {

// Bytes every rank holds per patch whatever its rows: the patch and what the kernels derive from it alone, the
// row and owner tables of the pair exchange, per-patch flags, and the solver's vectors (B, E, rho, updates).
constexpr double kBytesPerPatch = double(sizeof(Patch) + sizeof(WholePatch)) + 64 + 16 * sizeof(double);
// The raw file's float64 rows widened from float32 rows, one block at a time (raw_matrix.h).
constexpr double kRawWideningBytes = double(kRawWideningEntries) * sizeof(double);

}  // namespace

void FormFactorJob::Prepare() {
  if (prepared_) return;
  prepared_ = true;
  const int rank = exec_.Rank(), size = exec_.Ranks();
  {
    ScopedPhase phase(exec_.Timers(), "scene load");
    scene_ = LoadSceneInput(o_.input);  // every rank reads it; a bad file fails on every rank alike
    ReportSceneWarnings(scene_, exec_.Quiet());
    meshing_ = ResolveMeshing(scene_, o_.meshing);
  }
  if (meshing_.texelSize > 0) CheckTexelMemory();
  patchCount_ = CountPatches(scene_, meshing_);
  if (patchCount_ > std::numeric_limits<int32_t>::max())
    throw InputError(o_.input.Label() + ": " + meshing_.Describe() + " gives too many patches");
  f_.n = patchCount_;
  f_.precision = o_.precision;
  if (Hemicube()) {
    distribution_ = Distribution::kBlock;  // CSR rows: one range per rank, as a CSR file has them
    f_.rows = OwnedRows(patchCount_, rank, size, distribution_);
    PrepareHemicube();
    return PrepareCheckpoint();
  }
  if (o_.op == FormFactorOperator::kAuto) return ChooseOperator(rank, size);
  if (Sparse()) distribution_ = Distribution::kBlock;  // a CSR file's rows are one range per rank
  f_.rows = OwnedRows(patchCount_, rank, size, distribution_);
  if (Sparse()) {
    PrepareSparse();
    return PrepareCheckpoint();
  }
  PrepareDense();
  PrepareCheckpoint();
}

JobIdentity FormFactorJob::Identity() const {
  char tolerance[32];
  std::snprintf(tolerance, sizeof tolerance, "%.17g", o_.tolerance);
  JobIdentity identity = MakeSceneStamp(o_.input, meshing_, patchCount_);
  identity.insert(identity.end(), {{"version", RAD_VERSION},
                                   {"input", o_.input.Attribute()},
                                   {"visibility", VisibilityName(o_.visibility)},
                                   {"shadow_rays", std::to_string(o_.shadowRays)},
                                   {"seed", std::to_string(o_.seed)},
                                   {"quadrature_tolerance", tolerance},
                                   {"precision", PrecisionName(o_.precision)},
                                   // The GPU computes each row whole (the cores each pair once, for two rows) and
                                   // traces hemicubes on its own BVH: neither continues the other's checkpoint.
                                   {"backend", BackendName(exec_.UsedBackend())}});
  char threshold[32];
  std::snprintf(threshold, sizeof threshold, "%.17g", WalkThreshold());
  if (Sparse())  // (dense rows say nothing, so that their checkpoints of before still continue)
    identity.insert(identity.end(), {{"operator", OperatorName(o_.op)},
                                     {Hierarchical() ? "operator_tolerance" : "drop_below", threshold}});
  if (meshing_.refined)  // `run --refine`'s patches: made of a solve, so named by their corners
    identity.emplace_back("refined_patches_fnv1a", HashPatchCorners(*meshing_.refined));
  if (Hemicube())
    identity.insert(identity.end(), {{"method", "hemicube"},
                                     {"hemicube_resolution", std::to_string(o_.hemicube.resolution)},
                                     {"hemicube_rotation", o_.hemicube.rotate ? "1" : "0"}});
  return identity;
}

// Collective, once the operator is dense (or the rows the hemicube's): the checkpoint folder taken, and read back
// with --restart.
void FormFactorJob::PrepareCheckpoint() {
  if (!o_.checkpoint.On()) return;
  checkpoint_ = std::make_unique<RowCheckpoint>(MPI_COMM_WORLD, o_.checkpoint, Identity(), patchCount_, exec_.Talks(),
                                                Hemicube() || Sparse() ? CheckpointRows::kCsr : CheckpointRows::kDense);
}

// Rows in rounds for checkpoints: at least 4 rows a thread (at most 256 rounds), as many on every rank, so that a
// checkpoint (or a signal's) waits for at most a round.
int FormFactorJob::AgreedRoundCount() const {
  const long long mostRows = (patchCount_ + exec_.Ranks() - 1) / exec_.Ranks();
  long long count = std::clamp<long long>(mostRows / (4LL * exec_.Threads()), 1, 256), agreed = 1;
  RAD_MPI(MPI_Allreduce(&count, &agreed, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
  return int(agreed);
}

void FormFactorJob::DiscardCheckpoint() {
  if (checkpoint_) checkpoint_->Remove();
}

// Texels far too small are refused before they are counted (which takes as long as making them): a texel holds at
// most its own area of the polygon, so the polygons' area in texels is a floor on the patches.
void FormFactorJob::CheckTexelMemory() {
  const double least = TexelPatchFloor(scene_, MakeTexelCharts(scene_, meshing_.texelSize));
  CheckMemoryNeed(MPI_COMM_WORLD, least * kBytesPerPatch, o_.memoryLimit,
                  [&](double worst, double limit, const std::string &source) {
                    char text[320];
                    std::snprintf(text, sizeof text,
                                  "--texel-size %g gives at least %.3g texel patches, whose data alone need %s on a "
                                  "rank, more than the %s it may use (%s): take a larger --texel-size",
                                  meshing_.texelSize, least, FormatBytes(worst).c_str(), FormatBytes(limit).c_str(),
                                  source.c_str());
                    return o_.input.Label() + ": " + text;
                  });
}

// Hemicube rows hold at most one entry per pixel or per patch, whichever is fewer: checked at that bound,
// beside the patches and the per-thread accumulators, before the patches are made.
void FormFactorJob::PrepareHemicube() {
  // Gathering without rows holds the patches and B alone.
  const double perRow =
      o_.hemicubeGather ? 0.0 : double(std::min<long long>(patchCount_, HemicubePixels(o_.hemicube.resolution)));
  const double entryBytes = (f_.precision == Precision::kFloat ? 4 : 8) + sizeof(int32_t);
  // Each row's entries are held twice while the rows are joined into one CSR array (or, with checkpoints, while
  // a restart's rows read back wait for their round beside the rows made).
  const double need = double(f_.RowCount()) * perRow * entryBytes * 2 +
                      double(patchCount_) * (kBytesPerPatch + 64 + 8.0 * exec_.Threads());
  memory_ = CheckMemoryNeed(MPI_COMM_WORLD, need, o_.memoryLimit, [&](double worst, double limit,
                                                                       const std::string &source) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "%lld patches with hemicube rows of up to %.0f entries need up to %s on a rank, more than the %s "
                  "it may use (%s): use more ranks, a smaller --hemicube, --precision float or fewer patches",
                  patchCount_, perRow, FormatBytes(worst).c_str(), FormatBytes(limit).c_str(), source.c_str());
    return o_.input.Label() + ": " + text;
  });
  {
    ScopedPhase phase(exec_.Timers(), "acceleration");
    geometry_ = BuildFormFactorGeometry(scene_, meshing_);
  }
  if (exec_.Talks())
    std::fprintf(stderr,
                 "radiosity: %s: %zu polygons, %lld patches, %d rank(s) x %d thread(s), hemicube %d x %d x %d "
                 "(%d rays a row%s), at most %.1f MiB of F per rank%s (%s)\n",
                 o_.input.Label().c_str(), scene_.faces.size(), patchCount_, exec_.Ranks(), exec_.Threads(),
                 o_.hemicube.resolution, o_.hemicube.resolution, o_.hemicube.resolution / 2,
                 HemicubePixels(o_.hemicube.resolution), o_.hemicube.rotate ? ", each turned at random" : "",
                 double(f_.RowCount()) * perRow * entryBytes / (1 << 20),
                 o_.hemicubeGather ? ", gathering every iteration without F" : "", memory_.Describe().c_str());
}

SolverResult FormFactorJob::RunGathering(double tolerance, int maxIterations) {
  Prepare();
  if (exec_.Talks() && exec_.UsedBackend() != Backend::kCpu)
    std::fprintf(stderr, "radiosity: note: hemicubes are traced on the CPU cores (Embree)\n");
  std::vector<double> rowSums;
  SolverResult result = GatherByHemicubes(MPI_COMM_WORLD, scene_, geometry_.patches, f_.rows, o_.hemicube, tolerance,
                                          maxIterations, exec_.Timers(), exec_.Quiet(), rowSums);
  hemicubeRays_ = (long long)f_.rows.size() * HemicubePixels(o_.hemicube.resolution) * result.sweeps;
  exec_.Timers().SetCounter("solver sweeps", exec_.Rank() == 0 ? result.sweeps : 0);
  double mn = HUGE_VAL, mx = -HUGE_VAL, total = 0;
  for (double s : rowSums) mn = std::min(mn, s), mx = std::max(mx, s);
  for (double s : GatherPerPatch(rowSums)) total += s;  // in row order: the same bits for any rank count
  double gmn = 0, gmx = 0;
  MPI_Allreduce(&mn, &gmn, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mx, &gmx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  closure_ = ClosureStats{gmn, total / double(std::max<long long>(patchCount_, 1)), gmx};
  SummariseSparse(rowSums);
  return result;
}

void FormFactorJob::RunHemicube() {
  ScopedPhase phase(exec_.Timers(), "hemicube rows");
  if (checkpoint_) return RunHemicubeInRounds();
  if (exec_.UsedBackend() == Backend::kGpu)  // the pixels on the project's BVH, the same rows' code
    ComputeHemicubeRowsGpu(scene_, geometry_.patches, f_.rows, o_.hemicube, f_, hemicubeRays_);
  else
    ComputeHemicubeRowsCpu(scene_, geometry_.patches, f_.rows, o_.hemicube, f_, hemicubeRays_, exec_.Talks());
}

namespace {

// The arrays of two sets of CSR rows (entries, dropped sums, the rows' far links) exchanged, without a copy.
void SwapCsrArrays(FormFactorRows &a, FormFactorRows &b) {
  std::swap(a.indptr, b.indptr);
  std::swap(a.columnLow, b.columnLow);
  std::swap(a.columnSpanStart, b.columnSpanStart);
  std::swap(a.f64, b.f64);
  std::swap(a.f32, b.f32);
  std::swap(a.dropped, b.dropped);
  a.links.SwapRows(b.links);
}

}  // namespace

// With checkpoints: the hemicube's rows in rounds (RunRowsAloneInRounds). Each row is traced whole on its own.
void FormFactorJob::RunHemicubeInRounds() {
  const bool gpu = exec_.UsedBackend() == Backend::kGpu;
  std::unique_ptr<HemicubeTracer> tracer;
  if (!gpu) tracer = std::make_unique<HemicubeTracer>(scene_, geometry_.patches);
  RunRowsAloneInRounds("hemicube rows", false, [&](size_t, size_t, FormFactorRows &part) {
    long long rays = 0;
    if (gpu) ComputeHemicubeRowsGpu(scene_, geometry_.patches, part.rows, o_.hemicube, part, rays);
    else AppendHemicubeRowsCpu(*tracer, geometry_.patches, part.rows, o_.hemicube, part, nullptr);
  });
  // The rays of every row, as a run never stopped counts them (a row's rays are fixed by the resolution).
  hemicubeRays_ = (long long)f_.RowCount() * HemicubePixels(o_.hemicube.resolution);
}

// With checkpoints: the rank's CSR rows in rounds (as many on every rank), each row computed whole on its own
// (`compute` fills `part`, CSR rows begun, with its rows: local rows [begin, end), none done before), so that a
// row is done with its round; a restart reads the rows the checkpoint holds back rather than computing them
// again (the same bits: such a row depends on itself alone). With `sums`, the rows keep dropped sums; with far
// links when the operator is hierarchical.
void FormFactorJob::RunRowsAloneInRounds(const char *what, bool sums,
                                         const std::function<void(size_t, size_t, FormFactorRows &)> &compute,
                                         const std::function<NamedCounts()> &more) {
  const std::vector<long long> &rows = f_.rows;
  const size_t local = rows.size();
  const int rounds = AgreedRoundCount();
  const bool links = Hierarchical();
  FormFactorRows restored;  // the checkpoint's rows of this rank, the others empty
  restored.n = f_.n;
  restored.rows = rows;
  restored.precision = f_.precision;
  checkpoint_->Restore(restored, &geometry_.patches);
  restoredBytes_ = restored.StoredBytes() + restored.links.StoredBytes() + double(restored.dropped.size()) * 8;
  const std::vector<uint8_t> wasDone = checkpoint_->Done();
  auto doneBefore = [&](size_t r) { return !wasDone.empty() && wasDone[size_t(rows[r])] != 0; };
  std::vector<uint8_t> done = wasDone.empty() ? std::vector<uint8_t>(size_t(patchCount_), 0) : wasDone;
  long long toCompute = 0;
  for (size_t r = 0; r < local; ++r) toCompute += doneBefore(r) ? 0 : 1;
  auto begin = [&](FormFactorRows &rowsOf) {
    rowsOf.n = f_.n;
    rowsOf.precision = f_.precision;
    StartCsrRows(rowsOf);
    rowsOf.dropped.clear();
    rowsOf.links = FarLinks{};
    if (links) rowsOf.links.Begin((long long)tree_->nodes.size(), f_.n);
  };
  Progress progress(what, toCompute, exec_.Talks());
  begin(f_);
  HoldInterrupts(true);  // a signal now writes a checkpoint at the end of the round, then stops
  size_t made = 0;       // rows [0, made) of f_ are done
  for (int k = 0; k < rounds; ++k) {
    const size_t end = local * size_t(k + 1) / size_t(rounds);
    for (size_t r = made; r < end;) {
      if (doneBefore(r)) {
        f_.AppendCsrRow(restored, r++, sums);
        continue;
      }
      size_t last = r;  // the run of rows not done from r on, computed together
      while (last < end && !doneBefore(last)) ++last;
      FormFactorRows part;
      begin(part);
      part.rows.assign(rows.begin() + long(r), rows.begin() + long(last));
      compute(r, last, part);
      for (size_t q = 0; q < part.rows.size(); ++q) f_.AppendCsrRow(part, q, sums);
      progress.Advance((long long)(last - r));
      r = last;
    }
    for (size_t r = made; r < end; ++r) done[size_t(rows[r])] = 1;
    made = end;
    RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, done.data(), int(done.size()), MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD));
    // A checkpoint holds the rows made, then those read back that wait for a later round: f_'s arrays are lent
    // to it for the write (no copy) and the waiting rows appended, then taken off again.
    FormFactorRows lent;
    bool assembled = false;
    checkpoint_->AfterRound(
        [&]() -> const FormFactorRows & {
          lent.n = f_.n;
          lent.rows = rows;
          lent.precision = f_.precision;
          lent.storage = Storage::kCsr;
          SwapCsrArrays(lent, f_);
          lent.links.tree = tree_;
          assembled = true;
          for (size_t r = made; r < local; ++r) {
            if (doneBefore(r)) lent.AppendCsrRow(restored, r, sums);
            else lent.AppendEmptyCsrRow(sums);
          }
          return lent;
        },
        done, counters_, more ? more() : NamedCounts{});
    if (assembled) {
      lent.TruncateCsrRows(made, sums);
      SwapCsrArrays(lent, f_);
    }
  }
  progress.Finish();
  HoldInterrupts(false);
  const int signal = AgreedPendingInterrupt(MPI_COMM_WORLD);
  if (signal != 0) StopForInterrupt(signal, "stopped; the last checkpoint is complete");
  if (exec_.Rank() == 0) counters_.Add(checkpoint_->DoneCounters());  // the done rows' work, counted once
}

// --operator auto: dense when its memory check passes, else the operator beyond it (said in one line, also
// under --quiet, since it changes what is computed). When neither fits, the dense check's message says so,
// with the other's.
void FormFactorJob::ChooseOperator(long long rank, long long size) {
  RankMemoryLimit(MPI_COMM_WORLD, o_.memoryLimit);  // a bad --memory-limit is its own error, said once
  o_.op = FormFactorOperator::kDense;
  f_.rows = OwnedRows(patchCount_, rank, size, distribution_);
  std::string denseRefusal;
  try {
    PrepareDense();
  } catch (const InputError &e) {  // every rank throws the same (CheckMemory is collective)
    denseRefusal = e.what();
  }
  if (denseRefusal.empty()) return PrepareCheckpoint();
  o_.op = o_.beyondDense;
  CheckSparseOptions();
  distribution_ = Distribution::kBlock;
  f_.rows = OwnedRows(patchCount_, rank, size, distribution_);
  try {
    PrepareSparse();
  } catch (const InputError &e) {
    throw InputError(denseRefusal + " (--operator auto: nor does the " + OperatorName(o_.op) +
                     " operator fit: " + e.what() + ")");
  }
  if (rank == 0)
    std::fprintf(stderr,
                 "radiosity: notice: --operator auto: dense F (%s a rank) does not fit in the memory a rank may "
                 "use; using the %s operator (%s %g)\n",
                 FormatBytes(denseBytesPerRank_).c_str(), OperatorName(o_.op),
                 Hierarchical() ? "--operator-tolerance" : "--drop-below", WalkThreshold());
  PrepareCheckpoint();
}

// Memory, before anything large is allocated or any file created.
void FormFactorJob::PrepareDense() {
  const int size = exec_.Ranks();
  const bool narrow = f_.precision == Precision::kFloat;
  MemoryRequest request;
  request.what = o_.input.Label();
  request.patches = patchCount_;
  request.rows = (long long)f_.RowCount();
  request.model.bytesPerEntry = narrow ? 4 : 8;
  request.model.pairExchange = exec_.UsedBackend() == Backend::kCpu;  // nothing to exchange on one rank
  request.model.exchangeChunkEntries = kExchangeChunkEntries;
  request.model.bytesPerPatch = kBytesPerPatch;
  if (narrow && (!o_.raw.empty() || o_.checkpoint.On())) request.model.fixedBytes += kRawWideningBytes;
  request.model.fixedBytes += FormFactorStagingBytes(exec_.UsedBackend(), narrow);
  if (!narrow) {
    request.floatHint = "--precision float";
    request.floatExtraBytes = FormFactorStagingBytes(exec_.UsedBackend(), true);
  }
  // A coarser --subdiv to suggest; meshing by size gets a patch count instead (--patches); patches refined where
  // B varies, the count alone (neither option sets it).
  const bool bySubdiv = meshing_.maxPatchSize <= 0 && meshing_.texelSize <= 0;
  if (!meshing_.refined && bySubdiv) {
    request.subdiv = meshing_.subdiv;
    for (int k = 0; k <= meshing_.subdiv; ++k) request.patchesBySubdiv.push_back(CountPatches(scene_, k));
  }
  if (!meshing_.refined && meshing_.maxPatchSize > 0) request.patchCountOption = "--patches";
  denseBytesPerRank_ = request.model.MatrixBytes(patchCount_, (long long)f_.RowCount());
  memory_ = CheckMemory(MPI_COMM_WORLD, request, o_.memoryLimit);

  if (exec_.Talks() && !exec_.ThreadNote().empty())
    std::fprintf(stderr, "radiosity: note: %s\n", exec_.ThreadNote().c_str());
  if (exec_.Talks())
    std::fprintf(stderr,
                 "radiosity: %s: %zu polygons, %lld patches, %d rank(s) x %d thread(s), %.1f MiB of F per rank "
                 "(%s, %.1f MiB needed in all; %s)\n",
                 o_.input.Label().c_str(), scene_.faces.size(), patchCount_, size, exec_.Threads(),
                 request.model.MatrixBytes(patchCount_, (long long)f_.RowCount()) / (1 << 20),
                 narrow ? "float32" : "float64", memory_.needBytes / (1 << 20), memory_.Describe().c_str());
}

// The sparse operator's memory is its entries, which only the walk of the patch tree can bound: the tree is
// built and walked here (no kernel), and the bound checked before anything is computed.
void FormFactorJob::PrepareSparse() {
  // Per row four doubles, per patch its data and tree share, and the operator check's dense rows: checked
  // first on their own, before the patches are made, since the walks below take time as the entries they bound (minutes on a cube of 60000
  // patches at --drop-below 1e-6), and a limit that these alone exceed needs no walk to be refused.
  const double checkBytes = double(std::min<long long>(o_.checkRows, (long long)f_.RowCount())) *
                            double(patchCount_) * sizeof(double);
  heldBytes_ = checkBytes + double(f_.RowCount()) * 4 * sizeof(double) +
               double(patchCount_) *
                   (kBytesPerPatch + sizeof(PatchSphere) + sizeof(PatchPoint) + 2 * sizeof(int32_t) + sizeof(PatchTreeNode) / 4);
  if (Hierarchical())  // the elements
    heldBytes_ += double(patchCount_) * (2 * sizeof(PatchTreeNode) + 2 * sizeof(int32_t) + 3 * sizeof(void *));
  CheckMemoryNeed(MPI_COMM_WORLD, heldBytes_, o_.memoryLimit,
                  [&](double worst, double limit, const std::string &source) {
                    return SparseRefusal(worst, limit, source, -1);
                  });
  {
    ScopedPhase phase(exec_.Timers(), "acceleration");
    geometry_ = BuildFormFactorGeometry(scene_, meshing_);
    tree_ = std::make_shared<PatchTree>(BuildPatchTree(geometry_.patches));
    if (Hierarchical()) {
      elements_ = std::make_shared<ElementForest>(BuildElementForest(geometry_.patches));
      embree_ = std::make_unique<EmbreeScene>(scene_);
    }
  }
  // The hierarchical operator's elements take their links before the rows are counted: where each row's walk
  // starts depends on their shadow rays.
  if (Hierarchical()) {
    ScopedPhase phase(exec_.Timers(), "element walk");
    elementWalk_ = std::make_unique<ElementWalk>(WalkElements(geometry_, *embree_, *tree_, *elements_, f_.rows,
                                                              WalkThreshold(), o_.seed, counters_, exec_.Talks()));
  }
  {
    ScopedPhase phase(exec_.Timers(), "sparse candidates");
    candidateCounts_ = CountSparseCandidates(geometry_.patches, *tree_, f_.rows, WalkThreshold(), elementWalk_.get(),
                                             Hierarchical() ? &linkBounds_ : nullptr, Hierarchical());
  }
  candidates_ = 0;
  for (long long c : candidateCounts_) candidates_ += c;
  // The elements' links, with where each row starts.
  if (elementWalk_) {
    for (const PackedNodeList &s : elementWalk_->handed) heldBytes_ += double(s.Bytes());
    heldBytes_ += double(elementWalk_->handed.size()) * sizeof(PackedNodeList) +
                  double(elementWalk_->startOf.size()) * sizeof(int32_t);
    for (const std::vector<ElementLink> &l : elementWalk_->links)
      heldBytes_ += double(l.size()) * 2 * sizeof(ElementLink);
  }
  // The rows are computed block by block (sparse_form_factors.h): what they keep is known only as they go, and
  // checked before each block; here, that the largest block fits beside the rest.
  const std::vector<long long> *linkBounds = linkBounds_.empty() ? nullptr : &linkBounds_;
  const std::vector<size_t> blocks = SparseRowBlocks(candidateCounts_, 0, linkBounds);
  const bool narrow = f_.precision == Precision::kFloat;
  double largestBlock = 0;
  for (size_t b = 0; b + 1 < blocks.size(); ++b)
    largestBlock = std::max(largestBlock, SparseBlockBytes(candidateCounts_, linkBounds, blocks[b], blocks[b + 1],
                                                           Hierarchical(), narrow, b + 2 < blocks.size()));
  memory_ = CheckMemoryNeed(MPI_COMM_WORLD, heldBytes_ + largestBlock, o_.memoryLimit,
                            [&](double worst, double limit, const std::string &source) {
                              return SparseRefusal(worst, limit, source, 0);
                            });
  // What the rows would hold at the end if each kept every candidate and made every far link its walk may
  // make, beside the largest block's work. No refusal: most candidates turn out hidden or far, and most skips
  // are not links. But beyond the limit the blocks' check may stop the run late, when what the rows keep
  // outgrows it, so it is said now: a city split to N = 999857 stopped so after 29 minutes (587187 rows of
  // 999857 done, 18.2 GiB available).
  double rowsBound = heldBytes_ + largestBlock + double(candidates_) * KeptEntryBytes(narrow) +
                     double(f_.rows.size()) *
                         KeptRowBytes(f_.n, Hierarchical() ? FarLinks::NameCount((long long)tree_->nodes.size(), f_.n) : 0);
  for (long long links : linkBounds_) rowsBound += double(links) * kBytesPerFarLink;
  double worstRowsBound = 0;
  MPI_Allreduce(&rowsBound, &worstRowsBound, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (exec_.Talks() && worstRowsBound > memory_.limitBytes)
    std::fprintf(stderr,
                 "radiosity: warning: the rows may need up to %s on a rank if they keep every candidate entry and "
                 "far link, more than the %s it may use: if what they keep outgrows it, the run stops with exit 2 "
                 "before the block that would not fit (%s)\n",
                 FormatBytes(worstRowsBound).c_str(), FormatBytes(memory_.limitBytes).c_str(),
                 SparseRemedy().c_str());
  long long allCandidates = 0;
  MPI_Allreduce(&candidates_, &allCandidates, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (exec_.Talks() && !exec_.ThreadNote().empty())
    std::fprintf(stderr, "radiosity: note: %s\n", exec_.ThreadNote().c_str());
  if (exec_.Talks())
    std::fprintf(stderr,
                 "radiosity: %s: %zu polygons, %lld patches, %d rank(s) x %d thread(s), %s operator at "
                 "%s %g: %lld of %.4g entries are candidates (%.3g %%), at most %.1f MiB of F on this rank "
                 "(%s)\n",
                 o_.input.Label().c_str(), scene_.faces.size(), patchCount_, exec_.Ranks(), exec_.Threads(),
                 OperatorName(o_.op),
                 Hierarchical() ? "--operator-tolerance" : "--drop-below", WalkThreshold(),
                 allCandidates, double(patchCount_) * double(patchCount_ - 1),
                 patchCount_ > 1 ? 100.0 * double(allCandidates) / (double(patchCount_) * double(patchCount_ - 1)) : 0.0,
                 double(candidates_) * KeptEntryBytes(narrow) / (1 << 20), memory_.Describe().c_str());
}

std::string FormFactorJob::SparseRemedy() const {
  char remedy[160];
  std::snprintf(remedy, sizeof remedy, "raise %s, use more ranks%s, or give each rank more memory",
                Hierarchical() ? "--operator-tolerance" : "--drop-below",
                f_.precision == Precision::kFloat ? "" : ", --precision float");
  return remedy;
}

std::string FormFactorJob::SparseRefusal(double need, double limit, const std::string &source, long long rowsDone) const {
  const char *thresholdName = Hierarchical() ? "--operator-tolerance" : "--drop-below";
  char why[256];
  // What every rank holds for each patch does not shrink with the threshold, the ranks or the precision.
  const std::string remedy = rowsDone < 0 ? "use fewer patches or give each rank more memory" : SparseRemedy();
  if (rowsDone < 0)
    std::snprintf(why, sizeof why, "(its geometry and trees alone, before its rows' entries are bounded)");
  else if (rowsDone > 0)
    std::snprintf(why, sizeof why,
                  "with %lld of its %zu rows done (what they kept, and the next block of rows keeping every "
                  "candidate entry: the patch tree's bound)",
                  rowsDone, f_.RowCount());
  else
    std::snprintf(why, sizeof why,
                  "(its geometry and trees, and its largest block of rows keeping every candidate entry: the "
                  "patch tree's bound)");
  char line[768];
  std::snprintf(line, sizeof line,
                "%s: not enough memory for the %s operator at %s %g: a rank needs up to %s %s but may use %s (%s); %s",
                o_.input.Label().c_str(), OperatorName(o_.op), thresholdName, WalkThreshold(),
                FormatBytes(need).c_str(), why, FormatBytes(limit).c_str(), source.c_str(), remedy.c_str());
  return std::string(line);
}

void FormFactorJob::RunSparse(const FormFactorOptions &ff) {
  const RowOwners owners{MPI_COMM_WORLD, patchCount_, exec_.Ranks(), distribution_};
  if (exec_.Talks() && exec_.UsedBackend() != Backend::kCpu)
    std::fprintf(stderr, "radiosity: note: the sparse operator computes F on the CPU cores (Embree)\n");
  if (!embree_) {
    ScopedPhase phase(exec_.Timers(), "acceleration");
    embree_ = std::make_unique<EmbreeScene>(scene_);
  }
  const EmbreeScene *embree = embree_.get();
  SparseCounters mine;
  // The elements' links held for the solve (HoldElementLinks) before the rows, and the walk's own copy freed:
  // held after the rows, both copies were the run's peak (a quarter of a GiB more on a city of 102096
  // patches); the rows need only where each one's walk starts.
  ElementFarLinks elementLinks;
  if (Hierarchical()) {
    ScopedPhase phase(exec_.Timers(), "element links held");
    mine.elementLinks = elementWalk_->linkCount;
    mine.smoothLinks += elementWalk_->smoothLinkCount;
    elementSmoothLinks_ = elementWalk_->smoothLinkCount;
    elementLinks = HoldElementLinks(elements_, elementWalk_->links, f_.rows, geometry_.patches);
    std::vector<std::vector<ElementLink>>().swap(elementWalk_->links);
    ReturnFreedMemory();  // the walk's own links, one small array per element
  }
  SparseStreaming streaming;
  streaming.limitBytes = memory_.limitBytes;
  streaming.heldBytes = heldBytes_;
  streaming.linkBounds = linkBounds_.empty() ? nullptr : &linkBounds_;
  streaming.refuse = [&](double need, double limit, long long rowsDone) {
    return SparseRefusal(need, limit, memory_.source, rowsDone);
  };
  if (checkpoint_) {
    // Each row alone (SparseStreaming::rowsAlone: the same rows, every pair from both sides), so that a round's
    // rows are done when it ends; each run of rows not done with its part of the counts, bounds and walk. Sharing
    // the pairs within a round would save little, a row's pairs spanning the scene (16 rounds in place of 92 on
    // the reference scene at 736 patches: 1.95 times the pairs of a run without checkpoints, not 2.00; 1.87 on a
    // 6 x 6 city of 1 m patches), and would make the counts depend on the split.
    RunRowsAloneInRounds("form factors (sparse)", true, [&](size_t begin, size_t end, FormFactorRows &part) {
      const auto slice = [&](const std::vector<long long> &v) {
        return std::vector<long long>(v.begin() + long(begin), v.begin() + long(end));
      };
      const std::vector<long long> bounds = linkBounds_.empty() ? std::vector<long long>{} : slice(linkBounds_);
      SparseStreaming alone = streaming;
      alone.rowsAlone = true;
      alone.walkFirstRow = begin;
      alone.linkBounds = bounds.empty() ? nullptr : &bounds;
      alone.heldBytes = heldBytes_ + restoredBytes_ + f_.StoredBytes() + f_.links.StoredBytes();
      ComputeSparseRowsCpu(geometry_, *embree, *tree_, slice(candidateCounts_), WalkThreshold(), Hierarchical(), ff,
                           part, exec_.Timers(), counters_, mine, false, nullptr, elementWalk_.get(), alone);
    }, [&] { return RowWork(mine); });
    // The done rows' work as the checkpoint counted it, once; what the rows hold, from the rows.
    if (exec_.Rank() == 0) {
      const NamedCounts done = RowWork(SparseCounters{});
      SparseCounters before;
      for (const auto &[name, unused] : done) *RowWorkField(before, name) = checkpoint_->DoneCount(name);
      mine.Add(before);
    }
    mine.kept = f_.EntryCount();
    mine.links = f_.links.LinkCount();
  } else {
    // Said by the rank whose rows outpace its memory, once: it may not be the one that prints progress.
    auto outpaced = [&](double projected, double limit, long long rowsDone) {
      std::fprintf(stderr,
                   "radiosity: warning: rank %d: at the pace of its first %lld of %zu rows it needs about %s in all, "
                   "more than the %s it may use (%s): the run will likely stop with exit 2 before its last rows "
                   "(%s)\n",
                   exec_.Rank(), rowsDone, f_.RowCount(), FormatBytes(projected).c_str(), FormatBytes(limit).c_str(),
                   memory_.source.c_str(), SparseRemedy().c_str());
    };
    if (!exec_.Options().quiet) streaming.outpaced = outpaced;
    AllocateOnEveryRank(MPI_COMM_WORLD, "the rank's sparse rows of F", [&] {
      ComputeSparseRowsCpu(geometry_, *embree, *tree_, candidateCounts_, WalkThreshold(), Hierarchical(), ff, f_,
                           exec_.Timers(), counters_, mine, exec_.Talks(), &owners, elementWalk_.get(), streaming);
    });
  }
  if (Hierarchical()) {
    f_.links.elements = std::move(elementLinks);
    f_.links.tree = tree_;
    f_.links.area.resize(geometry_.patches.size());
    for (size_t j = 0; j < geometry_.patches.size(); ++j) f_.links.area[j] = geometry_.patches[j].area;
  }
  if (o_.checkRows > 0) {
    ScopedPhase phase(exec_.Timers(), "operator check");
    check_ = CheckOperatorRows(MPI_COMM_WORLD, geometry_, *embree, ff, f_, o_.checkRows, elementWalk_.get());
  }
  elementWalk_.reset();  // where the rows' walks started: done with
  double held[4] = {f_.StoredBytes(), f_.links.StoredBytes(), f_.links.elements.StoredBytes(),
                    mine.handedPeakBytes};
  MPI_Allreduce(held, rowsMemory_, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long long counts[] = {mine.candidates, mine.pairsEvaluated, mine.kept, mine.droppedEntries, mine.nodesSkipped,
                        mine.patchesSkipped, mine.links, mine.elementLinks, mine.smoothLinks};
  long long all[std::size(counts)] = {};
  MPI_Allreduce(counts, all, int(std::size(counts)), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  sparseTotals_ = SparseCounters{all[0], all[1], all[2], all[3], all[4], all[5], all[6], all[7], all[8]};
}

// The sparse rows' own counts of work a checkpoint keeps (the elements' are made again by a restart; what the rows
// keep is counted from them).
NamedCounts FormFactorJob::RowWork(const SparseCounters &c) {
  return {{"candidates", c.candidates},         {"pairs_evaluated", c.pairsEvaluated},
          {"entries_dropped", c.droppedEntries}, {"tree_nodes_skipped", c.nodesSkipped},
          {"patches_skipped", c.patchesSkipped}, {"row_smooth_links", c.smoothLinks - elementSmoothLinks_}};
}
long long *FormFactorJob::RowWorkField(SparseCounters &c, const std::string &name) {
  if (name == "candidates") return &c.candidates;
  if (name == "pairs_evaluated") return &c.pairsEvaluated;
  if (name == "entries_dropped") return &c.droppedEntries;
  if (name == "tree_nodes_skipped") return &c.nodesSkipped;
  if (name == "patches_skipped") return &c.patchesSkipped;
  return &c.smoothLinks;
}

// Each row's sky view factor, the share of its light that leaves the scene: 1 less its kept entries and what
// it dropped (in a closed scene, the quadrature's and the estimate's error). Reduced over the ranks for the report.
// Collective: one value per local row to one per patch, on every rank (each patch's from its owner alone: exact).
std::vector<double> FormFactorJob::GatherPerPatch(const std::vector<double> &perRow) const {
  std::vector<double> mine(size_t(patchCount_), 0.0), all(size_t(patchCount_), 0.0);
  for (size_t r = 0; r < f_.RowCount(); ++r) mine[size_t(f_.rows[r])] = perRow[r];
  RAD_MPI(MPI_Allreduce(mine.data(), all.data(), int(patchCount_), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return all;
}

void FormFactorJob::SummariseSparse(const std::vector<double> &rowSums) {
  skyViewFactor_.resize(f_.RowCount());
  std::vector<double> dropped(f_.RowCount(), 0.0);  // hemicube rows drop nothing
  double droppedMax = 0, skyMin = HUGE_VAL, skyMax = -HUGE_VAL;
  for (size_t r = 0; r < f_.RowCount(); ++r) {
    if (!f_.dropped.empty()) dropped[r] = f_.dropped[r];
    skyViewFactor_[r] = 1 - rowSums[r] - dropped[r];
    droppedMax = std::max(droppedMax, dropped[r]);
    skyMin = std::min(skyMin, skyViewFactor_[r]);
    skyMax = std::max(skyMax, skyViewFactor_[r]);
  }
  // The means summed in row order, every row's value on every rank: the same bits for any rank count.
  double allSums[2] = {0, 0};
  for (double d : GatherPerPatch(dropped)) allSums[0] += d;
  for (double v : GatherPerPatch(skyViewFactor_)) allSums[1] += v;
  double maxima[3] = {droppedMax, skyMax, -skyMin}, allMaxima[3] = {};
  MPI_Allreduce(maxima, allMaxima, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double n = double(std::max<long long>(patchCount_, 1));
  long long nonzeros = Hemicube() ? f_.EntryCount() : sparseTotals_.kept, allNonzeros = nonzeros;
  if (Hemicube()) MPI_Allreduce(&nonzeros, &allNonzeros, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  sparseSummary_ = SparseSummary{allSums[0] / n, allMaxima[0], -allMaxima[2], allSums[1] / n, allMaxima[1],
                                 allNonzeros};
}

// Dense rows; with checkpoints, in rounds (AgreedRoundCount).
void FormFactorJob::RunDense(const FormFactorOptions &ff, const RowOwners &owners) {
  const bool narrow = f_.precision == Precision::kFloat;
  RowRounds rounds;
  if (checkpoint_) {
    rounds.count = AgreedRoundCount();
    rounds.done = checkpoint_->Done();
    rounds.restore = [&] { checkpoint_->Restore(f_); };
    rounds.after = [&](const std::vector<uint8_t> &done, const FormFactorCounters &mine) {
      checkpoint_->AfterRound(f_, done, mine);
    };
    HoldInterrupts(true);  // a signal now writes a checkpoint at the end of the round, then stops
  }
  const RowRounds *inRounds = checkpoint_ ? &rounds : nullptr;
  if (narrow)
    ComputeFormFactorRows(exec_.UsedBackend(), scene_, meshing_, geometry_, f_.rows, ff, owners, f_.f32,
                          exec_.Timers(), counters_, exec_.Talks(), inRounds);
  else
    ComputeFormFactorRows(exec_.UsedBackend(), scene_, meshing_, geometry_, f_.rows, ff, owners, f_.f64,
                          exec_.Timers(), counters_, exec_.Talks(), inRounds);
  if (checkpoint_) {
    HoldInterrupts(false);
    // Agreed, so that a signal that reached one rank after the last round stops every rank here, or none.
    const int signal = AgreedPendingInterrupt(MPI_COMM_WORLD);
    if (signal != 0) StopForInterrupt(signal, "stopped; the last checkpoint is complete");
    if (exec_.Rank() == 0) counters_.Add(checkpoint_->DoneCounters());  // the done pairs' work, counted once
  }
}

void FormFactorJob::Run() {
  Prepare();
  const long long patchCount = patchCount_;
  const bool narrow = f_.precision == Precision::kFloat;

  exec_.AnnounceBackend();
  FormFactorOptions ff;
  ff.shadowRays = o_.shadowRays;
  ff.deviceWorkLimit = o_.gpuWorkLimit;
  ff.seed = o_.seed;
  ff.pair.quadrature.relativeTolerance = o_.tolerance;
  ff.pair.visibility = o_.visibility;
  ff.normalizeRows = o_.normalizeRows;
  const RowOwners owners{MPI_COMM_WORLD, patchCount, exec_.Ranks(), distribution_};
  if (Hemicube())
    RunHemicube();
  else if (Sparse())
    RunSparse(ff);
  else
    RunDense(ff, owners);

  ReportInterpenetrations();

  // Closure: each row's sum as held (sums are per row and sequential: thread-count independent), every row's on
  // every rank, and their mean summed in row order: the same bits for any rank count.
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  std::vector<double> rowSums(f_.RowCount());
  for (size_t r = 0; r < f_.RowCount(); ++r) {
    const double s = f_.RowSum(r);
    rowSums[r] = s;
    mn = std::min(mn, s);
    mx = std::max(mx, s);
  }
  double gmn = 0, gmx = 0;
  MPI_Allreduce(&mn, &gmn, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mx, &gmx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  allRowSums_ = GatherPerPatch(rowSums);
  double total = 0;
  for (double s : allRowSums_) total += s;
  closure_ = ClosureStats{gmn, patchCount > 0 ? total / double(patchCount) : 0, gmx};
  if (Sparse() || Hemicube()) SummariseSparse(rowSums);
  // Exact entries are within --quadrature-tolerance (relative) each, float32 ones rounded once more; rays are
  // a few percent off.
  const double rowLimit = ff.pair.visibility == VisibilityMethod::kExact ? 1 + 10 * o_.tolerance + (narrow ? 1e-5 : 0) : 1.05;
  if (!o_.normalizeRows) ReportRowsAboveOne(rowSums, rowLimit);

  std::array<long long, FormFactorCounters::kFieldCount> mine{}, all{};
  for (int k = 0; k < FormFactorCounters::kFieldCount; ++k) mine[size_t(k)] = *counters_.Fields()[size_t(k)];
  MPI_Allreduce(mine.data(), all.data(), int(mine.size()), MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int k = 0; k < FormFactorCounters::kFieldCount; ++k) *totals_.Fields()[size_t(k)] = all[size_t(k)];
  // Pairs that did not get what was asked of them are said, never hidden (also in the file's attributes).
  if (exec_.Talks() && totals_.pairsOverCapacity > 0)
    std::fprintf(stderr,
                 "radiosity: warning: %lld pair(s) had more than %d occluders for the exact visibility kernel; "
                 "their visible fraction was estimated with %u shadow rays\n",
                 totals_.pairsOverCapacity, kMaxPairOccluders, o_.shadowRays);
  if (exec_.Talks() && totals_.pairsAtDepthLimit > 0)
    std::fprintf(stderr,
                 "radiosity: warning: %lld pair(s) stopped at the cubature's limit of %d cells before "
                 "--quadrature-tolerance %g\n",
                 totals_.pairsAtDepthLimit, kMaxCubatureCells, o_.tolerance);
}

void FormFactorJob::WriteFormFactors(RadiosityFileWriter &writer) const {
  WriteFormFactorRows(writer);
  // Every row's sum as held (far links included), for the XDMF view and for readers that want closure at a glance.
  if (allRowSums_.size() == size_t(patchCount_)) writer.WritePatchValues("formfactors", {{"row_sum", allRowSums_}}, {});
}

void FormFactorJob::WriteFormFactorRows(RadiosityFileWriter &writer) const {
  Attributes a;
  a.strings["method"] =
      o_.visibility == VisibilityMethod::kRays
          ? "contour integral (point-to-polygon) by adaptive Genz-Malik cubature over the smaller patch, the other "
            "entry by reciprocity; occlusion: shaft culling, then kernel-weighted stratified shadow rays (Embree "
            "on the CPU, the project's BVH on the GPU)"
          : "contour integral (point-to-polygon) by adaptive Genz-Malik cubature over the smaller patch, the other "
            "entry by reciprocity; occlusion: shaft culling, then for every cubature point the occluders' shadows "
            "cut out of the receiver and the contour integral taken over what is left (exact); pairs with more "
            "than 64 occluders by shadow rays";
  a.strings["visibility"] = VisibilityName(o_.visibility);
  a.strings["backend"] = BackendName(exec_.UsedBackend());
  a.strings["input"] = o_.input.Attribute();
  a.strings["distribution"] = DistributionName(distribution_);
  a.strings["precision"] = PrecisionName(o_.precision);
  a.numbers["subdiv"] = meshing_.subdiv;
  if (meshing_.maxPatchSize > 0) a.numbers["max_patch_size"] = meshing_.maxPatchSize;
  if (meshing_.texelSize > 0) a.numbers["texel_size"] = meshing_.texelSize;
  if (meshing_.texelSize > 0) a.numbers["lightmap_resolution"] = meshing_.lightmapResolution;
  if (meshing_.patches > 0) a.numbers["patches_requested"] = double(meshing_.patches);
  a.numbers["input_polygons"] = scene_.polygonCount;
  a.numbers["polygons_triangulated_nonplanar"] = double(scene_.repairs.nonPlanar.count);
  a.numbers["polygons_triangulated_concave"] = double(scene_.repairs.concave.count);
  a.numbers["polygons_skipped_zero_area"] = double(scene_.repairs.zeroArea.count);
  a.numbers["polygons_skipped_degenerate"] = double(scene_.repairs.degenerate.count);
  a.numbers["polygons_duplicated_dropped"] = double(scene_.repairs.duplicates.count);
  a.numbers["shadow_rays"] = o_.shadowRays;
  a.numbers["seed"] = double(o_.seed);
  a.numbers["quadrature_tolerance"] = o_.tolerance;
  a.numbers["normalize_rows"] = o_.normalizeRows ? 1 : 0;
  a.numbers["ranks"] = exec_.Ranks();
  a.numbers["row_sum_min"] = closure_.minRowSum;
  a.numbers["row_sum_mean"] = closure_.meanRowSum;
  a.numbers["row_sum_max"] = closure_.maxRowSum;
  a.numbers["pairs_exact_visibility"] = double(totals_.pairsOccluded);
  a.numbers["pairs_ray_traced"] = double(totals_.pairsRayTraced);
  a.numbers["pairs_over_occluder_capacity"] = double(totals_.pairsOverCapacity);
  a.numbers["pairs_at_cubature_depth_limit"] = double(totals_.pairsAtDepthLimit);
  a.numbers["interpenetrating_polygon_pairs"] = double(geometry_.interpenetrations.pairCount);
  a.numbers["overlapping_polygon_pairs"] = double(geometry_.interpenetrations.overlapPairCount);
  a.strings["operator"] = OperatorName(o_.op);
  if (Hemicube()) {
    a.strings["method"] = "hemicube";
    a.strings["operator"] = "hemicube rows (CSR)";
    a.numbers["hemicube_resolution"] = o_.hemicube.resolution;
    a.numbers["hemicube_rotation"] = o_.hemicube.rotate ? 1 : 0;
    a.numbers["hemicube_rays"] = double(HemicubePixels(o_.hemicube.resolution)) * double(patchCount_);
    a.numbers["nonzeros"] = double(sparseSummary_.nonzeros);
    a.numbers["sky_view_factor_min"] = sparseSummary_.skyMin;
    a.numbers["sky_view_factor_mean"] = sparseSummary_.skyMean;
    a.numbers["sky_view_factor_max"] = sparseSummary_.skyMax;
    return WriteCsrFormFactors(MPI_COMM_WORLD, writer.File(), f_, skyViewFactor_, a);
  }
  if (!Sparse()) return writer.WriteFormFactors(f_, a);
  if (Hierarchical()) a.numbers["operator_tolerance"] = o_.operatorTolerance;
  else a.numbers["drop_below"] = o_.dropBelow;
  a.numbers["nonzeros"] = double(sparseSummary_.nonzeros);
  a.numbers["pairs_evaluated"] = double(sparseTotals_.pairsEvaluated);
  a.numbers["candidates"] = double(sparseTotals_.candidates);
  a.numbers["entries_dropped"] = double(sparseTotals_.droppedEntries);
  a.numbers["tree_nodes_skipped"] = double(sparseTotals_.nodesSkipped);
  a.numbers["dropped_row_sum_mean"] = sparseSummary_.droppedMean;
  a.numbers["dropped_row_sum_max"] = sparseSummary_.droppedMax;
  a.numbers["sky_view_factor_min"] = sparseSummary_.skyMin;
  a.numbers["sky_view_factor_mean"] = sparseSummary_.skyMean;
  a.numbers["sky_view_factor_max"] = sparseSummary_.skyMax;
  if (check_.rows > 0) {
    a.numbers["check_rows"] = double(check_.rows);
    a.numbers["check_kept_entries_differing"] = double(check_.keptMismatches);
    a.numbers["check_entries_carried_twice"] = double(check_.carriedTwice);
    a.numbers["check_not_kept_mean"] = check_.notKeptMean;
    a.numbers["check_far_error_mean"] = check_.farErrorMean;
    a.numbers["check_far_error_max"] = check_.farErrorMax;
    a.numbers["check_far_error_max_row"] = double(check_.farErrorMaxRow);
    a.numbers["check_far_bias"] = check_.farBias;
    if (Hierarchical()) {
      const std::pair<const char *, const OperatorCheck::Part *> parts[] = {
          {"node_links", &check_.nodeLinks}, {"patch_links", &check_.patchLinks},
          {"element_links", &check_.elementLinks}, {"left_out", &check_.leftOut},
          {"left_out_by_rows", &check_.leftOutByRows}, {"left_out_by_elements", &check_.leftOutByElements}};
      for (const auto &[name, part] : parts) {
        a.numbers[std::string("check_far_") + name + "_mean"] = part->mean;
        a.numbers[std::string("check_far_") + name + "_abs_mean"] = part->absMean;
      }
    }
  }
  a.strings["dropped_row_sum"] =
      Hierarchical()
          ? "per row, 0: the hierarchical operator drops nothing; what its walk skips is in the far links "
            "(link_ptr, link_target, link_value) and the element links (element_link_*)"
          : "per row, the entries left out: those evaluated and below --drop-below both ways (exact), the patches "
            "skipped by their bound (point kernel at the centroids, one shadow ray between them) and the tree nodes "
            "skipped (cluster estimate from their area-weighted centres, opened where wide for their distance, "
            "times the visible share of 32 of their patches, weighted by the point kernel, two random shadow rays each)";
  WriteCsrFormFactors(MPI_COMM_WORLD, writer.File(), f_, skyViewFactor_, a);
}

void FormFactorJob::WriteRaw(const std::string &path) const {
  WriteSceneStamp(MPI_COMM_WORLD, path, {});  // a stamp never names another matrix's scene, even after a kill
  WriteRawMatrix(MPI_COMM_WORLD, path, f_);
  WriteSceneStamp(MPI_COMM_WORLD, path, SceneStamp());
}

KeyValues FormFactorJob::SceneStamp() const { return MakeSceneStamp(o_.input, meshing_, patchCount_); }

void FormFactorJob::AddSceneStamp(Attributes &file) const {
  for (const auto &[key, value] : SceneStamp())
    if (key != "patches") file.strings[key] = value;  // the file's patches say how many
}

void FormFactorJob::WriteOutputs() {
  ScopedPhase phase(exec_.Timers(), "output I/O");
  if (!o_.output.empty()) {
    RadiosityFileWriter writer(MPI_COMM_WORLD, o_.output);
    Attributes file;
    file.strings["input"] = o_.input.Attribute();
    if (!o_.input.materials.empty()) file.strings["materials"] = o_.input.materials;
    AddSceneStamp(file);
    writer.WriteFileAttributes(file);
    writer.WritePatches(geometry_.patches);
    WriteFormFactors(writer);
    writer.Commit();
  }
  if (!o_.raw.empty()) WriteRaw(o_.raw);
}

void FormFactorJob::Report(const std::string &title, std::vector<std::pair<std::string, std::string>> extra) {
  PhaseTimers &timers_ = exec_.Timers();
  timers_.Add("total", Now() - exec_.Start());
  timers_.SetCounter("pairs exchanging light", double(counters_.pairsExchanging));
  timers_.SetCounter("pairs ray traced", double(counters_.pairsRayTraced));
  timers_.SetCounter("pairs hidden by one occluder", double(counters_.pairsHidden));
  timers_.SetCounter("pairs exact visibility", double(counters_.pairsOccluded));
  timers_.SetCounter("pairs over occluder capacity", double(counters_.pairsOverCapacity));
  timers_.SetCounter("pairs at cubature depth limit", double(counters_.pairsAtDepthLimit));
  timers_.SetCounter("shadow rays", double(counters_.rays));
  if (Sparse()) {  // the far links' (skipped nodes' with the sparse operator), traced one at a time in the walks
    timers_.SetCounter("far-link shadow rays", double(counters_.farLinkRays));
    timers_.SetCounter("of those, smooth links'", double(counters_.smoothLinkRays));
    timers_.SetCounter("far links proved hidden", double(counters_.farLinksProvedHidden));
  }
  timers_.SetCounter("contour evaluations", double(counters_.evaluations));
  timers_.SetCounter("node-pair evaluations", double(counters_.nodePairs));
  if (exec_.UsedBackend() == Backend::kGpu)  // entries past the device's work limit (pair_result.h)
    timers_.SetCounter("pairs finished on host cores", double(counters_.pairsDeferred));
  // Rays per second: all ranks' rays over the slowest rank's visibility phase.
  double rays = double(counters_.rays), allRays = 0, visibility = timers_.Get("visibility rays"), slowest = 0;
  MPI_Allreduce(&rays, &allRays, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&visibility, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  char buf[128];  // the longest line: the operator check's counts (3 x 20 digits and 56 characters)
  // The sparse operators trace theirs inside the walks and the entries' phase, with no phase of their own.
  if (slowest > 0) std::snprintf(buf, sizeof buf, "%.4g", allRays / slowest);
  else std::snprintf(buf, sizeof buf, "%s", allRays > 0 ? "- (no phase of their own)" : "-");
  extra.push_back({"shadow rays per second", buf});
  std::snprintf(buf, sizeof buf, "%.6f / %.6f / %.6f", closure_.minRowSum, closure_.meanRowSum, closure_.maxRowSum);
  extra.push_back({"row sum min/mean/max", buf});
  extra.push_back({"patches", std::to_string(PatchCount())});
  extra.push_back({"operator", Hemicube() ? "hemicube rows (CSR)" : OperatorName(o_.op)});
  if (Hemicube()) {
    std::snprintf(buf, sizeof buf, "%d x %d x %d%s", o_.hemicube.resolution, o_.hemicube.resolution,
                  o_.hemicube.resolution / 2, o_.hemicube.rotate ? ", turned at random" : "");
    extra.push_back({"hemicube", buf});
    double rays = double(hemicubeRays_), allRays = 0, slowest = 0;
    const double seconds = timers_.Get(o_.hemicubeGather ? "hemicube gathering" : "hemicube rows");
    MPI_Allreduce(&rays, &allRays, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    std::snprintf(buf, sizeof buf, "%.4g", slowest > 0 ? allRays / slowest : 0.0);
    extra.push_back({"hemicube rays per second", buf});
    if (o_.hemicubeGather) extra.push_back({"hemicube mode", "gather (no F; hemicubes traced every iteration)"});
    else extra.push_back({"nonzeros", std::to_string(sparseSummary_.nonzeros)});
    std::snprintf(buf, sizeof buf, "%.4g / %.4g / %.4g", sparseSummary_.skyMin, sparseSummary_.skyMean, sparseSummary_.skyMax);
    extra.push_back({"sky view factor min/mean/max", buf});
  }
  if (Sparse()) {
    std::snprintf(buf, sizeof buf, "%g", WalkThreshold());
    extra.push_back({Hierarchical() ? "operator tolerance" : "drop below", buf});
    if (Hierarchical()) {
      extra.push_back({"far links", std::to_string(sparseTotals_.links)});
      extra.push_back({"element links", std::to_string(sparseTotals_.elementLinks)});
      extra.push_back({"smooth links (of both)", std::to_string(sparseTotals_.smoothLinks)});
    }
    extra.push_back({"nonzeros", std::to_string(sparseSummary_.nonzeros)});
    const double mib = 1 << 20;
    std::snprintf(buf, sizeof buf, "%.1f / %.1f / %.1f / %.1f", rowsMemory_[0] / mib, rowsMemory_[1] / mib,
                  rowsMemory_[2] / mib, rowsMemory_[3] / mib);
    extra.push_back({"rows' MiB: entries/far links/element links/handed at most", buf});
    extra.push_back({"pairs evaluated", std::to_string(sparseTotals_.pairsEvaluated)});
    std::snprintf(buf, sizeof buf, "%.3g %%",
                  PatchCount() > 1 ? 100.0 * double(sparseSummary_.nonzeros) / (double(PatchCount()) * double(PatchCount())) : 0.0);
    extra.push_back({"density", buf});
    std::snprintf(buf, sizeof buf, "%.4g / %.4g", sparseSummary_.droppedMean, sparseSummary_.droppedMax);
    extra.push_back({"dropped row sum mean/max", buf});
    std::snprintf(buf, sizeof buf, "%.4g / %.4g / %.4g", sparseSummary_.skyMin, sparseSummary_.skyMean, sparseSummary_.skyMax);
    extra.push_back({"sky view factor min/mean/max", buf});
    if (check_.rows > 0) {
      std::snprintf(buf, sizeof buf, "%lld rows, kept entries differing %lld, entries carried twice %lld", check_.rows,
                    check_.keptMismatches, check_.carriedTwice);
      extra.push_back({"operator check", buf});
      std::snprintf(buf, sizeof buf, "%.3g / %.3g / %.3g (row %lld)", check_.notKeptMean, check_.farErrorMean,
                    check_.farErrorMax, check_.farErrorMaxRow);
      extra.push_back(
          {Hierarchical() ? "not kept mean, far-link error mean/max" : "dropped mean, estimate error mean/max", buf});
      std::snprintf(buf, sizeof buf, "%.3g", check_.farBias);
      extra.push_back({Hierarchical() ? "far-link signed error mean" : "estimate signed error mean", buf});
      if (Hierarchical()) {
        const OperatorCheck &c = check_;
        char line[192];
        std::snprintf(line, sizeof line, "nodes %.2g (%.2g), patches %.2g (%.2g), elements %.2g (%.2g), left out %.2g (%.2g)",
                      c.nodeLinks.absMean, c.nodeLinks.mean, c.patchLinks.absMean, c.patchLinks.mean,
                      c.elementLinks.absMean, c.elementLinks.mean, c.leftOut.absMean, c.leftOut.mean);
        extra.push_back({"far-link error by part, mean |row| (signed)", line});
        std::snprintf(line, sizeof line, "rows' walks %.2g (%.2g), elements' verdicts %.2g (%.2g)",
                      c.leftOutByRows.absMean, c.leftOutByRows.mean, c.leftOutByElements.absMean,
                      c.leftOutByElements.mean);
        extra.push_back({"left out by where, mean |row| (signed)", line});
      }
    }
  }
  extra.push_back({"threads per rank", std::to_string(exec_.Threads())});
  extra.push_back({"backend", BackendName(exec_.UsedBackend())});
  extra.push_back({"input", o_.input.Label()});
  timers_.Report(MPI_COMM_WORLD, title, "total", o_.timings, extra);
}

}  // namespace rad
