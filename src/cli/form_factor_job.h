// The form-factor step as a job: options, scene loading, the rank's rows of F, closure statistics, output,
// and the timing report. Shared by `formfactors` and, later, `run`.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cli/backend_option.h"
#include "cli/commands.h"
#include "formfactor/cpu_form_factors.h"
#include "formfactor/distribution.h"
#include "formfactor/geometry.h"
#include "radiosity_file.h"
#include "scene/scene.h"
#include "util/timers.h"

namespace rad {

struct FormFactorJobOptions {
  SceneInput input;
  int subdiv = 0;
  // Shadow rays stay the default until the exact kernel's cost is down (README, "Occluded pairs").
  std::string visibility = "exact";
  unsigned shadowRays = 32;
  unsigned long long seed = 1;
  double tolerance = 1e-5;
  std::string precision = "double";
  std::string distribution = "cyclic";
  bool normalizeRows = false;
  int threads = 0;
  bool quiet = false;
  std::string backend = "auto";
  // Outputs (empty = not written).
  std::string output, raw, timings;
};

// `toleranceAlias`: also accept --tolerance for --quadrature-tolerance (in `formfactors`, where it is unambiguous).
void AddFormFactorJobOptions(CLI::App &cmd, FormFactorJobOptions &o, bool toleranceAlias);

struct ClosureStats {
  double minRowSum = 0, meanRowSum = 0, maxRowSum = 0;
};

class FormFactorJob {
 public:
  explicit FormFactorJob(FormFactorJobOptions options);
  void Run();           // validates, loads, computes this rank's rows
  void WriteOutputs();  // collective: the files named in the options
  // Collective: /formfactors/F with its attributes into a file being written (for `run --save-formfactors`).
  void WriteFormFactors(RadiosityFileWriter &writer) const;
  // Collective: the timing report; `extra` lines are added to the form-factor figures.
  void Report(const std::string &title, std::vector<std::pair<std::string, std::string>> extra = {});

  const std::vector<long long> &Rows() const { return rows_; }
  const std::vector<double> &LocalRows() const { return local_; }
  const FormFactorGeometry &Geometry() const { return geometry_; }
  const FormFactorJobOptions &Options() const { return o_; }
  int Threads() const { return threads_; }
  Backend UsedBackend() const { return backend_; }
  long long PatchCount() const { return (long long)geometry_.patches.size(); }
  PhaseTimers &Timers() { return timers_; }
  ClosureStats Closure() const { return closure_; }

 private:
  void ReportInterpenetrations() const;

  FormFactorJobOptions o_;
  Distribution distribution_ = Distribution::kCyclic;
  Precision precision_ = Precision::kDouble;
  Scene scene_;
  FormFactorGeometry geometry_;
  std::vector<long long> rows_;
  std::vector<double> local_;
  FormFactorCounters counters_;  // this rank's
  FormFactorCounters totals_;    // all ranks' 
  ClosureStats closure_;
  PhaseTimers timers_;
  double start_ = 0;
  int threads_ = 1;
  Backend backend_ = Backend::kCpu;
  std::string threadNote_;
};

}  // namespace rad
