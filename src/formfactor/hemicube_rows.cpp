#include "formfactor/hemicube_rows.h"

#include "util/rtcore.h"
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>

#include "accel/bvh_builder.h"
#include "formfactor/hemicube_bvh.h"
#include "scene/embree_geometry.h"
#include "util/embree_util.h"
#include "util/error.h"
#include "util/progress.h"

namespace rad {

namespace {

// One row's entries: the pixels' weights summed per patch in the order they come (pixel order, so that a row
// is the same bits however it was traced), then handed out by column. Shared by the CPU rows and the rows from
// a device's hits.
class RowSums {
 public:
  explicit RowSums(size_t patches) : sum_(patches, 0.0) {}
  void Add(int32_t j, double weight) {
    if (sum_[size_t(j)] == 0) touched_.push_back(j);  // weights are > 0: 0 means not seen yet
    sum_[size_t(j)] += weight;
  }
  // Appends the row's entries, columns ascending, and clears the sums for the next row.
  template <typename Value>
  void Take(std::vector<int32_t> &columns, std::vector<Value> &values) {
    std::sort(touched_.begin(), touched_.end());
    for (int32_t j : touched_) {
      columns.push_back(j);
      values.push_back(Value(sum_[size_t(j)]));
      sum_[size_t(j)] = 0;
    }
    touched_.clear();
  }

 private:
  std::vector<double> sum_;
  std::vector<int32_t> touched_;
};

}  // namespace

// The patches are geometry 0 (primitive = patch), the obstructions geometry 1: a pixel sees the nearest.
HemicubeTracer::HemicubeTracer(const Scene &scene, const std::vector<Patch> &patches) : patches_(patches) {
  scene_ = rtcNewScene(EmbreeDevice());
  rtcSetSceneFlags(scene_, RTC_SCENE_FLAG_ROBUST);
  AttachPatchQuads(scene_, patches);
  Scene obstructions;
  obstructions.materials = scene.materials;
  for (const Face &f : scene.faces)
    if (scene.materials[size_t(f.material)].obstruction) obstructions.faces.push_back(f);
  if (!obstructions.faces.empty()) {
    RTCGeometry geom = NewFaceTriangles(obstructions);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene_, geom);
    rtcReleaseGeometry(geom);
  }
  rtcCommitScene(scene_);
  RTCBounds b;
  rtcGetSceneBounds(scene_, &b);
  // Rays start on their patch's plane: a start this far along keeps them off it whatever the rounding of the
  // single-precision corners, far below any patch's size.
  tnear_ = float(1e-6 * std::max({b.upper_x - b.lower_x, b.upper_y - b.lower_y, b.upper_z - b.lower_z}));
}

HemicubeTracer::~HemicubeTracer() { rtcReleaseScene(scene_); }

int32_t HemicubeTracer::Trace(Vec3 origin, Vec3 direction) const {
  RTCRayHit rh = MakeRayHit(origin, direction, tnear_, std::numeric_limits<float>::infinity());
  Intersect1(scene_, nullptr, &rh);
  if (rh.hit.geomID != 0) return -1;  // nothing, or an obstruction
  const int32_t j = int32_t(rh.hit.primID);
  return Dot(patches_[size_t(j)].normal, direction) < 0 ? j : -1;  // a back side sends nothing
}

std::vector<double> HemicubeWeights(int n) {
  std::vector<double> weight(size_t(HemicubePixels(n)));
  for (int k = 0; k < HemicubePixels(n); ++k) weight[size_t(k)] = HemicubePixelWeight(n, k);
  return weight;
}

void ComputeHemicubeRowsCpu(const Scene &scene, const std::vector<Patch> &patches, const std::vector<long long> &rows,
                            const HemicubeOptions &options, FormFactorRows &f, long long &rays, bool showProgress) {
  const HemicubeTracer tracer(scene, patches);
  Progress progress("hemicube rows", (long long)rows.size(), showProgress);
  StartCsrRows(f);
  AppendHemicubeRowsCpu(tracer, patches, rows, options, f, &progress);
  progress.Finish();
  rays = (long long)rows.size() * HemicubePixels(options.resolution);
}

void AppendHemicubeRowsCpu(const HemicubeTracer &tracer, const std::vector<Patch> &patches,
                           const std::vector<long long> &rows, const HemicubeOptions &options, FormFactorRows &f,
                           Progress *progress) {
  RAD_CHECK(options.resolution >= 2 && options.resolution % 2 == 0, "hemicube resolution must be even");
  RAD_CHECK(f.IsCsr() && !f.indptr.empty(), "AppendHemicubeRowsCpu: the rows are not CSR rows begun");
  const std::vector<double> weight = HemicubeWeights(options.resolution);
  std::vector<std::vector<int32_t>> columns(rows.size());
  std::vector<std::vector<double>> values(rows.size());
  tbb::enumerable_thread_specific<RowSums> scratch([&] { return RowSums(patches.size()); });
  tbb::parallel_for(tbb::blocked_range<size_t>(0, rows.size(), 16), [&](const tbb::blocked_range<size_t> &range) {
    RowSums &sums = scratch.local();
    for (size_t r = range.begin(); r != range.end(); ++r) {
      GatherRowCpu(tracer, weight, patches, rows[r], options, [&](int32_t j, double w) { sums.Add(j, w); });
      sums.Take(columns[r], values[r]);
      if (progress) progress->Advance();
    }
  });
  for (size_t r = 0; r < rows.size(); ++r) {
    f.AppendRowColumns(columns[r].data(), columns[r].size());
    if (f.precision == Precision::kDouble) f.f64.insert(f.f64.end(), values[r].begin(), values[r].end());
    else
      for (double v : values[r]) f.f32.push_back(float(v));
    f.indptr.push_back(f.EntryCount());
    std::vector<int32_t>().swap(columns[r]);
    std::vector<double>().swap(values[r]);
  }
}

std::vector<BvhTriangle> HemicubeTriangles(const Scene &scene, const std::vector<Patch> &patches) {
  std::vector<BvhTriangle> triangles = PatchTriangles(patches);
  Scene obstructions;
  obstructions.materials = scene.materials;
  std::vector<int32_t> faceOf;
  for (size_t f = 0; f < scene.faces.size(); ++f)
    if (scene.materials[size_t(scene.faces[f].material)].obstruction) {
      obstructions.faces.push_back(scene.faces[f]);
      faceOf.push_back(int32_t(f));
    }
  for (BvhTriangle t : SceneTriangles(obstructions)) {
    t.id = int32_t(patches.size()) + faceOf[size_t(t.id)];
    triangles.push_back(t);
  }
  return triangles;
}

HemicubeBvhJob MakeHemicubeBvhJob(BvhView bvh, const Patch *patches, size_t patchCount,
                                  const std::vector<BvhTriangle> &triangles, const HemicubeOptions &options) {
  HemicubeBvhJob job;
  job.bvh = bvh;
  job.patches = patches;
  job.patchCount = int32_t(patchCount);
  job.resolution = options.resolution;
  job.rotate = options.rotate;
  job.seed = options.seed;
  job.tnear = HemicubeStart(triangles);
  return job;
}

void StartCsrRows(FormFactorRows &f) {
  f.storage = Storage::kCsr;
  f.indptr.assign(1, 0);
  f.columnLow.clear();
  f.columnSpanStart.clear();
  f.f64.clear();
  f.f32.clear();
}

float HemicubeStart(const std::vector<BvhTriangle> &triangles) {
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (const BvhTriangle &t : triangles)
    for (const float *v : {t.v0, t.v1, t.v2})
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], v[a]), hi[a] = std::max(hi[a], v[a]);
  return float(1e-6 * std::max({double(hi[0]) - lo[0], double(hi[1]) - lo[1], double(hi[2]) - lo[2], 0.0}));
}

void AppendHemicubeRows(const int32_t *hits, size_t rows, int resolution, const std::vector<double> &weight,
                        size_t patchCount, FormFactorRows &f) {
  const size_t pixels = size_t(HemicubePixels(resolution));
  RowSums sums(patchCount);
  std::vector<int32_t> columns;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < pixels; ++k)  // as GatherRowCpu adds them, pixel by pixel
      if (hits[r * pixels + k] >= 0) sums.Add(hits[r * pixels + k], weight[k]);
    columns.clear();
    if (f.precision == Precision::kDouble) sums.Take(columns, f.f64);
    else sums.Take(columns, f.f32);
    f.AppendRowColumns(columns.data(), columns.size());
    f.indptr.push_back(f.EntryCount());
  }
}

void ComputeHemicubeRowsOnBvh(const Scene &scene, const std::vector<Patch> &patches,
                              const std::vector<long long> &rows, const HemicubeOptions &options, FormFactorRows &f) {
  const std::vector<BvhTriangle> triangles = HemicubeTriangles(scene, patches);
  const FlatBvh bvh = BuildBvh(triangles);
  HemicubeBvhJob job = MakeHemicubeBvhJob(bvh.View(), patches.data(), patches.size(), triangles, options);
  job.rows = rows.data();
  const int pixels = HemicubePixels(options.resolution);
  std::vector<int32_t> hits(rows.size() * size_t(pixels));
  tbb::parallel_for(size_t(0), rows.size(), [&](size_t r) {
    for (int k = 0; k < pixels; ++k) hits[r * size_t(pixels) + size_t(k)] = HemicubePixelHit(job, (long long)r, k);
  });
  StartCsrRows(f);
  AppendHemicubeRows(hits.data(), rows.size(), options.resolution, HemicubeWeights(options.resolution), patches.size(), f);
}

}  // namespace rad
