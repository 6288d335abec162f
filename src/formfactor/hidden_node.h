// Far links found hidden whole without their rays: one occluder that blocks every segment from the receivers'
// region (a row's patch, or an element's box) to a whole tree node's box.
//
// Why: on the 8 x 8 city split to 0.5 (N = 24272, default tolerance) the elements' verdicts that came out
// hidden whole took 150 M of the walks' 604 M far-link rays (81 rays each, every one of which must be traced to
// learn that none gets through), and the rows' links found hidden whole 28 M more. A building's wall between
// the element and a node behind the building proves the same with a few dozen dot products.
//
// How: the link's first packet of rays (VisibleShare) says whether a proof is worth trying: only when every
// ray of it is hidden and more rays would follow. Tried in turn: what proved the walk's last hidden node, then
// the occluders of the polygon that a segment from the receivers' centre to the node's centre meets first
// (HidesEverySegment, full_occlusion.h), then the convex body that polygon belongs to (BodyHidesEverySegment,
// occluder_bodies.h): one wall of a building hid only a quarter of the nodes found hidden on a city, the
// building as a whole most of the rest. Both proofs keep the margins that make a single-precision ray hit, so a
// proved link's share, 0, is what its rays would have given (a ray through a body could in principle slip
// along an edge between two of its polygons, where Embree's fast intersection test is not watertight; on the
// 8 x 8 city B came out the same to the bit), and only the rays are saved.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "formfactor/patch_tree.h"

namespace rad {

// The distinct corners of box [lo, hi] (1, 2, 4 or 8: a box flat on an axis has half as many).
int BoxCorners(Vec3 lo, Vec3 hi, Vec3 out[8]);

// A walk's prover: the receivers' region and the occluder that proved its last hidden node. One per row's walk,
// or per element's: which occluder is tried first changes the work, never the answer.
class HiddenNodeProof {
 public:
  HiddenNodeProof(const FormFactorGeometry &g, const EmbreeScene &embree) : g_(g), embree_(embree) {}
  // The receivers' region: the corners of a patch, or of an element's box.
  void SetReceivers(const Vec3 *corners, int count);
  void SetReceiverBox(Vec3 lo, Vec3 hi) { count_ = BoxCorners(lo, hi, corners_), Centre(); }
  // True when one occluder or body blocks every segment from the receivers' region to `node`'s box.
  bool operator()(const PatchTreeNode &node);
  long long proved = 0;  // nodes proved hidden

 private:
  void Centre();
  bool Hides(int occluder, const Vec3 *box, int boxCount) const;
  bool BodyHides(int body, const Vec3 *box, int boxCount) const;
  const FormFactorGeometry &g_;
  const EmbreeScene &embree_;
  Vec3 corners_[8];
  int count_ = 0;
  Vec3 centre_{0, 0, 0};
  int lastHider_ = -1;  // an occluder
  int lastBody_ = -1;   // or a body
};

}  // namespace rad
