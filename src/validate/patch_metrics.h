// Patch-level comparison of two radiosity solutions of the same patches (/radiosity/B [N,3]): free of any
// image interpolation, so it says how far one solve is from another (or from a reference) patch by patch.
#pragma once

#include <vector>

namespace rad {

struct PatchComparison {
  long long patches = 0;
  double rmse = 0;           // sqrt(mean over patches and channels of (A - B)^2)
  double rmsReference = 0;   // sqrt(mean of A^2)
  double relativeRmse = 0;   // rmse / rmsReference (0 if both are 0, +inf if only A is all zero)
  // Largest |A - B| over patches and channels, where it is, and the two patches' values.
  double maxAbsDifference = 0;
  long long maxAbsPatch = -1;
  int maxAbsChannel = -1;
  // Largest |A - B| / |A| over the entries with A != 0, and where it is.
  double maxRelativeDifference = 0;
  long long maxRelativePatch = -1;
  int maxRelativeChannel = -1;
  // Entries with A == 0 but B != 0: their relative difference is undefined, so they are counted instead.
  long long zeroReferenceMismatches = 0;
};

// a and b: N*3 values (patch-major, R G B). Sizes must match (the caller checks and reports the user's files).
PatchComparison ComparePatchRadiosity(const std::vector<double> &a, const std::vector<double> &b);

// Largest |a_k - b_k| over the entries of two arrays of the same size (e.g. two /patches/centroid arrays).
double MaxAbsDifference(const std::vector<double> &a, const std::vector<double> &b);

}  // namespace rad
