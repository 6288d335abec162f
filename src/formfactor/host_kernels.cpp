// The form-factor kernel's innermost loops as host functions, each compiled for several instruction sets
// (util/simd.h). Their bodies are the RAD_HD loops the device runs, so both backends share one text.
#include "formfactor/point_pair_rule.h"
#include "formfactor/point_polygon.h"
#include "util/simd.h"

namespace rad {

RAD_HOST_CLONES void PointToPolygonFormFactorsHost(const double *px, const double *py, const double *pz, int count,
                                                   Vec3 nx, const ConvexPolygon &poly, double *out) {
  PointToPolygonFormFactorsLoop(px, py, pz, count, nx, poly, out);
}

RAD_HOST_CLONES double NodePairSumHost(const NodeSpan &e, Vec3 emitterNormal, const NodeSpan &r,
                                       Vec3 receiverNormal) {
  return NodePairSumLoop(e, emitterNormal, r, receiverNormal);
}

}  // namespace rad
