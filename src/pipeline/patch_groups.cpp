#include "pipeline/patch_groups.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

PatchGrouping ParsePatchGrouping(const std::string &name) {
  if (name == "polygon") return PatchGrouping::kPolygon;
  if (name == "material") return PatchGrouping::kMaterial;
  throw InputError("--groups must be 'polygon' or 'material', not '" + name + "'");
}

std::vector<int> MaterialOfPatches(const Scene &scene, const std::vector<Patch> &patches, const std::string &input) {
  std::vector<int> ofPolygon(size_t(std::max(scene.polygonCount, 0)), -1);
  for (const Face &face : scene.faces)
    if (face.polygon >= 0 && size_t(face.polygon) < ofPolygon.size()) ofPolygon[size_t(face.polygon)] = face.material;
  std::vector<int> out(patches.size());
  for (size_t i = 0; i < patches.size(); ++i) {
    const int polygon = patches[i].polygon;
    if (polygon < 0 || size_t(polygon) >= ofPolygon.size() || ofPolygon[size_t(polygon)] < 0)
      throw InputError(input + ": patch " + std::to_string(i) + " comes from polygon " + std::to_string(polygon) +
                       ", which this scene does not have (are the form factors of another scene?)");
    out[i] = ofPolygon[size_t(polygon)];
  }
  return out;
}

PatchGroups GroupPatches(PatchGrouping grouping, const std::vector<Patch> &patches, const Scene *scene,
                         const std::string &input) {
  std::vector<int> key(patches.size());
  if (grouping == PatchGrouping::kMaterial) {
    RAD_CHECK(scene != nullptr, "GroupPatches: grouping by material needs the scene");
    key = MaterialOfPatches(*scene, patches, input);
  } else {
    for (size_t i = 0; i < patches.size(); ++i) key[i] = patches[i].polygon;
  }
  std::map<int, int> index;  // key -> group, in key order
  for (int k : key) index.emplace(k, 0);
  PatchGroups g;
  for (auto &[k, group] : index) {
    group = int(g.names.size());
    g.names.push_back(grouping == PatchGrouping::kMaterial ? scene->materials[size_t(k)].name
                                                           : "polygon " + std::to_string(k));
  }
  g.ofPatch.resize(patches.size());
  g.area.assign(g.names.size(), 0.0);
  for (size_t i = 0; i < patches.size(); ++i) {
    g.ofPatch[i] = index[key[i]];
    g.area[size_t(g.ofPatch[i])] += patches[i].area;
  }
  return g;
}

namespace {

// Sums of doubles that do not depend on their order, so that the group sums are the same bits for any rank and
// thread count: each value is rounded once to a fixed point of 2^-(binary point) and added as a 128-bit integer
// (integer addition is associative). The binary point keeps sums up to `largest` below 2^100: with values below
// it, a sum of 1e12 of them is exact to about 1e-18 of `largest`.
struct FixedPoint {
  double scale;
  explicit FixedPoint(double largest) : scale(std::ldexp(1.0, 100 - std::max(std::ilogb(largest), -900) - 1)) {}
  __int128 Of(double v) const { return static_cast<__int128>(std::nearbyint(v * scale)); }
  double Value(__int128 q) const { return static_cast<double>(q) / scale; }
};

void AddInt128(void *in, void *inout, int *count, MPI_Datatype *) {
  const auto *a = static_cast<const __int128 *>(in);
  auto *b = static_cast<__int128 *>(inout);
  for (int k = 0; k < *count; ++k) b[k] += a[k];
}

}  // namespace

std::vector<double> GroupViewFactors(MPI_Comm comm, const FormFactorRows &f, const std::vector<Patch> &patches,
                                     const PatchGroups &groups) {
  const size_t k = groups.names.size();
  double total = 0;
  for (double a : groups.area) total += a;
  const FixedPoint fixed(std::max(total, 1e-300));  // a cell's sum is at most its group's area (rows sum to <= 1)
  std::vector<__int128> mine(k * k, 0), all(k * k, 0);
  for (size_t r = 0; r < f.rows.size(); ++r) {
    const size_t i = size_t(f.rows[r]);
    __int128 *row = &mine[size_t(groups.ofPatch[i]) * k];
    const double area = patches[i].area;
    if (f.IsDense()) {
      for (long long j = 0; j < f.n; ++j)
        row[groups.ofPatch[size_t(j)]] += fixed.Of(area * f.Value(r * size_t(f.n) + size_t(j)));
    } else {
      f.ForEachEntry(r, [&](int32_t j, long long e) { row[groups.ofPatch[size_t(j)]] += fixed.Of(area * f.Value(size_t(e))); });
    }
  }
  MPI_Datatype int128;
  MPI_Op add;
  RAD_MPI(MPI_Type_contiguous(int(sizeof(__int128)), MPI_BYTE, &int128));
  RAD_MPI(MPI_Type_commit(&int128));
  RAD_MPI(MPI_Op_create(&AddInt128, 1, &add));
  RAD_MPI(MPI_Allreduce(mine.data(), all.data(), int(all.size()), int128, add, comm));
  MPI_Op_free(&add);
  MPI_Type_free(&int128);
  std::vector<double> out(k * k);
  for (size_t a = 0; a < k; ++a)
    for (size_t b = 0; b < k; ++b) out[a * k + b] = fixed.Value(all[a * k + b]) / groups.area[a];
  return out;
}

}  // namespace rad
