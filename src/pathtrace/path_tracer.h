// An unbiased path tracer for the project's diffuse scenes (CPU, Embree): the reference the radiosity solution
// is checked against. Units are those of the radiosity system (CONTRACTS.md): everything is radiance, so the
// value of a pixel is directly comparable to the B of the patch it sees.
//
// The physics of one path vertex is shared with the GPU's wavefront path tracer (path_physics.h); this file
// asks Embree the rays it needs.
//
// Estimator of the outgoing radiance at a surface point x on polygon f:
//   L_o(x) = Ke_f + Kd_f / pi * E(x),
// with the irradiance from the emitters by next-event estimation (one point on one emissive polygon, chosen
// with probability proportional to its power, luminance(Ke) x area, then uniformly by area; a shadow ray), and
// one cosine-weighted bounce that carries on the path. Where the bounce hits an emitter, the two strategies'
// estimates of that light are combined by multiple importance sampling (power heuristic), so nothing is counted
// twice and the variance stays finite next to an emitter's edge, where light samples alone have 1/r^2 tails.
// Russian roulette after a few bounces keeps paths finite without bias; it only ends paths whose throughput has
// fallen below a threshold and raises the survivors' to it (a weight window), so that no rare path carries a
// large weight. Camera rays see Ke with full weight.
// Front sides only: light leaves and is received on the side the vertices run counter-clockwise; a ray that
// hits a back side or leaves the scene brings nothing.
//
// Random numbers are counter-based (Philox) keyed by the seed and counted by (pixel or patch, sample,
// dimension), so every value is the same for any number of ranks and threads.
#pragma once

#include "util/rtcore.h"

#include <cstdint>
#include <vector>

#include "pathtrace/path_physics.h"
#include "pathtrace/path_scene.h"
#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

// Rays traced by one estimate, for the report.
struct RayCounts {
  long long primary = 0, bounce = 0, shadow = 0;
  long long Total() const { return primary + bounce + shadow; }
  void Add(const RayCounts &o) {
    primary += o.primary;
    bounce += o.bounce;
    shadow += o.shadow;
  }
};

class PathTracer {
 public:
  // `scene` must outlive the tracer. A scene without emitters is allowed (everything is black).
  PathTracer(const Scene &scene, const PathTraceSettings &settings);
  ~PathTracer();
  PathTracer(const PathTracer &) = delete;
  PathTracer &operator=(const PathTracer &) = delete;

  // Radiance arriving at `origin` along unit `direction` (a camera ray): Ke of the front side it hits plus that
  // point's reflected radiance; 0 for misses and back sides.
  Vec3 CameraRadiance(Vec3 origin, Vec3 direction, WalkRandom &random, RayCounts &rays) const;

  // Outgoing radiance estimate at point `x` on polygon `face` (Ke + reflected), as seen from its front side.
  Vec3 OutgoingRadiance(Vec3 x, int face, WalkRandom &random, RayCounts &rays) const;

  const Scene &GetScene() const { return scene_; }
  const PathTraceSettings &Settings() const { return settings_; }
  const PathScene &Physics() const { return physics_; }
  Vec3 FaceNormal(int face) const { return physics_.normal[size_t(face)]; }

 private:
  struct Hit {
    int face = -1;
    Vec3 point;
  };
  // Closest polygon along the ray (ignoring polygon `skip`, the one the ray starts on); face -1 if none.
  Hit Intersect(Vec3 origin, Vec3 direction, int skip, RayCounts &rays, bool primary) const;
  // Is the open segment from x (on `fromFace`) to y (on `toFace`) blocked by another polygon?
  bool Occluded(Vec3 x, int fromFace, Vec3 y, int toFace, RayCounts &rays) const;
  // Reflected radiance at x on `face`: the walk of path_physics.h with Embree's answers.
  Vec3 Reflected(Vec3 x, int face, WalkRandom &random, RayCounts &rays) const;

  const Scene &scene_;
  PathTraceSettings settings_;
  PathScene physics_;
  PathSceneView view_;
  std::vector<int> faceOfTriangle_;   // Embree primitive -> face
  RTCScene rtcScene_ = nullptr;
};

// Uniform point on the patch-like polygon with corners c[0..count) (triangle or planar quad) from (u, v) in
// [0,1)^2, and its weight (PointOnPolygon, with the polygon's area computed here).
Vec3 PointOnPatch(const Vec3 *corners, int count, double u, double v, double *weight);

}  // namespace rad
