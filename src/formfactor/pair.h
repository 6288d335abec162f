// The unoccluded part of one form factor and whether it needs shadow rays. Compiled for the host and, under
// nvcc, for the GPU (RAD_HD): both backends run this code.
#pragma once

#include "formfactor/geometry.h"
#include "formfactor/geometry_view.h"
#include "formfactor/shaft.h"
#include "formfactor/unoccluded.h"
#include "util/hd.h"

namespace rad {

struct PairResult {
  double unoccluded = 0;
  bool needsRays = false;
  int evaluations = 0;
};

RAD_HD inline PairResult UnoccludedPair(const GeometryView &g, int i, int j, const QuadratureSettings &q) {
  PairResult r;
  const Patch &pi = g.patches[i], &pj = g.patches[j];
  if (i == j || pi.face == pj.face) return r;  // a planar face does not see itself
  const ClippedPair cp = ClipPair(PatchPolygon(pi), pi.normal, PatchPolygon(pj), pj.normal);
  if (cp.emitter.n == 0) return r;
  const UnoccludedResult u = UnoccludedFormFactor(cp, pi.normal, pi.area, q);
  r.unoccluded = u.formFactor;
  r.evaluations = u.evaluations;
  if (r.unoccluded <= 0) return r;
  if (!g.hasFacePairCandidates) {
    r.needsRays = true;
    return r;
  }
  const int lo = pi.face < pj.face ? pi.face : pj.face, hi = pi.face < pj.face ? pj.face : pi.face;
  const int64_t key = int64_t(lo) * g.faceCount + hi;
  const int64_t begin = g.candidateStart[key], end = g.candidateStart[key + 1];
  if (begin == end) return r;
  // Built in a fixed order (lower patch first) so that (i, j) and (j, i) always agree on needing rays.
  const Shaft shaft = i < j ? MakeShaft(cp.emitter, pi.normal, cp.receiver, pj.normal)
                            : MakeShaft(cp.receiver, pj.normal, cp.emitter, pi.normal);
  for (int64_t c = begin; c < end && !r.needsRays; ++c) {
    const Occluder &o = g.occluders[g.candidates[c]];
    r.needsRays = ShaftMayBeBlockedBy(shaft, o.polygon.v, o.polygon.n, o.normal);
  }
  return r;
}

inline PairResult UnoccludedPair(const FormFactorGeometry &g, int i, int j, const QuadratureSettings &q) {
  return UnoccludedPair(ViewOf(g), i, j, q);
}

}  // namespace rad
