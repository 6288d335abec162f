// The form-factor geometry as plain pointers and counts: what the pair kernels read, on the host (pointing into
// a FormFactorGeometry) and on the GPU (pointing into device copies of the same arrays).
#pragma once

#include <cstdint>

#include "formfactor/geometry.h"
#include "util/hd.h"

namespace rad {

struct GeometryView {
  const Patch *patches = nullptr;
  long long patchCount = 0;
  const WholePatch *wholePatches = nullptr;  // null: each pair makes what it needs (whole_patch.h)
  const Occluder *occluders = nullptr;
  const int32_t *convexCornerStart = nullptr;  // see FormFactorGeometry; null when there is no convex surface
  const Vec3 *convexCorners = nullptr;
  const int32_t *convexFaceStart = nullptr;
  const int32_t *convexFaces = nullptr;
  const int32_t *convexSurfaceOfFace = nullptr;  // faceCount entries
  int faceCount = 0;
  bool hasFacePairCandidates = false;
  const int64_t *candidateStart = nullptr;  // faceCount^2 + 1 entries when hasFacePairCandidates
  const int32_t *candidates = nullptr;
  BvhView occluderBvh;  // when !hasFacePairCandidates
  const SlotBox *occluderBvhBoxes = nullptr;
};

// The corners and the polygons (occluder indices) of convex surface `body` (FormFactorGeometry::convexCorners);
// none when it keeps no list.
RAD_HD RAD_INLINE const Vec3 *ConvexCorners(const GeometryView &g, int body, int &count) {
  count = g.convexCornerStart ? g.convexCornerStart[body + 1] - g.convexCornerStart[body] : 0;
  return count > 0 ? g.convexCorners + g.convexCornerStart[body] : nullptr;
}
RAD_HD RAD_INLINE const int32_t *ConvexFaces(const GeometryView &g, int body, int &count) {
  count = g.convexFaceStart ? g.convexFaceStart[body + 1] - g.convexFaceStart[body] : 0;
  return count > 0 ? g.convexFaces + g.convexFaceStart[body] : nullptr;
}

inline GeometryView ViewOf(const FormFactorGeometry &g) {
  GeometryView v;
  v.patches = g.patches.data();
  v.patchCount = (long long)g.patches.size();
  v.wholePatches = g.wholePatches.empty() ? nullptr : g.wholePatches.data();
  v.occluders = g.occluders.data();
  v.convexCornerStart = g.convexCornerStart.empty() ? nullptr : g.convexCornerStart.data();
  v.convexCorners = g.convexCorners.data();
  v.convexFaceStart = g.convexFaceStart.empty() ? nullptr : g.convexFaceStart.data();
  v.convexFaces = g.convexFaces.data();
  v.convexSurfaceOfFace = g.convexSurfaceOfFace.data();
  v.faceCount = g.faceCount;
  v.hasFacePairCandidates = g.hasFacePairCandidates;
  v.candidateStart = g.candidateStart.data();
  v.candidates = g.candidates.data();
  v.occluderBvh = g.occluderBvh.View();
  v.occluderBvhBoxes = g.occluderBvhBoxes.data();
  return v;
}

}  // namespace rad
