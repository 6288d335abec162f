#include "pipeline/solve_checkpoint.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/interrupts.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char *kFormat = "radiosity solve checkpoint 1";

// Collective: how the rows are split over the ranks, as one hash of every rank's rows in rank order.
std::string RowSplit(MPI_Comm comm, const std::vector<long long> &myRows) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  unsigned long long mine[2] = {myRows.size(), Fnv1a(myRows.data(), myRows.size() * sizeof(long long))};
  std::vector<unsigned long long> all(2 * size_t(ranks));
  RAD_MPI(MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all.data(), 2, MPI_UNSIGNED_LONG_LONG, comm));
  return HexHash(Fnv1a(all.data(), all.size() * sizeof(all[0])));
}

std::string Exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

SolveCheckpoint::SolveCheckpoint(MPI_Comm comm, const RowCheckpoint &rows, const CheckpointOptions &options,
                                 const SolverOptions &solver, const std::vector<long long> &myRows, bool talk)
    : comm_(comm), o_(options), n_(rows.Patches()), talk_(talk), json_(JsonPathIn(options.dir)) {
  RAD_CHECK(rows.Complete(), "SolveCheckpoint: the rows' checkpoint is not complete");
  int ranks = 1;
  MPI_Comm_size(comm_, &ranks);
  identity_ = {{"solver", SolverMethodName(solver.method)},
               {"tolerance", Exact(solver.tolerance)},
               {"max_iterations", std::to_string(solver.maxIterations)},
               {"patches", std::to_string(n_)},
               {"ranks", std::to_string(ranks)},
               {"row_split", RowSplit(comm_, myRows)},
               {"rows_generation", std::to_string(rows.Generation())},
               {"rows_job", rows.JobHash()}};
  HoldInterrupts(true);  // a signal now keeps the iterate after the next exchange, then stops
  holding_ = true;
  lastWrite_ = MPI_Wtime();
}

SolveCheckpoint::~SolveCheckpoint() {
  if (holding_) HoldInterrupts(false);
}

std::string SolveCheckpoint::JsonPathIn(const std::string &dir) {
  return (std::filesystem::path(dir) / "solve.json").string();
}

std::string SolveCheckpoint::IteratePath(int k) const {
  return (std::filesystem::path(o_.dir) / ("iterate-" + std::to_string(k) + ".bin")).string();
}

const SolverIterate *SolveCheckpoint::Resume() {
  if (!o_.restart) return nullptr;
  std::string text;
  if (!ReadCheckpointText(comm_, json_, text)) return nullptr;

  auto refuse = [&](const std::string &why) {
    throw InputError(json_ + ": " + why + "; remove it to solve from the beginning");
  };
  SolverIterate state;
  std::string differ;
  try {
    const Json j = Json::parse(text);
    if (!j.is_object() || j.value("format", "") != kFormat)
      refuse(std::string("not a solve checkpoint of this version (") + kFormat + ")");
    differ = IdentityDifferences(j.at("solve"), identity_);
    state.iteration = j.at("iteration").get<int>();
    state.initialResidual = j.at("initial_residual").get<double>();
    state.residuals = j.at("residuals").get<std::vector<double>>();
  } catch (const Json::exception &e) {
    refuse(std::string("not a complete solve checkpoint (") + e.what() + ")");
  }
  if (!differ.empty()) {
    if (talk_)
      std::fprintf(stderr, "radiosity: restart: the solver's iterate in %s is of another solve (%s); solving from "
                           "B = E\n", json_.c_str(), differ.c_str());
    return nullptr;
  }
  if (state.iteration < 1 || state.residuals.size() != size_t(state.iteration - 1))
    refuse("its residuals are not those of the " + std::to_string(state.iteration) + " sweeps before its iterate");
  bool finite = std::isfinite(state.initialResidual);
  for (double r : state.residuals) finite = finite && std::isfinite(r);
  if (!finite) refuse("it holds a non-finite residual");

  const std::string iterate = IteratePath(state.iteration);
  state.radiance.assign(3 * size_t(n_), 0.0);
  OnRankZero(comm_, [&] {
    std::ifstream in(iterate, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() != state.radiance.size() * sizeof(double))
      throw InputError(iterate + ": the solve checkpoint's iterate holds " + std::to_string(bytes.size()) +
                       " bytes, not the " + std::to_string(state.radiance.size() * sizeof(double)) + " of " +
                       std::to_string(n_) + " patches; remove " + json_ + " to solve from the beginning");
    std::memcpy(state.radiance.data(), bytes.data(), bytes.size());  // little-endian, as written
    for (double v : state.radiance)
      if (!std::isfinite(v))
        throw InputError(iterate + ": the solve checkpoint's iterate holds a non-finite value; remove " + json_ +
                         " to solve from the beginning");
  });
  RAD_MPI(MPI_Bcast(state.radiance.data(), int(state.radiance.size()), MPI_DOUBLE, 0, comm_));
  kept_ = state.iteration;
  if (talk_)
    std::fprintf(stderr, "radiosity: restart: %s has the solver's iterate before sweep %d; continuing the solve\n",
                 json_.c_str(), state.iteration);
  resumed_ = std::make_unique<SolverIterate>(std::move(state));
  return resumed_.get();
}

void SolveCheckpoint::AfterExchange(int k, const std::function<SolverIterate()> &iterate) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  int flags[2] = {rank == 0 && MPI_Wtime() - lastWrite_ >= 60 * o_.everyMinutes ? 1 : 0, PendingInterrupt()};
  int agreed[2] = {0, 0};
  RAD_MPI(MPI_Allreduce(flags, agreed, 2, MPI_INT, MPI_MAX, comm_));
  if (!agreed[0] && !agreed[1]) return;
  Write(iterate());
  if (agreed[1]) {
    char what[512];
    std::snprintf(what, sizeof what,
                  "stopped after keeping the solver's iterate before sweep %d in %s; run the same command with "
                  "--restart to continue; other files being written were removed, none was completed",
                  k, json_.c_str());
    StopForInterrupt(agreed[1], what);
  }
}

void SolveCheckpoint::Write(const SolverIterate &state) {
  OnRankZero(comm_, [&] {
    const std::string bytes(reinterpret_cast<const char *>(state.radiance.data()),
                            state.radiance.size() * sizeof(double));
    WriteFileAtomically(IteratePath(state.iteration), bytes, "the solver's iterate", Durability::kToDisk);
    Json j;
    j["format"] = kFormat;
    Json solve = Json::object();
    for (const auto &[key, value] : identity_) solve[key] = value;
    j["solve"] = solve;
    j["iteration"] = state.iteration;
    j["initial_residual"] = state.initialResidual;
    j["residuals"] = state.residuals;
    WriteFileAtomically(json_, j.dump(1) + "\n", "the solve checkpoint", Durability::kToDisk);
    std::error_code ignored;  // an older iterate left behind is harmless: solve.json names the new one
    if (kept_ > 0 && kept_ != state.iteration) std::filesystem::remove(IteratePath(kept_), ignored);
  });
  kept_ = state.iteration;
  lastWrite_ = MPI_Wtime();
  if (talk_)
    std::fprintf(stderr, "radiosity: checkpoint: the solver's iterate before sweep %d, written to %s\n",
                 state.iteration, o_.dir.c_str());
}

void SolveCheckpoint::Finish() {
  HoldInterrupts(false);
  holding_ = false;
  const int signal = AgreedPendingInterrupt(comm_);
  if (signal != 0) StopForInterrupt(signal, "stopped after the solve; the last checkpoint is complete");
}

}  // namespace rad
