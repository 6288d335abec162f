// The rank's Embree scene of all input polygons (as triangles), shared by all its threads for shadow rays.
#pragma once

#include "util/rtcore.h"

#include <cstdint>
#include <vector>

#include "formfactor/segment.h"
#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

class EmbreeScene {
 public:
  explicit EmbreeScene(const Scene &scene);
  ~EmbreeScene();
  EmbreeScene(const EmbreeScene &) = delete;
  EmbreeScene &operator=(const EmbreeScene &) = delete;

  // True if any polygon blocks the open segment from `from` to `to`. The ends are trimmed by a relative
  // epsilon so that the polygons the segment starts and ends on never count.
  bool SegmentOccluded(Vec3 from, Vec3 to) const;
  // The same for `count` segments at once (at most kSegmentPacket), traced as one packet: what VisibleFraction
  // asks for a pair's rays, which start and end close together and traverse the same nodes.
  static constexpr int kSegmentPacket = 16;
  void SegmentsOccluded(const Vec3 *from, const Vec3 *to, int count, bool *hidden) const;

  // The input polygon (a face of the scene) that the segment from `from` to `to`, trimmed alike, meets first, or
  // -1: where a proof that one occluder hides a whole node looks first (hidden_node.h).
  int FirstFaceHit(Vec3 from, Vec3 to) const;

  RTCScene Handle() const { return scene_; }

 private:
  RTCScene scene_ = nullptr;
  std::vector<int32_t> faceOfTriangle_;  // Embree's primitive ids are the faces' triangles, in face order
};

// The shadow-ray tester of the CPU backends (visibility.h): one segment, or a pair's segments as packets. A
// packet and single rays agree but at grazing hits (8 of 640,000 facing rays on a city, where the project's
// BVH sided with the packets), and every CPU caller of VisibleFraction uses this, so the dense and sparse
// operators still compute the same bits.
struct EmbreeShadowRays {
  const EmbreeScene &scene;
  static constexpr int kRaysAtOnce = EmbreeScene::kSegmentPacket;
  bool operator()(Vec3 from, Vec3 to) const { return scene.SegmentOccluded(from, to); }
  void operator()(const Vec3 *from, const Vec3 *to, int count, bool *hidden) const {
    scene.SegmentsOccluded(from, to, count, hidden);
  }
};

}  // namespace rad
