#include "util/timers.h"

#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "util/error.h"

namespace rad {

namespace {

using Json = nlohmann::ordered_json;

// A figure as a JSON number: a whole number (the counters) as an integer, "12" and not "12.0"; any other as the
// shortest text that reads back as the same double; NaN and infinity as null.
Json Number(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 1e17 && !(v == 0 && std::signbit(v))) return Json((long long)v);
  return Json(v);
}

}  // namespace

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double PeakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return double(usage.ru_maxrss) * 1024;  // Linux counts it in KiB
}

void PhaseTimers::Add(const std::string &phase, double seconds) {
  if (!seconds_.count(phase)) order_.push_back(phase);
  seconds_[phase] += seconds;
  double &peak = peakBytes_[phase];
  peak = std::max(peak, PeakResidentBytes());
}

double PhaseTimers::Get(const std::string &phase) const {
  auto it = seconds_.find(phase);
  return it == seconds_.end() ? 0.0 : it->second;
}

std::vector<PhaseTimers::Summary> PhaseTimers::Reduce(MPI_Comm comm, const std::string &totalPhase) const {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Every rank runs the same phases in the same order (they are collective steps), so order_ agrees.
  std::vector<double> local, peak;
  for (const auto &p : order_) {
    local.push_back(Get(p));
    auto it = peakBytes_.find(p);
    peak.push_back(it == peakBytes_.end() ? 0.0 : it->second);
  }
  const int n = int(local.size());
  std::vector<double> mn(n), mx(n), sum(n), peakMax(n);
  MPI_Allreduce(local.data(), mn.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(local.data(), mx.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(local.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(peak.data(), peakMax.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  double total = 0;
  for (int k = 0; k < n; ++k)
    if (order_[k] == totalPhase) total = mx[k];
  std::vector<Summary> out;
  for (int k = 0; k < n; ++k)
    out.push_back(Summary{order_[k], mn[k], sum[k] / size, mx[k], total > 0 ? mx[k] / total : 0, peakMax[k]});
  return out;
}

std::map<std::string, double> PhaseTimers::ReduceCounters(MPI_Comm comm) const {
  std::map<std::string, double> out;
  for (const auto &[name, value] : counters_) {
    double sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    out[name] = sum;
  }
  return out;
}

void PhaseTimers::Report(MPI_Comm comm, const std::string &title, const std::string &totalPhase,
                         const std::string &jsonPath,
                         const std::vector<std::pair<std::string, std::string>> &extra) const {
  const auto rows = Reduce(comm, totalPhase);
  const auto counters = ReduceCounters(comm);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank != 0) return;
  std::fprintf(stderr, "\n%s: timings over %d rank(s), seconds\n", title.c_str(), size);
  std::fprintf(stderr, "  %-22s %10s %10s %10s %7s %9s\n", "phase", "min", "avg", "max", "share", "peak GiB");
  for (const auto &r : rows)
    std::fprintf(stderr, "  %-22s %10.3f %10.3f %10.3f %6.1f%% %9.3f\n", r.phase.c_str(), r.min, r.avg, r.max,
                 100 * r.share, r.peakBytes / (1024.0 * 1024 * 1024));
  for (const auto &[name, value] : counters) std::fprintf(stderr, "  %-22s %g\n", name.c_str(), value);
  for (const auto &[k, v] : extra) std::fprintf(stderr, "  %-22s %s\n", k.c_str(), v.c_str());
  std::fflush(stderr);
  if (jsonPath.empty()) return;
  Json json;
  json["command"] = title;
  json["ranks"] = size;
  Json &phases = json["phases"] = Json::array();
  for (const auto &r : rows) {
    phases.push_back({{"name", r.phase}, {"min", Number(r.min)}, {"avg", Number(r.avg)}, {"max", Number(r.max)},
                      {"share", Number(r.share)}, {"peak_bytes", Number(r.peakBytes)}});
  }
  Json &counterValues = json["counters"] = Json::object();
  for (const auto &[name, value] : counters) counterValues[name] = Number(value);
  Json &parameters = json["parameters"] = Json::object();
  for (const auto &[k, v] : extra) parameters[k] = v;
  std::ofstream out(jsonPath);
  out << json.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  if (!out) std::fprintf(stderr, "radiosity: warning: could not write timings to %s\n", jsonPath.c_str());
}

}  // namespace rad
