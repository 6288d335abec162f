// The two ray-tracing structures of the VPL renderer: the polygons themselves (camera rays, light paths and
// exact shadow rays) and, for imperfect visibility, one axis-aligned bounding box per polygon (shadow rays only).
#pragma once

#include "util/rtcore.h"

#include <vector>

#include "scene/patch.h"
#include "util/vec3.h"

namespace rad {

struct SurfaceHit {
  bool hit = false;
  long long patch = -1;
  double t = 0;  // along the (unit) direction
};

class VplScene {
 public:
  // `boxes`: shadow rays test the bounding box of every input polygon instead of the polygons.
  VplScene(const std::vector<Patch> &patches, bool boxes);
  ~VplScene();
  VplScene(const VplScene &) = delete;
  VplScene &operator=(const VplScene &) = delete;

  // First polygon hit along the unit `direction`, either side.
  SurfaceHit Intersect(Vec3 origin, Vec3 direction) const;
  // True if nothing blocks the segment from `from` to `to` without a fraction `trim` of its length at each
  // end. With boxes, the boxes of the input polygons `faceA` and `faceB` (those of the two end points) and
  // the boxes that hold either end are ignored: a polygon's box holds the rays that leave it.
  bool Visible(Vec3 from, Vec3 to, double trim, int faceA, int faceB) const;

 private:
  RTCScene polygons_ = nullptr;
  RTCScene boxes_ = nullptr;  // null: shadow rays use the polygons
  struct Box {
    float lower[3], upper[3];
    int face;
  };
  std::vector<Box> boxList_;
  static void BoxBounds(const RTCBoundsFunctionArguments *args);
  static void BoxIntersect(const RTCIntersectFunctionNArguments *args);
  static void BoxOccluded(const RTCOccludedFunctionNArguments *args);
};

}  // namespace rad
