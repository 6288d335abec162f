#include "pipeline/row_checkpoint.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/csr_hdf5.h"
#include "io/far_links_hdf5.h"
#include "io/formfactor_input.h"
#include "io/hdf5_util.h"
#include "io/radiosity_file.h"
#include "io/radiosity_file_reader.h"
#include "io/raw_matrix.h"
#include "pipeline/solve_checkpoint.h"
#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/interrupts.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char *kFormat = "radiosity row checkpoint 1";
// The counters every checkpoint holds: FormFactorCounters' first twelve fields.
constexpr int kCountersOfFirstCheckpoints = 12;

const char *RowsName(CheckpointRows storage) { return storage == CheckpointRows::kCsr ? "csr" : "dense"; }

// Rank 0: the checkpoint's CSR file checked for n rows (complete, datasets of the right shapes), its layout.
CsrLayout InspectCsrCheckpoint(const std::string &path, long long n) {
  if (!std::filesystem::exists(path)) throw InputError(path + ": the checkpoint's matrix is missing");
  try {
    RadiosityFileReader file(path);
    if (!file.Complete()) throw InputError(path + ": incomplete (complete != 1)");
    return InspectCsr(file.File(), path, n);
  } catch (const InputError &e) {
    throw InputError(std::string("the checkpoint's matrix is damaged: ") + e.what() +
                     "; remove the checkpoint to start again");
  }
}

}  // namespace

bool ReadCheckpointText(MPI_Comm comm, const std::string &path, std::string &text) {
  bool found = false;
  OnRankZero(comm, [&] {
    found = std::filesystem::exists(path);
    if (!found) return;
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw InputError(path + ": cannot read the checkpoint");
  });
  int flag = found ? 1 : 0;
  RAD_MPI(MPI_Bcast(&flag, 1, MPI_INT, 0, comm));
  BroadcastString(comm, text);
  return flag != 0;
}

std::string IdentityDifferences(const Json &was, const KeyValues &identity) {
  KeyValues there;
  for (const auto &[key, value] : was.items()) there.emplace_back(key, value.get<std::string>());
  for (const auto &[key, value] : identity)  // a key the checkpoint lacks differs too
    if (was.find(key) == was.end()) there.emplace_back(key, "(none)");
  return StampDifferences(there, identity);
}

RowCheckpoint::RowCheckpoint(MPI_Comm comm, CheckpointOptions options, JobIdentity job, long long n, bool talk,
                             CheckpointRows storage)
    : comm_(comm), o_(std::move(options)), job_(std::move(job)), n_(n), talk_(talk), storage_(storage) {
  json_ = JsonPathIn(o_.dir);
  RefuseUnlessRestarting(comm_, o_);
  MakeFolder(comm_, o_.dir);
  std::string text;
  if (ReadCheckpointText(comm_, json_, text)) Read(text);
  else if (o_.restart && talk_)
    std::fprintf(stderr, "radiosity: restart: no checkpoint in %s yet; starting from the beginning\n", o_.dir.c_str());
  lastWrite_ = MPI_Wtime();
}

std::string RowCheckpoint::JsonPathIn(const std::string &dir) {
  return (std::filesystem::path(dir) / "checkpoint.json").string();
}

void RowCheckpoint::MakeFolder(MPI_Comm comm, const std::string &dir) {
  OnRankZero(comm, [&] {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (!std::filesystem::is_directory(dir))
      throw InputError(dir + ": cannot make the checkpoint folder" + (error ? " (" + error.message() + ")" : ""));
  });
}

void RowCheckpoint::RefuseUnlessRestarting(MPI_Comm comm, const CheckpointOptions &options) {
  if (options.restart) return;
  OnRankZero(comm, [&] {
    const std::string json = JsonPathIn(options.dir);
    if (std::filesystem::exists(json))
      throw InputError(json + ": the checkpoint of an earlier run is here: add --restart to continue it (with the "
                       "same scene and options), or remove it to start again");
  });
}

std::string RowCheckpoint::MatrixPath(long long generation) const {
  const char *extension = storage_ == CheckpointRows::kCsr ? ".h5" : ".raw";
  return (std::filesystem::path(o_.dir) / ("formfactors-" + std::to_string(generation) + extension)).string();
}

void RowCheckpoint::Read(const std::string &text) {
  auto refuse = [&](const std::string &why) { throw InputError(json_ + ": " + why); };
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception &e) {
    refuse(std::string("not a checkpoint (") + e.what() + ")");
  }
  try {
    if (!j.is_object() || j.value("format", "") != kFormat) refuse(std::string("not a checkpoint of this version (") + kFormat + ")");
    const long long patches = j.at("patches").get<long long>();
    std::string differ = IdentityDifferences(j.at("job"), job_);  // the job's stamp holds the patch count
    if (differ.empty() && patches != n_) differ = "patches (" + std::to_string(patches) + " there)";
    const std::string rows = j.value("rows", "dense");  // checkpoints of dense rows said nothing at first
    if (differ.empty() && rows != RowsName(storage_)) differ = "rows (" + rows + " there, " + RowsName(storage_) + " here)";
    if (!differ.empty())
      refuse("the checkpoint is of another job: " + differ + "; run that job's command with --restart, or remove "
             "the checkpoint to start again");
    generation_ = j.at("generation").get<long long>();
    if (generation_ < 1) refuse("its generation must be at least 1");
    done_.assign(size_t(n_), 0);
    for (const Json &range : j.at("done")) {
      const long long a = range.at(0).get<long long>(), b = range.at(1).get<long long>();
      if (!(0 <= a && a < b && b <= n_)) refuse("a range of done rows lies outside the " + std::to_string(n_) + " rows");
      for (long long i = a; i < b; ++i) done_[size_t(i)] = 1;
    }
    for (uint8_t d : done_) doneRows_ += d;
    writtenRows_ = doneRows_;
    const Json &counts = j.at("counters");
    // Counters added since a checkpoint was written read 0 (far_links_proved_hidden, 2026-12-03).
    for (int k = 0; k < FormFactorCounters::kFieldCount; ++k)
      *doneCounters_.Fields()[size_t(k)] =
          k >= kCountersOfFirstCheckpoints ? counts.value(FormFactorCounters::kFieldNames[k], 0LL)
                                           : counts.at(FormFactorCounters::kFieldNames[k]).get<long long>();
    if (j.contains("more_counters"))
      for (const auto &[key, value] : j.at("more_counters").items()) doneMore_.emplace_back(key, value.get<long long>());
  } catch (const Json::exception &e) {
    refuse(std::string("not a complete checkpoint (") + e.what() + ")");
  }
  const std::string matrix = MatrixPath(generation_);
  OnRankZero(comm_, [&] {
    if (storage_ == CheckpointRows::kCsr) {
      InspectCsrCheckpoint(matrix, n_);
      return;
    }
    std::error_code error;
    const auto size = std::filesystem::file_size(matrix, error);
    const auto expected = 4 + 8 * uintmax_t(n_) * uintmax_t(n_);
    if (error) throw InputError(matrix + ": the checkpoint's matrix is missing (" + error.message() + ")");
    if (size != expected)
      throw InputError(matrix + ": the checkpoint's matrix holds " + std::to_string(size) + " bytes, not the " +
                       std::to_string(expected) + " of " + std::to_string(n_) + " rows");
    std::ifstream in(matrix, std::ios::binary);
    int32_t header = 0;
    in.read(reinterpret_cast<char *>(&header), sizeof header);
    if (!in || header != n_) throw InputError(matrix + ": the checkpoint's matrix is not of " + std::to_string(n_) + " rows");
  });
  if (talk_)
    std::fprintf(stderr, "radiosity: restart: %s has the pairs of %lld of %lld rows; %s\n", json_.c_str(), doneRows_,
                 n_, doneRows_ == n_ ? "nothing left to compute" : "computing the rest");
}

void RowCheckpoint::Restore(FormFactorRows &f, const std::vector<Patch> *patches) const {
  if (generation_ == 0) return;
  const std::string matrix = MatrixPath(generation_);
  const long long n = n_;
  bool ok = true;
  if (storage_ == CheckpointRows::kCsr) {
    CsrLayout layout;
    OnRankZero(comm_, [&] { layout = InspectCsrCheckpoint(matrix, n); });
    int isFloat = layout.dataIsFloat ? 1 : 0;
    RAD_MPI(MPI_Bcast(&isFloat, 1, MPI_INT, 0, comm_));
    layout.dataIsFloat = isFloat != 0;
    layout.indptr.resize(size_t(n) + 1);
    RAD_MPI(MPI_Bcast(layout.indptr.data(), int(layout.indptr.size()), MPI_LONG_LONG, 0, comm_));
    H5Handle fapl(RAD_H5(H5Pcreate(H5P_FILE_ACCESS)));
    RAD_H5(H5Pset_fapl_mpio(fapl, comm_, MPI_INFO_NULL));
    H5Handle file(RAD_H5(H5Fopen(matrix.c_str(), H5F_ACC_RDONLY, fapl)));
    const Precision wanted = f.precision;
    ReadCsrRowsAsCsr(comm_, file, matrix, layout, f);
    ok = f.precision == wanted;  // the job's identity names its precision: another one is a damaged file
    for (size_t k = 0; ok && k < size_t(f.StoredEntries()); ++k) ok = std::isfinite(f.Value(k)) && f.Value(k) >= 0;
    AgreeOrThrow(comm_, ok, matrix + ": the checkpoint's matrix holds negative or non-finite entries, or entries of "
                                "another precision; remove the checkpoint to start again");
    RestorePerRow(file, matrix, f, patches);
    return;
  }
  ReadRawMatrixRowBlocks(comm_, matrix, n, f.rows, [&](long long begin, long long count, const double *values) {
    const size_t first = size_t(begin) * size_t(n), entries = size_t(count) * size_t(n);
    for (size_t k = 0; k < entries; ++k) {
      const double v = values[k];
      ok = ok && std::isfinite(v) && v >= 0;
      if (f.precision == Precision::kDouble) f.f64[first + k] = v;
      else f.f32[first + k] = float(v);  // widened from float when written: exact
    }
  });
  AgreeOrThrow(comm_, ok, matrix + ": the checkpoint's matrix holds negative or non-finite entries; remove the "
                              "checkpoint to start again");
}

// The CSR rows' dropped sums and far links, where the checkpoint's file holds them (the sparse operators').
void RowCheckpoint::RestorePerRow(hid_t file, const std::string &matrix, FormFactorRows &f,
                                  const std::vector<Patch> *patches) const {
  std::vector<long long> linkPtr;
  int hasDropped = 0;
  OnRankZero(comm_, [&] {
    H5QuietErrors quiet;
    hasDropped = H5Lexists(file, "/formfactors/dropped_row_sum", H5P_DEFAULT) > 0 ? 1 : 0;
    linkPtr = InspectFarLinks(file, matrix, n_);
  });
  int flags[2] = {hasDropped, linkPtr.empty() ? 0 : 1};
  RAD_MPI(MPI_Bcast(flags, 2, MPI_INT, 0, comm_));
  if (flags[0]) {
    f.dropped.assign(f.RowCount(), 0.0);
    H5Handle dset(RAD_H5(H5Dopen2(file, "/formfactors/dropped_row_sum", H5P_DEFAULT)));
    H5Handle fileSpace(RAD_H5(H5Dget_space(dset)));
    const hsize_t start[1] = {hsize_t(f.rows.empty() ? 0 : f.rows[0])}, count[1] = {hsize_t(f.RowCount())};
    const hsize_t memDims[1] = {std::max<hsize_t>(count[0], 1)};
    H5Handle memSpace(RAD_H5(H5Screate_simple(1, memDims, nullptr)));
    if (count[0] == 0) {  // a rank without rows still takes part in the collective read
      RAD_H5(H5Sselect_none(fileSpace));
      RAD_H5(H5Sselect_none(memSpace));
    } else {
      RAD_H5(H5Sselect_hyperslab(fileSpace, H5S_SELECT_SET, start, nullptr, count, nullptr));
    }
    H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
    RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    std::vector<double> read(memDims[0]);
    RAD_H5(H5Dread(dset, H5T_NATIVE_DOUBLE, memSpace, fileSpace, dxpl, read.data()));
    std::copy_n(read.begin(), f.RowCount(), f.dropped.begin());
    bool finite = true;
    for (double d : f.dropped) finite = finite && std::isfinite(d);
    AgreeOrThrow(comm_, finite, matrix + ": the checkpoint's dropped sums are not finite; remove the checkpoint to "
                                "start again");
  }
  if (flags[1]) {
    RAD_CHECK(patches != nullptr, "RowCheckpoint::Restore: far links need the patches");
    linkPtr.resize(size_t(n_) + 1);
    RAD_MPI(MPI_Bcast(linkPtr.data(), int(linkPtr.size()), MPI_LONG_LONG, 0, comm_));
    ReadFarLinks(comm_, file, matrix, linkPtr, *patches, f);
  }
}

void RowCheckpoint::AfterRound(const FormFactorRows &f, const std::vector<uint8_t> &done, const FormFactorCounters &mine) {
  AfterRound([&]() -> const FormFactorRows & { return f; }, done, mine);
}

long long RowCheckpoint::DoneCount(const std::string &name) const {
  for (const auto &[key, value] : doneMore_)
    if (key == name) return value;
  return 0;
}

void RowCheckpoint::AfterRound(const std::function<const FormFactorRows &()> &rows, const std::vector<uint8_t> &done,
                               const FormFactorCounters &mine, const NamedCounts &more) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  long long doneRows = 0;
  for (uint8_t d : done) doneRows += d;
  int flags[2] = {rank == 0 && MPI_Wtime() - lastWrite_ >= 60 * o_.everyMinutes ? 1 : 0, PendingInterrupt()};
  int agreed[2] = {0, 0};
  RAD_MPI(MPI_Allreduce(flags, agreed, 2, MPI_INT, MPI_MAX, comm_));
  // Rows done since the last checkpoint are written when the interval has passed, a signal came or they are the
  // last; a round that added none (a restart's rounds over rows found done) writes nothing.
  if (doneRows == writtenRows_) {
    if (agreed[1])
      StopForInterrupt(agreed[1], "stopped; the last checkpoint, " + json_ + ", holds every row done so far");
    return;
  }
  if (!agreed[0] && !agreed[1] && doneRows < n_) return;
  FormFactorCounters all = doneCounters_;
  constexpr int kCounts = FormFactorCounters::kFieldCount;
  long long counts[kCounts], sums[kCounts];
  for (int k = 0; k < kCounts; ++k) counts[k] = *mine.Fields()[size_t(k)];
  RAD_MPI(MPI_Allreduce(counts, sums, kCounts, MPI_LONG_LONG, MPI_SUM, comm_));
  for (int k = 0; k < kCounts; ++k) *all.Fields()[size_t(k)] += sums[k];
  NamedCounts allMore = more;
  std::vector<long long> moreCounts, moreSums(more.size());
  for (const auto &named : more) moreCounts.push_back(named.second);
  if (!more.empty())
    RAD_MPI(MPI_Allreduce(moreCounts.data(), moreSums.data(), int(more.size()), MPI_LONG_LONG, MPI_SUM, comm_));
  for (size_t k = 0; k < more.size(); ++k) allMore[k].second = moreSums[k] + DoneCount(more[k].first);
  const double start = MPI_Wtime();
  Write(rows(), done, all, allMore);
  if (talk_)
    std::fprintf(stderr, "radiosity: checkpoint: the pairs of %lld of %lld rows, written to %s in %.2f s\n", doneRows,
                 n_, o_.dir.c_str(), MPI_Wtime() - start);
  if (agreed[1]) {
    char what[512];
    std::snprintf(what, sizeof what,
                  "stopped after writing a checkpoint of %lld of %lld rows to %s; run the same command with "
                  "--restart to continue; other files being written were removed, none was completed",
                  doneRows, n_, json_.c_str());
    StopForInterrupt(agreed[1], what);
  }
}

void RowCheckpoint::Write(const FormFactorRows &f, const std::vector<uint8_t> &done, const FormFactorCounters &all,
                          const NamedCounts &more) {
  const long long generation = generation_ + 1;
  if (storage_ == CheckpointRows::kCsr) {
    RadiosityFileWriter writer(comm_, MatrixPath(generation));
    WriteCsrFormFactors(comm_, writer.File(), f, {}, Attributes{});
    writer.Commit();  // flushed before the rename
  } else {
    WriteRawMatrix(comm_, MatrixPath(generation), f);
  }
  OnRankZero(comm_, [&] {
    Json j;
    j["format"] = kFormat;
    j["patches"] = n_;
    j["rows"] = RowsName(storage_);
    Json job = Json::object();
    for (const auto &[key, value] : job_) job[key] = value;
    j["job"] = job;
    j["generation"] = generation;
    Json ranges = Json::array();
    for (long long i = 0; i < n_;) {
      if (!done[size_t(i)]) {
        ++i;
        continue;
      }
      long long end = i;
      while (end < n_ && done[size_t(end)]) ++end;
      ranges.push_back({i, end});
      i = end;
    }
    j["done"] = ranges;
    Json counts = Json::object();
    for (int k = 0; k < FormFactorCounters::kFieldCount; ++k)
      counts[FormFactorCounters::kFieldNames[k]] = *all.Fields()[size_t(k)];
    j["counters"] = counts;
    if (!more.empty()) {
      Json moreCounts = Json::object();
      for (const auto &[key, value] : more) moreCounts[key] = value;
      j["more_counters"] = moreCounts;
    }
    WriteFileAtomically(json_, j.dump(1) + "\n", "the checkpoint", Durability::kToDisk);
    std::error_code ignored;  // an older matrix left behind is harmless: checkpoint.json names the new one
    if (generation_ > 0) std::filesystem::remove(MatrixPath(generation_), ignored);
  });
  generation_ = generation;
  writtenRows_ = 0;
  for (uint8_t d : done) writtenRows_ += d;
  lastWrite_ = MPI_Wtime();
}

std::string RowCheckpoint::JobHash() const { return HashKeyValues(job_); }

namespace {

// Removes "<prefix><digits><suffix>" and "<prefix><digits><suffix>.partial" from `dir`: the numbered files of a
// checkpoint, and what a killed run left half-written of them.
void RemoveNumbered(const std::string &dir, const std::string &prefix, const std::string &suffix) {
  std::error_code ignored;
  std::vector<std::filesystem::path> ours;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ignored)) {
    const std::string name = entry.path().filename().string();
    const size_t digits = name.find_first_not_of("0123456789", prefix.size());
    if (name.rfind(prefix, 0) == 0 && digits > prefix.size() && digits != std::string::npos &&
        (name.substr(digits) == suffix || name.substr(digits) == suffix + ".partial"))
      ours.push_back(entry.path());
  }
  for (const auto &path : ours) std::filesystem::remove(path, ignored);
}

}  // namespace

void RowCheckpoint::Remove() {
  OnRankZero(comm_, [&] {
    // The solve's first: it is of no use without the rows'.
    std::error_code ignored;
    std::filesystem::remove(SolveCheckpoint::JsonPathIn(o_.dir), ignored);
    RemoveNumbered(o_.dir, SolveCheckpoint::kIteratePrefix, SolveCheckpoint::kIterateSuffix);
    std::filesystem::remove(json_, ignored);
    RemoveNumbered(o_.dir, "formfactors-", ".raw");
    RemoveNumbered(o_.dir, "formfactors-", ".h5");
  });
}

}  // namespace rad
