// The rows of F by hemicube gathering (hemicube.h) on the rank's cores: each row's hemicube traced with Embree
// against the patches (and the obstructions, which take what they hide), its hits summed per patch in pixel
// order and stored as CSR. A row holds at most one entry per pixel, so memory is O(rows x pixels) at worst and
// the rows can be built once and iterated (the fast way), where a dense row would be N entries.
#pragma once

#include "util/rtcore.h"

#include <cstdint>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "formfactor/hemicube.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/progress.h"

namespace rad {

// What the pixels see, on the CPU: the patches as quads and the obstructions as triangles on one Embree scene.
class HemicubeTracer {
 public:
  HemicubeTracer(const Scene &scene, const std::vector<Patch> &patches);
  ~HemicubeTracer();
  HemicubeTracer(const HemicubeTracer &) = delete;
  HemicubeTracer &operator=(const HemicubeTracer &) = delete;
  // The patch whose front the ray meets first, or -1 (nothing, an obstruction, or a patch's back).
  int32_t Trace(Vec3 origin, Vec3 direction) const;

 private:
  const std::vector<Patch> &patches_;
  RTCScene scene_ = nullptr;
  float tnear_ = 0;
};

// Row `row`'s hemicube traced: add(j, weight) for every pixel that sees patch j, in pixel order.
template <typename Add>
void GatherRowCpu(const HemicubeTracer &tracer, const std::vector<double> &weight, const std::vector<Patch> &patches,
                  long long row, const HemicubeOptions &options, Add add) {
  const Patch &p = patches[size_t(row)];
  const HemicubeFrame frame = MakeHemicubeFrame(p.normal, uint32_t(row), options.seed, options.rotate);
  GatherHemicubeRow(
      options.resolution, weight.data(), p.centroid, frame,
      [&](Vec3 origin, Vec3 direction) { return tracer.Trace(origin, direction); }, add);
}

// `rows` (global, ascending) of F for `patches` of `scene` into `f` as CSR in f.precision; `f.n` and `f.rows`
// as set by the caller. `rays`: how many were traced, for the rate. `showProgress`: the rows done, as a line.
void ComputeHemicubeRowsCpu(const Scene &scene, const std::vector<Patch> &patches, const std::vector<long long> &rows,
                            const HemicubeOptions &options, FormFactorRows &f, long long &rays, bool showProgress);
// The same rows appended to the CSR rows `f` (StartCsrRows), traced with `tracer` (made once for rows computed
// in rounds); `progress` (or null) advanced by a row at a time.
void AppendHemicubeRowsCpu(const HemicubeTracer &tracer, const std::vector<Patch> &patches,
                           const std::vector<long long> &rows, const HemicubeOptions &options, FormFactorRows &f,
                           Progress *progress);

}  // namespace rad
