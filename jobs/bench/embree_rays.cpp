// Baseline for the form-factor benchmark: a plain Embree loop tracing N shadow segments between random
// points on random pairs of the scene's patches (the same kind of rays the visibility phase traces), with
// the same Embree scene and the given number of threads. Prints rays per second.
//   radiosity_bench_embree SCENE.obj SUBDIV RAYS THREADS
#include <mpi.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "formfactor/embree_scene.h"
#include "formfactor/sampling.h"
#include "jobs/bench/bench_inputs.h"
#include "scene/patch.h"
#include "util/rng.h"
#include "util/thread_limit.h"
#include "util/timers.h"

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
  rad::EmbreeScene embree(scene);
  std::atomic<long long> blocked{0};
  const double start = rad::Now();
  tbb::parallel_for(tbb::blocked_range<long long>(0, rays, 4096), [&](const tbb::blocked_range<long long> &r) {
    long long b = 0;
    for (long long k = r.begin(); k != r.end(); ++k) {
      rad::Vec3 a, c;
      bench::RandomSegment(patches, k, a, c);
      b += embree.SegmentOccluded(a, c);
    }
    blocked += b;
  });
  const double seconds = rad::Now() - start;
  std::printf("plain_embree_rays %lld seconds %.4f rays_per_second %.4g blocked_fraction %.3f\n", rays, seconds,
              rays / seconds, double(blocked.load()) / double(rays));
  MPI_Finalize();
  return 0;
}
