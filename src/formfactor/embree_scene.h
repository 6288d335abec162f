// The rank's Embree scene of all input polygons (as triangles), shared by all its threads for shadow rays.
#pragma once

#include <embree3/rtcore.h>

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

  RTCScene Handle() const { return scene_; }

 private:
  RTCScene scene_ = nullptr;
};

}  // namespace rad
