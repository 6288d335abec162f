// The path tracer as a wavefront (Laine, Karras and Aila 2013, "Megakernels considered harmful"; the GPU
// path tracer port of the validation study): instead of one thread following one path through all its
// bounces, each stage is a separate pass over a buffer of paths, and paths move between stages through queues
// of path indices:
//
//   start    one path per (item, sample) of the batch: a camera ray through its pixel, or a point on a patch
//            that scatters at once;
//   extend   the closest hit of every queued ray (the project's BVH);
//   shade    what the hit brings (Ke seen by a camera ray, an emitter's MIS-weighted light), then scattering:
//            a light sample goes to the shadow queue, a bounce to the next ray queue;
//   connect  the any-hit test of every queued light sample, adding its light where the segment is clear;
//   finish   the value of every path; reduce: the mean (and standard error) of every item's samples.
//
// On a GPU each pass is one kernel, so threads of a warp run the same code on coherent work (all trace, or all
// shade), and no thread idles while a neighbour's path is longer. The physics is that of the CPU path tracer,
// the same functions (path_physics.h) on the same counter-based random numbers, and the order of the sums of
// a path is the CPU's (its light sample is connected before its next hit is shaded), so a path's value does
// not depend on the order of the queues, and it equals the CPU's wherever the two ray tracers report the same
// polygons. Every stage is a RAD_HD function of one index: the host runs them with threads (tests, and a
// reference for the GPU), the GPU as kernels (cuda/gpu_path_tracer.cu).
#pragma once

#include <cstdint>

#include "accel/bvh.h"
#include "accel/bvh_traversal.h"
#include "formfactor/segment.h"
#include "pathtrace/path_physics.h"
#include "render/pixel_kernels.h"
#include "scene/patch.h"
#include "util/decomposition.h"
#include "util/hd.h"

namespace rad {

enum class PathSource : int {
  kCamera,  // items are the pixels of the rank's rows (y = rank, rank + ranks, ...), row by row
  kPatch,   // items are the rank's patches (i = rank, rank + ranks, ...)
};

// One path's state between stages.
struct WavefrontPath {
  PathVertex vertex;   // face -1 until a camera ray has hit something
  WalkRandom random;
  Vec3 emitted;        // Ke of the first vertex's polygon (0 where a camera ray sees nothing, or a back side)
  double weight = 1;   // of the patch point (PointOnPolygon); 1 for camera samples
  Vec3 direction;      // of the ray in the ray queue
  int hitFace = -1;    // extend's answer: the polygon hit (-1: none) and where along direction
  float hitT = 0;
  int lightFace = -1;  // the light sample waiting in the shadow queue
  Vec3 lightPoint, lightValue;
};

enum class WavefrontStage : int { kStart, kExtend, kShade, kConnect, kFinish, kReduce };

// What every stage reads: pointers into host or device memory, all of the same side.
struct WavefrontJob {
  PathSceneView scene;
  PathTraceSettings settings;
  BvhView bvh;         // SceneTriangles(scene): id = polygon
  uint64_t seed = 0;
  PathSource source = PathSource::kCamera;
  int samples = 1;     // per item
  int strata = 1;      // lround(sqrt(samples)): jittered strata when samples is a square
  CameraFrame frame;   // kCamera
  const Patch *patches = nullptr;  // kPatch
  int rank = 0, ranks = 1;
  long long firstItem = 0;  // rank-local index of the batch's first item
  WavefrontPath *paths = nullptr;  // per path of the batch: path k is sample k % samples of item k / samples
  Vec3 *values = nullptr;          // per path: its value (finish)
  double *itemResults = nullptr;   // per item of the batch: mean (3) then standard error (3; kPatch only)
  int *rays = nullptr;             // the queue extend and shade run over (its length is the launch's)
  int *nextRays = nullptr;         // filled by start and shade
  int *shadows = nullptr;          // filled by start and shade
  int *counts = nullptr;           // [0] entries in nextRays, [1] entries in shadows
};

namespace wavefront_detail {

RAD_HD RAD_INLINE void Push(int *queue, int *count, int path) {
#if defined(__CUDA_ARCH__)
  queue[atomicAdd(count, 1)] = path;
#else
  queue[__atomic_fetch_add(count, 1, __ATOMIC_RELAXED)] = path;
#endif
}

// Scattering at the path's vertex: its light sample to the shadow queue, its bounce to the next ray queue.
RAD_HD RAD_INLINE void Scatter(const WavefrontJob &job, int k) {
  WavefrontPath &p = job.paths[k];
  const VertexRays next = ScatterAtVertex(job.scene, job.settings, p.vertex, p.random);
  if (next.shadow) {
    p.lightFace = next.lightFace;
    p.lightPoint = next.lightPoint;
    p.lightValue = next.lightValue;
    Push(job.shadows, job.counts + 1, k);
  }
  if (next.bounce) {
    p.direction = next.direction;
    Push(job.nextRays, job.counts, k);
  }
}

}  // namespace wavefront_detail

// Path k of the batch: the same sample positions and random streams as the CPU's RenderPathTraced and
// EstimatePatches.
RAD_HD RAD_INLINE void StartPath(const WavefrontJob &job, int k) {
  const long long item = job.firstItem + k / job.samples;
  const int s = k % job.samples;
  WavefrontPath &p = job.paths[k];
  p = WavefrontPath();
  if (job.source == PathSource::kCamera) {
    const int width = job.frame.width;
    const int y = CyclicItem(int(item / width), job.rank, job.ranks), x = int(item % width);
    const uint64_t pixel = uint64_t(y) * uint64_t(width) + uint64_t(x);
    double dx, dy;
    SampleOffset(job.seed, pixel, s, job.samples, job.strata, dx, dy, kPathJitterStream);
    const CameraRay ray = FrameRay(job.frame, x + dx, y + dy);
    p.random = WalkRandom(job.seed, pixel, uint32_t(s), kPathWalkStream);
    p.vertex.x = ray.origin;
    p.direction = ray.direction;
    wavefront_detail::Push(job.nextRays, job.counts, k);
    return;
  }
  const long long i = CyclicItem(item, job.rank, job.ranks);
  const Patch &patch = job.patches[i];
  double u, v;
  SampleOffset(job.seed, uint64_t(i), s, job.samples, job.strata, u, v, kPatchPointStream);
  p.vertex.x = PointOnPolygon(patch.corners, patch.cornerCount, patch.area, u, v, &p.weight);
  p.vertex.face = patch.face;
  p.random = WalkRandom(job.seed, uint64_t(i), uint32_t(s), kPatchWalkStream);
  p.emitted = job.scene.emission[patch.face];
  wavefront_detail::Scatter(job, k);
}

// Entry q of the ray queue: the closest polygon along the path's ray, other than the one it leaves.
RAD_HD RAD_INLINE void ExtendPath(const WavefrontJob &job, int q) {
  WavefrontPath &p = job.paths[job.rays[q]];
  const BvhHit hit = ClosestHit(job.bvh, ToFloat3(p.vertex.x), ToFloat3(p.direction), 0.0f, INFINITY,
                                p.vertex.face);
  p.hitFace = hit.id;
  p.hitT = hit.t;
}

// Entry q of the ray queue, after extend: what the hit brings, then scattering there.
RAD_HD RAD_INLINE void ShadePath(const WavefrontJob &job, int q) {
  const int k = job.rays[q];
  WavefrontPath &p = job.paths[k];
  Vec3 hitPoint;
  if (p.hitFace >= 0) hitPoint = SnapToPlane(job.scene, p.hitFace, p.vertex.x + p.direction * double(p.hitT));
  if (p.vertex.face < 0) {  // a camera ray: the front side it sees shows its Ke with full weight
    if (!SeesFrontSide(job.scene, p.direction, p.hitFace)) return;
    p.emitted = job.scene.emission[p.hitFace];
    p.vertex.x = hitPoint;
    p.vertex.face = p.hitFace;
  } else if (!ArriveAtHit(job.scene, p.vertex, p.direction, p.hitFace, hitPoint)) {
    return;
  }
  wavefront_detail::Scatter(job, k);
}

// Entry q of the shadow queue: the light sample counts where nothing but its two polygons meets the segment.
RAD_HD RAD_INLINE void ConnectPath(const WavefrontJob &job, int q) {
  WavefrontPath &p = job.paths[job.shadows[q]];
  const Vec3 x = p.vertex.x;
  if (!AnyHit(job.bvh, ToFloat3(x), ToFloat3(p.lightPoint - x), kSegmentTrim, 1.0f - kSegmentTrim, p.vertex.face,
              p.lightFace))
    p.vertex.sum += p.lightValue;
}

RAD_HD RAD_INLINE void FinishPath(const WavefrontJob &job, int k) {
  const WavefrontPath &p = job.paths[k];
  job.values[k] = (p.emitted + p.vertex.sum) * p.weight;
}

// Item j of the batch: the mean of its samples' values, and for patches its standard error.
RAD_HD RAD_INLINE void ReduceItem(const WavefrontJob &job, int j) {
  Vec3 error(0, 0, 0);
  const Vec3 mean = MeanOf(job.values + (long long)j * job.samples, job.samples,
                           job.source == PathSource::kPatch ? &error : nullptr);
  double *out = job.itemResults + 6 * (long long)j;
  for (int c = 0; c < 3; ++c) out[c] = mean[c], out[3 + c] = error[c];
}

RAD_HD RAD_INLINE void RunStage(WavefrontStage stage, const WavefrontJob &job, int index) {
  switch (stage) {
    case WavefrontStage::kStart: StartPath(job, index); break;
    case WavefrontStage::kExtend: ExtendPath(job, index); break;
    case WavefrontStage::kShade: ShadePath(job, index); break;
    case WavefrontStage::kConnect: ConnectPath(job, index); break;
    case WavefrontStage::kFinish: FinishPath(job, index); break;
    case WavefrontStage::kReduce: ReduceItem(job, index); break;
  }
}

}  // namespace rad
