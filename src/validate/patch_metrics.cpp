#include "validate/patch_metrics.h"

#include <cmath>
#include <limits>

#include "util/error.h"

namespace rad {

PatchComparison ComparePatchRadiosity(const std::vector<double> &a, const std::vector<double> &b) {
  RAD_CHECK(a.size() == b.size() && a.size() % 3 == 0, "ComparePatchRadiosity: sizes differ or are not N*3");
  PatchComparison r;
  r.patches = (long long)(a.size() / 3);
  double sumSq = 0, sumRefSq = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    sumSq += d * d;
    sumRefSq += a[i] * a[i];
    // Strict '>' keeps the first (lowest-numbered) patch among equals, so the report is reproducible.
    if (d > r.maxAbsDifference) {
      r.maxAbsDifference = d;
      r.maxAbsPatch = (long long)(i / 3);
      r.maxAbsChannel = int(i % 3);
    }
    if (a[i] != 0) {
      const double rel = d / std::fabs(a[i]);
      if (rel > r.maxRelativeDifference) {
        r.maxRelativeDifference = rel;
        r.maxRelativePatch = (long long)(i / 3);
        r.maxRelativeChannel = int(i % 3);
      }
    } else if (d != 0) {
      ++r.zeroReferenceMismatches;
    }
  }
  if (!a.empty()) {
    r.rmse = std::sqrt(sumSq / double(a.size()));
    r.rmsReference = std::sqrt(sumRefSq / double(a.size()));
  }
  if (r.rmsReference > 0) {
    r.relativeRmse = r.rmse / r.rmsReference;
  } else {
    r.relativeRmse = r.rmse > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return r;
}

double MaxAbsDifference(const std::vector<double> &a, const std::vector<double> &b) {
  RAD_CHECK(a.size() == b.size(), "MaxAbsDifference: sizes differ");
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    if (!(d <= worst)) worst = d;  // NaN propagates: a NaN centroid never "matches"
  }
  return worst;
}

}  // namespace rad
