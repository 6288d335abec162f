// `radiosity info FILE.h5`: what a file holds, whether it is complete, and for a form-factor matrix its
// closure (row sums) and reciprocity error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <limits>
#include <memory>

#include "cli/commands.h"
#include "pipeline/outputs.h"
#include "pipeline/execution.h"
#include "io/radiosity_file_reader.h"
#include "util/error.h"
#include "util/memory_budget.h"

namespace rad {

namespace {

// Attribute values on one line each (the `input` attribute has one scene file per line).
std::string OneLine(std::string value) {
  for (size_t at = value.find('\n'); at != std::string::npos; at = value.find('\n', at + 2)) value.replace(at, 1, ", ");
  return value;
}

void PrintFormFactorSummary(const RadiosityFileReader &file) {
  const long long n = file.PatchCount();
  const std::vector<double> area = file.ReadDoubles("/patches/area");
  std::printf("formfactors/F: %lld x %lld\n", n, n);
  for (const auto &[k, v] : file.DatasetAttributes("/formfactors/F")) std::printf("  %s = %s\n", k.c_str(), OneLine(v).c_str());
  // Row sums, in row blocks of ~64 MiB so that any size of matrix can be checked.
  const long long block = std::max<long long>(1, (64LL << 20) / (8 * std::max<long long>(n, 1)));
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, total = 0;
  long long negatives = 0, nonFinite = 0;
  for (long long first = 0; first < n; first += block) {
    const long long count = std::min(block, n - first);
    const std::vector<double> rows = file.ReadFormFactorRows(first, count);
    for (long long r = 0; r < count; ++r) {
      double s = 0;
      for (long long j = 0; j < n; ++j) {
        const double v = rows[size_t(r * n + j)];
        if (!std::isfinite(v)) ++nonFinite;
        if (v < 0) ++negatives;
        s += v;
      }
      mn = std::min(mn, s);
      mx = std::max(mx, s);
      total += s;
    }
  }
  std::printf("closure (row sums): min %.6f  mean %.6f  max %.6f\n", mn, n ? total / n : 0.0, mx);
  if (negatives || nonFinite) std::printf("WARNING: %lld negative and %lld non-finite entries\n", negatives, nonFinite);
  // Reciprocity A_i F_ij = A_j F_ji needs the whole matrix: only for matrices up to 1 GiB that also fit in half
  // of the memory this node has available (memory_budget.h).
  const double matrixBytes = double(n) * double(n) * 8;
  if (matrixBytes <= double(1LL << 30) && matrixBytes <= ReadNodeMemory().bytes / 2) {
    const std::vector<double> F = file.ReadFormFactorRows(0, n);
    double worst = 0, sumRel = 0, sumAbs = 0, sumEnergy = 0;
    long long pairs = 0;
    for (long long i = 0; i < n; ++i)
      for (long long j = i + 1; j < n; ++j) {
        const double a = area[size_t(i)] * F[size_t(i * n + j)], b = area[size_t(j)] * F[size_t(j * n + i)];
        const double scale = std::max(a, b);
        if (scale <= 0) continue;
        const double rel = std::fabs(a - b) / scale;
        worst = std::max(worst, rel);
        sumAbs += std::fabs(a - b);
        sumEnergy += a + b;
        sumRel += rel;
        ++pairs;
      }
    // Shadow-ray noise makes single occluded pairs differ a lot (one direction may see no ray through);
    // the energy-weighted figure says how much exchanged energy is affected.
    std::printf("reciprocity |A_i F_ij - A_j F_ji| / max: mean %.3g  max %.3g over %lld pairs; "
                "energy-weighted %.3g\n",
                pairs ? sumRel / pairs : 0.0, worst, pairs, sumEnergy > 0 ? 2 * sumAbs / sumEnergy : 0.0);
  } else {
    std::printf("reciprocity: not checked (the matrix, %s as float64, is larger than 1 GiB or half the node's "
                "available memory)\n",
                FormatBytes(matrixBytes).c_str());
  }
}

// A CSR matrix (the sparse or hierarchical operator's, or `export --format csr`): its size, its far links if
// any, and what its writer recorded.
void PrintCsrSummary(const RadiosityFileReader &file) {
  const long long n = file.PatchCount();
  const std::vector<double> indptr = file.ReadDoubles("/formfactors/indptr");
  const long long nnz = indptr.empty() ? 0 : (long long)indptr.back();
  const bool links = file.Has("/formfactors/link_ptr");
  std::printf("formfactors (CSR%s): %lld x %lld, %lld nonzeros (%.3g %%)", links ? " and far links" : "", n, n, nnz,
              n > 0 ? 100.0 * double(nnz) / (double(n) * double(n)) : 0.0);
  if (links) {
    const std::vector<double> linkPtr = file.ReadDoubles("/formfactors/link_ptr");
    std::printf(", %lld far links", linkPtr.empty() ? 0LL : (long long)linkPtr.back());
    if (file.Has("/formfactors/element_link_ptr")) {
      const std::vector<double> elementPtr = file.ReadDoubles("/formfactors/element_link_ptr");
      std::printf(" and %lld held by %zu elements", elementPtr.empty() ? 0LL : (long long)elementPtr.back(),
                  elementPtr.empty() ? size_t(0) : elementPtr.size() - 1);
    }
  }
  std::printf("\n");
  for (const auto &[k, v] : file.DatasetAttributes("/formfactors")) std::printf("  %s = %s\n", k.c_str(), OneLine(v).c_str());
}

}  // namespace

CommandRunner AddInfoCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("info", "Describe a radiosity HDF5 file: contents, completeness, closure");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "HDF5 file written by radiosity")->required();
  return [path]() {
    // Only rank 0 reads; the others wait.
    if (WorldRank() != 0) return 0;
    RadiosityFileReader file(*path);
    std::printf("file: %s\n", path->c_str());
    std::printf("format_version: %lld\n", file.FormatVersion());
    std::printf("complete: %s\n", file.Complete() ? "yes" : "NO (the writer did not finish)");
    if (file.Has("/patches/area")) std::printf("patches: %lld\n", file.PatchCount());
    if (file.Has("/formfactors/F")) PrintFormFactorSummary(file);
    else if (file.Has("/formfactors/indptr")) PrintCsrSummary(file);
    if (file.Has("/radiosity/B")) std::printf("radiosity/B: present\n");
    if (file.Has("/pathtrace/B")) std::printf("pathtrace/B, pathtrace/stderr: present (path-traced patch estimates)\n");
    if (file.Has("/lightmap/texel")) {  // the patches are lightmap texels (run --texel-size)
      std::map<std::string, std::string> a;
      for (const auto &[name, value] : file.DatasetAttributes("/lightmap")) a[name] = value;
      std::printf("lightmap: %s page(s) of %s x %s texels, texel size %s, %s charts, %s texels\n", a["pages"].c_str(),
                  a["resolution"].c_str(), a["resolution"].c_str(), a["texel_size"].c_str(), a["charts"].c_str(),
                  a["texels"].c_str());
    }
    return file.Complete() ? 0 : 1;
  };
}

}  // namespace rad
