#include "cuda/gpu_form_factors.h"

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_bvh.h"
#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair_kernels.h"
#include "util/progress.h"

namespace rad {

namespace {

// Entries of F per chunk of rows on the device (values and flags): 2^25 entries = 288 MiB, so that a chunk's
// kernels keep any GPU busy while a rank's rows of a large scene never need to fit at once.
constexpr long long kChunkEntries = 1LL << 25;
constexpr int kBlock = 128;

// The kernels' counts, in global memory (Tallies) and per thread block in shared memory (same layout).
struct Tallies {
  unsigned long long evaluations, nodePairs, exchanging, rays, occluded, overCapacity, atDepthLimit;
};
constexpr int kTallyCount = sizeof(Tallies) / sizeof(unsigned long long);
using BlockTallies = Tallies;

// Adds a thread's counts to the kernel's tallies: first within the thread block (shared memory), then one
// global atomic per block and counter, so that millions of threads do not queue on a few addresses.
__device__ void InitBlockTallies(BlockTallies &t) {
  if (threadIdx.x == 0) t = BlockTallies{0, 0, 0, 0, 0, 0, 0};
  __syncthreads();
}

__device__ void FlushBlockTallies(BlockTallies &t, Tallies *global) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long *from = &t.evaluations;
    unsigned long long *to = &global->evaluations;
    for (int k = 0; k < kTallyCount; ++k)
      if (from[k]) atomicAdd(to + k, from[k]);
  }
}

// One thread per entry (r, j) of the chunk.
__global__ void FormFactorKernel(GeometryView g, const long long *rows, long long chunkRows, PairSettings s,
                                 double *values, uint8_t *needsRays, Tallies *tallies) {
  __shared__ BlockTallies block;
  InitBlockTallies(block);
  const long long n = g.patchCount;
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e < chunkRows * n) {
    const int i = int(rows[e / n]), j = int(e % n);
    const PairResult p = FormFactorEntry(g, i, j, s, values[e], needsRays[e]);
    if (p.evaluations) atomicAdd(&block.evaluations, (unsigned long long)p.evaluations);
    if (p.nodePairs) atomicAdd(&block.nodePairs, (unsigned long long)p.nodePairs);
    if (p.value > 0) atomicAdd(&block.exchanging, 1ULL);
    if (p.occluded) atomicAdd(&block.occluded, 1ULL);
    if (p.overCapacity) atomicAdd(&block.overCapacity, 1ULL);
    if (p.hitDepthLimit) atomicAdd(&block.atDepthLimit, 1ULL);
  }
  FlushBlockTallies(block, tallies);
}

// One thread per entry that needs rays (its index in the chunk in `entries`).
__global__ void VisibilityKernel(GeometryView g, BvhView bvh, const long long *rows, const long long *entries,
                                 long long count, uint64_t seed, uint32_t shadowRays, double *values,
                                 Tallies *tallies) {
  __shared__ BlockTallies block;
  InitBlockTallies(block);
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) {
    const long long n = g.patchCount, e = entries[k];
    uint32_t traced = 0;
    values[e] *= VisibilityOfEntry(g, bvh, int(rows[e / n]), int(e % n), seed, shadowRays, traced);
    atomicAdd(&block.rays, (unsigned long long)traced);
  }
  FlushBlockTallies(block, tallies);
}

struct NeedsRays {
  const uint8_t *flags;
  __device__ bool operator()(long long e) const { return flags[e] != 0; }
};

unsigned Blocks(long long threads) { return unsigned((threads + kBlock - 1) / kBlock); }

template <typename T>
void ComputeRowsOnDevice(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                         const FormFactorOptions &options, std::vector<T> &out, PhaseTimers &timers,
                         FormFactorCounters &counters, bool showProgress) {
  constexpr bool kDouble = std::is_same_v<T, double>;
  const long long n = (long long)g.patches.size(), m = (long long)rows.size();
  out.assign(size_t(m) * size_t(n), T(0));
  if (m == 0 || n == 0) return;
  const long long chunkRows = std::max(1LL, std::min(m, kChunkEntries / n));

  // Geometry, BVH and per-chunk buffers, allocated once.
  DeviceBuffer<Patch> patches(g.patches);
  DeviceBuffer<Occluder> occluders(g.occluders);
  DeviceBuffer<int64_t> candidateStart(g.candidateStart);
  DeviceBuffer<int32_t> candidates(g.candidates);
  DeviceBuffer<int32_t> convexCornerStart(g.convexCornerStart);
  DeviceBuffer<Vec3> convexCorners(g.convexCorners);
  DeviceBuffer<int32_t> convexFaceStart(g.convexFaceStart);
  DeviceBuffer<int32_t> convexFaces(g.convexFaces);
  DeviceBuffer<int32_t> convexSurfaceOfFace(g.convexSurfaceOfFace);
  DeviceBuffer<SlotBox> occluderBvhBoxes(g.occluderBvhBoxes);
  DeviceBuffer<long long> dRows(rows);
  DeviceBuffer<double> values(size_t(chunkRows * n));
  DeviceBuffer<uint8_t> needsRays(size_t(chunkRows * n));
  DeviceBuffer<long long> entries(size_t(chunkRows * n));
  DeviceBuffer<Tallies> tallies(1);
  std::unique_ptr<DeviceBvh> deviceBvh, occluderBvh;
  {
    ScopedPhase phase(timers, "device memory");
    deviceBvh = std::make_unique<DeviceBvh>(bvh);
    occluderBvh = std::make_unique<DeviceBvh>(g.occluderBvh);
    RAD_CUDA(cudaMemset(tallies.data(), 0, sizeof(Tallies)));
    RAD_CUDA(cudaDeviceSynchronize());
  }
  GeometryView view = ViewOf(g);
  view.patches = patches.data();
  // Each thread makes its pairs' nodes in its own memory (whole_patch.h) rather than reading 1.6 KB per patch.
  view.wholePatches = nullptr;
  view.occluders = occluders.data();
  view.candidateStart = candidateStart.data();
  view.candidates = candidates.data();
  view.convexCornerStart = g.convexCornerStart.empty() ? nullptr : convexCornerStart.data();
  view.convexCorners = convexCorners.data();
  view.convexFaceStart = g.convexFaceStart.empty() ? nullptr : convexFaceStart.data();
  view.convexFaces = convexFaces.data();
  view.convexSurfaceOfFace = convexSurfaceOfFace.data();
  view.occluderBvh = occluderBvh->View();
  view.occluderBvhBoxes = occluderBvhBoxes.data();

  const long long stagingRows = std::max(1LL, std::min(chunkRows, kGpuStagingEntries / n));
  std::vector<double> staging(kDouble ? 0 : size_t(stagingRows * n));
  Progress progress("form factors (GPU)", m, showProgress);
  long long pairsRayTraced = 0;
  for (long long first = 0; first < m; first += chunkRows) {
    const long long count = std::min(chunkRows, m - first), entriesInChunk = count * n;
    const long long *chunk = dRows.data() + first;
    {
      ScopedPhase phase(timers, "form-factor kernel");
      FormFactorKernel<<<Blocks(entriesInChunk), kBlock>>>(view, chunk, count, options.pair, values.data(),
                                                          needsRays.data(), tallies.data());
      RAD_CUDA_LAUNCH();
      RAD_CUDA(cudaDeviceSynchronize());
    }
    {
      ScopedPhase phase(timers, "visibility rays");
      // The entries that need rays, compacted so that every thread of the ray kernel has work.
      const long long *end = thrust::copy_if(thrust::device, thrust::counting_iterator<long long>(0),
                                             thrust::counting_iterator<long long>(entriesInChunk), entries.data(),
                                             NeedsRays{needsRays.data()});
      const long long traced = (long long)(end - entries.data());
      pairsRayTraced += traced;
      if (traced > 0) {
        VisibilityKernel<<<Blocks(traced), kBlock>>>(view, deviceBvh->View(), chunk, entries.data(), traced,
                                                     options.seed, options.shadowRays, values.data(), tallies.data());
        RAD_CUDA_LAUNCH();
      }
      RAD_CUDA(cudaDeviceSynchronize());
    }
    if constexpr (kDouble) {
      {
        ScopedPhase phase(timers, "device memory");
        values.Download(out.data() + size_t(first * n), size_t(entriesInChunk));
      }
      if (options.normalizeRows)
        for (long long r = first; r < first + count; ++r) NormalizeRow(out.data() + size_t(r * n), n);
    } else {
      // Float rows: whole rows at a time through the staging area, normalised in double, then rounded once.
      ScopedPhase phase(timers, "device memory");
      for (long long piece = 0; piece < count; piece += stagingRows) {
        const long long pieceRows = std::min(stagingRows, count - piece);
        RAD_CUDA(cudaMemcpy(staging.data(), values.data() + size_t(piece * n), size_t(pieceRows * n) * sizeof(double),
                            cudaMemcpyDeviceToHost));
        for (long long r = 0; r < pieceRows; ++r) {
          double *row = staging.data() + size_t(r * n);
          if (options.normalizeRows) NormalizeRow(row, n);
          std::copy(row, row + n, out.begin() + size_t((first + piece + r) * n));
        }
      }
    }
    progress.Advance(count);
  }
  Tallies t{};
  tallies.Download(&t, 1);
  counters.evaluations += (long long)t.evaluations;
  counters.nodePairs += (long long)t.nodePairs;
  counters.pairsExchanging += (long long)t.exchanging;
  counters.rays += (long long)t.rays;
  counters.pairsOccluded += (long long)t.occluded;
  counters.pairsOverCapacity += (long long)t.overCapacity;
  counters.pairsAtDepthLimit += (long long)t.atDepthLimit;
  counters.pairsRayTraced += pairsRayTraced;
}

}  // namespace

void ComputeRowsGpu(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress) {
  ComputeRowsOnDevice(g, bvh, rows, options, out, timers, counters, showProgress);
}

void ComputeRowsGpu(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<float> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress) {
  ComputeRowsOnDevice(g, bvh, rows, options, out, timers, counters, showProgress);
}

}  // namespace rad
