#include "formfactor/hidden_node.h"

#include "formfactor/full_occlusion.h"
#include "formfactor/occluder_bodies.h"

namespace rad {

int BoxCorners(Vec3 lo, Vec3 hi, Vec3 out[8]) {
  const double xs[2] = {lo.x, hi.x}, ys[2] = {lo.y, hi.y}, zs[2] = {lo.z, hi.z};
  const int nx = hi.x > lo.x ? 2 : 1, ny = hi.y > lo.y ? 2 : 1, nz = hi.z > lo.z ? 2 : 1;
  int count = 0;
  for (int a = 0; a < nx; ++a)
    for (int b = 0; b < ny; ++b)
      for (int c = 0; c < nz; ++c) out[count++] = Vec3{xs[a], ys[b], zs[c]};
  return count;
}

void HiddenNodeProof::SetReceivers(const Vec3 *corners, int count) {
  count_ = count < 8 ? count : 8;
  for (int k = 0; k < count_; ++k) corners_[k] = corners[k];
  Centre();
}

void HiddenNodeProof::Centre() {
  Vec3 sum{0, 0, 0};
  for (int k = 0; k < count_; ++k) sum = sum + corners_[k];
  centre_ = count_ > 0 ? sum / double(count_) : sum;
}

bool HiddenNodeProof::Hides(int occluder, const Vec3 *box, int boxCount) const {
  const Occluder &o = g_.occluders[size_t(occluder)];
  return HidesEverySegment(o.polygon, o.normal, corners_, count_, box, boxCount);
}

bool HiddenNodeProof::BodyHides(int body, const Vec3 *box, int boxCount) const {
  return BodyHidesEverySegment(g_.bodies.bodies[size_t(body)], corners_, count_, box, boxCount);
}

bool HiddenNodeProof::operator()(const PatchTreeNode &node) {
  if (count_ == 0) return false;
  Vec3 box[8];
  const int boxCount = BoxCorners(node.boxLo, node.boxHi, box);
  if (lastHider_ >= 0 && Hides(lastHider_, box, boxCount)) return ++proved, true;
  if (lastBody_ >= 0 && BodyHides(lastBody_, box, boxCount)) return ++proved, true;
  const int face = embree_.FirstFaceHit(centre_, (node.boxLo + node.boxHi) * 0.5);
  if (face < 0 || size_t(face) >= g_.occludersOfFace.size()) return false;
  int body = -1;
  for (int occluder : g_.occludersOfFace[size_t(face)]) {
    if (occluder != lastHider_ && Hides(occluder, box, boxCount)) {
      lastHider_ = occluder, lastBody_ = -1;
      return ++proved, true;
    }
    if (body < 0) body = g_.bodies.bodyOf[size_t(occluder)];
  }
  if (body >= 0 && body != lastBody_ && BodyHides(body, box, boxCount)) {
    lastBody_ = body, lastHider_ = -1;
    return ++proved, true;
  }
  return false;
}

}  // namespace rad
