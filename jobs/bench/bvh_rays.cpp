// The project's BVH (accel/) against Embree on the form factors' kind of rays: N shadow segments between
// random points on random pairs of the scene's patches (the same rays as radiosity_bench_embree), traced as
// occlusion rays (Embree's rtcOccluded1 vs the BVH's AnyHit through SegmentOccludedBvh) and as closest-hit
// rays over the same interval, with the given number of threads; and on the GPU when one is present (kernel
// time only). Prints rays per second.
//   radiosity_bench_bvh SCENE.obj SUBDIV RAYS THREADS
#include "util/rtcore.h"
#include <mpi.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "accel/bvh_builder.h"
#include "accel/bvh_traversal.h"
#include "formfactor/embree_scene.h"
#include "formfactor/sampling.h"
#include "jobs/bench/bench_inputs.h"
#include "scene/patch.h"
#include "util/embree_util.h"
#include "util/rng.h"
#include "util/thread_limit.h"
#include "util/timers.h"

#include "cuda/bvh_trace_batch.h"
#include "cuda/device_info.h"

namespace {

// Runs `trace(k)` (true = blocked or hit) for every ray on all threads; returns the seconds and the count.
template <class Trace>
double Time(long long rays, long long &positives, Trace &&trace) {
  std::atomic<long long> count{0};
  const double start = rad::Now();
  tbb::parallel_for(tbb::blocked_range<long long>(0, rays, 4096), [&](const tbb::blocked_range<long long> &r) {
    long long c = 0;
    for (long long k = r.begin(); k != r.end(); ++k) c += trace(size_t(k));
    count += c;
  });
  positives = count.load();
  return rad::Now() - start;
}

void Report(const char *what, long long rays, double seconds, long long positives) {
  std::printf("%-28s rays %lld seconds %.4f rays_per_second %.4g positive_fraction %.3f\n", what, rays, seconds,
              double(rays) / seconds, double(positives) / double(rays));
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s SCENE.obj SUBDIV RAYS THREADS\n", argv[0]);
    return 2;
  }
  const rad::Scene scene = rad::LoadScene(argv[1]);
  const auto patches = rad::MakePatches(scene, std::atoi(argv[2]));
  const long long rays = std::atoll(argv[3]);
  rad::ThreadLimit threads(std::atoi(argv[4]));

  // The rays of radiosity_bench_embree, kept as segment end points.
  std::vector<rad::Vec3> from(static_cast<size_t>(rays)), to(static_cast<size_t>(rays));
  for (long long k = 0; k < rays; ++k) bench::RandomSegment(patches, k, from[size_t(k)], to[size_t(k)]);

  const std::vector<rad::BvhTriangle> triangles = rad::SceneTriangles(scene);
  double start = rad::Now();
  const rad::EmbreeScene embree(scene);
  std::printf("%-28s triangles %zu seconds %.4f\n", "embree_scene_build", triangles.size(), rad::Now() - start);
  rad::FlatBvh bvh;
  for (rad::BvhQuality quality : {rad::BvhQuality::kMedium, rad::BvhQuality::kHigh}) {
    start = rad::Now();
    bvh = rad::BuildBvh(triangles, quality);
    std::printf("%-28s nodes %zu triangle_refs %zu depth %d seconds %.4f\n",
                quality == rad::BvhQuality::kHigh ? "bvh_build_high" : "bvh_build_medium", bvh.nodes.size(),
                bvh.triangles.size(), bvh.depth, rad::Now() - start);
  }
  const rad::BvhView view = bvh.View();

  long long positives = 0;
  double s = Time(rays, positives, [&](size_t k) { return embree.SegmentOccluded(from[k], to[k]); });
  Report("embree_occluded", rays, s, positives);
  s = Time(rays, positives, [&](size_t k) { return rad::SegmentOccludedBvh(view, from[k], to[k]); });
  Report("bvh_host_any_hit", rays, s, positives);

  s = Time(rays, positives, [&](size_t k) {
    RTCRayHit rh = rad::MakeRayHit(from[k], to[k] - from[k], rad::kSegmentTrim, 1.0f - rad::kSegmentTrim);
    rad::Intersect1(embree.Handle(), nullptr, &rh);
    return rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
  });
  Report("embree_closest_hit", rays, s, positives);
  s = Time(rays, positives, [&](size_t k) {
    return rad::ClosestHit(view, rad::ToFloat3(from[k]), rad::ToFloat3(to[k] - from[k]), rad::kSegmentTrim,
                           1.0f - rad::kSegmentTrim)
               .id >= 0;
  });
  Report("bvh_host_closest_hit", rays, s, positives);

  if (rad::CudaDeviceCount() > 0) {
    std::vector<rad::BvhRay> batch(static_cast<size_t>(rays));
    for (size_t k = 0; k < batch.size(); ++k) {
      batch[k] = rad::BvhRay{rad::ToFloat3(from[k]), rad::ToFloat3(to[k] - from[k]), rad::kSegmentTrim,
                             1.0f - rad::kSegmentTrim};
    }
    std::vector<uint8_t> occluded;
    std::vector<rad::BvhHit> hits;
    rad::DeviceTraceTimes times;
    rad::TraceBatchOnDevice(bvh, batch, occluded, hits, &times);
    long long blocked = 0, hit = 0;
    for (size_t k = 0; k < batch.size(); ++k) blocked += occluded[k], hit += hits[k].id >= 0;
    Report("bvh_device_any_hit", rays, times.anyHitSeconds, blocked);
    Report("bvh_device_closest_hit", rays, times.closestHitSeconds, hit);
  } else {
    std::printf("device: none (%s)\n", rad::DescribeCudaDevices().c_str());
  }
  MPI_Finalize();
  return 0;
}
