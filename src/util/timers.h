// Per-phase wall-clock timers (in the spirit of AMReX's TinyProfiler): each rank accumulates seconds per named
// phase; at the end rank 0 prints min/avg/max over ranks and each phase's share of the total, and the same
// goes to a JSON file for scripts (analysis/). Beside each phase, the process's peak resident memory when the
// phase ended (the kernel's high-water mark, so it never falls): the phase where it jumps is the one that
// allocated, which is how a run's memory is read phase by phase.
#pragma once

#include <mpi.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rad {

class PhaseTimers {
 public:
  void Add(const std::string &phase, double seconds);
  double Get(const std::string &phase) const;
  // Extra figures for the report (counts, rates): summed over ranks unless `perRank`.
  void SetCounter(const std::string &name, double value) { counters_[name] = value; }

  struct Summary {
    std::string phase;
    double min, avg, max, share;
    double peakBytes;  // the largest over ranks of a rank's peak resident memory at the phase's end
  };
  // Collective. `totalPhase` names the phase the shares are relative to.
  std::vector<Summary> Reduce(MPI_Comm comm, const std::string &totalPhase) const;
  std::map<std::string, double> ReduceCounters(MPI_Comm comm) const;

  // Collective; rank 0 prints the table to stderr and, if `jsonPath` is not empty, writes JSON there.
  void Report(MPI_Comm comm, const std::string &title, const std::string &totalPhase,
              const std::string &jsonPath, const std::vector<std::pair<std::string, std::string>> &extra) const;

  const std::vector<std::string> &Order() const { return order_; }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, double> peakBytes_;
  std::vector<std::string> order_;
  std::map<std::string, double> counters_;
};

class ScopedPhase {
 public:
  ScopedPhase(PhaseTimers &timers, std::string phase)
      : timers_(timers), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}
  ~ScopedPhase() {
    timers_.Add(phase_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  PhaseTimers &timers_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
};

double Now();  // seconds on a monotonic clock

// This process's peak resident memory so far, in bytes (getrusage's ru_maxrss); 0 where it cannot be read.
double PeakResidentBytes();

}  // namespace rad
