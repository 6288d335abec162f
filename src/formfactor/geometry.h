// Everything a rank needs to compute rows of F, prepared once: the patches, the input polygons as occluders,
// and for every pair of input polygons the occluders that might stand between them (face-level shafts).
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/convex_polygon.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/hd.h"

namespace rad {

struct Occluder {
  ConvexPolygon polygon;  // an input polygon (n-gons above kCapacity are split into triangles)
  Vec3 normal;
  int face;               // the input polygon it belongs to
};

struct FormFactorGeometry {
  std::vector<Patch> patches;
  std::vector<Occluder> occluders;
  std::vector<std::vector<int>> occludersOfFace;  // occluder indices per input polygon
  int faceCount = 0;
  // Face-pair candidate lists in CSR form, indexed by I * faceCount + J; empty when not precomputed.
  bool hasFacePairCandidates = false;
  std::vector<int64_t> candidateStart;
  std::vector<int32_t> candidates;
};

// Above this many input polygons the face-pair lists (faces^3 work) are skipped and every pair that can
// exchange light is ray traced.
constexpr int kMaxFacesForFacePairCulling = 2048;

FormFactorGeometry BuildFormFactorGeometry(const Scene &scene, int subdiv);

RAD_HD RAD_INLINE ConvexPolygon PatchPolygon(const Patch &p) { return MakeConvexPolygon(p.corners, p.cornerCount); }

}  // namespace rad
