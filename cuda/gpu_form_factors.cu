#include "cuda/gpu_form_factors.h"

#include <thrust/copy.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_bvh.h"
#include "formfactor/entry_driver.h"
#include "formfactor/kernel_form_factors.h"
#include "formfactor/pair_kernels.h"
#include "util/error.h"
#include "util/progress.h"

namespace rad {

namespace {

// Entries of F per chunk of rows on the device (values and flags): 2^25 entries = 288 MiB, so that a chunk's
// kernels keep any GPU busy while a rank's rows of a large scene never need to fit at once.
constexpr long long kChunkEntries = 1LL << 25;
constexpr int kBlock = 128;

// The kernels' counts, in global memory (Tallies) and per thread block in shared memory (same layout).
struct Tallies {
  unsigned long long evaluations, nodePairs, exchanging, rays, occluded, overCapacity, atDepthLimit, hidden;
};
constexpr int kTallyCount = sizeof(Tallies) / sizeof(unsigned long long);
using BlockTallies = Tallies;

// Adds a thread's counts to the kernel's tallies: first within the thread block (shared memory), then one
// global atomic per block and counter, so that millions of threads do not queue on a few addresses.
__device__ void InitBlockTallies(BlockTallies &t) {
  if (threadIdx.x == 0) t = BlockTallies{0, 0, 0, 0, 0, 0, 0, 0};
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
    if (p.hidden) atomicAdd(&block.hidden, 1ULL);
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

// The entries whose flag (pair_kernels.h: kEntryNeedsRays, kEntryDeferred) is `wanted`.
struct FlagIs {
  const uint8_t *flags;
  uint8_t wanted;
  __device__ bool operator()(long long e) const { return flags[e] == wanted; }
};

// Puts the host's values of the deferred entries (k-th of `entries`) in place, with what each still needs.
__global__ void ScatterEntries(const long long *entries, long long count, const double *values, const uint8_t *needs,
                               double *chunkValues, uint8_t *chunkNeeds) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) {
    chunkValues[entries[k]] = values[k];
    chunkNeeds[entries[k]] = needs[k];
  }
}

unsigned Blocks(long long threads) { return unsigned((threads + kBlock - 1) / kBlock); }

// The entry driver's backend on the device (formfactor/entry_driver.h): geometry, BVHs and one chunk's buffers
// in device memory, allocated once.
class DeviceEntries {
 public:
  DeviceEntries(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                const FormFactorOptions &options, PhaseTimers &timers)
      : options_(options),
        hostView_(ViewOf(g)),
        hostRows_(rows),
        limited_(WithDeviceWorkLimit(options.pair, options.deviceWorkLimit)),
        n_((long long)g.patches.size()),
        chunkRows_(std::max(1LL, std::min((long long)rows.size(), kChunkEntries / n_))),
        patches_(g.patches),
        occluders_(g.occluders),
        candidateStart_(g.candidateStart),
        candidates_(g.candidates),
        convexCornerStart_(g.convexCornerStart),
        convexCorners_(g.convexCorners),
        convexFaceStart_(g.convexFaceStart),
        convexFaces_(g.convexFaces),
        convexSurfaceOfFace_(g.convexSurfaceOfFace),
        occluderBvhBoxes_(g.occluderBvhBoxes),
        rows_(rows),
        values_(size_t(chunkRows_ * n_)),
        needsRays_(size_t(chunkRows_ * n_)),
        entries_(size_t(chunkRows_ * n_)),
        tallies_(1) {
    {
      ScopedPhase phase(timers, "device memory");
      deviceBvh_ = std::make_unique<DeviceBvh>(bvh);
      occluderBvh_ = std::make_unique<DeviceBvh>(g.occluderBvh);
      RAD_CUDA(cudaMemset(tallies_.data(), 0, sizeof(Tallies)));
      RAD_CUDA(cudaDeviceSynchronize());
    }
    view_ = ViewOf(g);
    view_.patches = patches_.data();
    // Each thread makes its pairs' nodes in its own memory (whole_patch.h) rather than reading 1.6 KB per patch.
    view_.wholePatches = nullptr;
    view_.occluders = occluders_.data();
    view_.candidateStart = candidateStart_.data();
    view_.candidates = candidates_.data();
    view_.convexCornerStart = g.convexCornerStart.empty() ? nullptr : convexCornerStart_.data();
    view_.convexCorners = convexCorners_.data();
    view_.convexFaceStart = g.convexFaceStart.empty() ? nullptr : convexFaceStart_.data();
    view_.convexFaces = convexFaces_.data();
    view_.convexSurfaceOfFace = convexSurfaceOfFace_.data();
    view_.occluderBvh = occluderBvh_->View();
    view_.occluderBvhBoxes = occluderBvhBoxes_.data();
  }

  long long ChunkRows() const { return chunkRows_; }
  long long StagingEntries() const { return kGpuStagingEntries; }

  void ComputeEntries(long long first, long long count) {
    FormFactorKernel<<<Blocks(count * n_), kBlock>>>(view_, rows_.data() + first, count, limited_,
                                                     values_.data(), needsRays_.data(), tallies_.data());
    RAD_CUDA_LAUNCH();
    RAD_CUDA(cudaDeviceSynchronize());
    FinishDeferredOnHost(first, count);
  }

  // The entries past the work limit: their indices down, their values computed on the host's cores without
  // the limit (kernel_form_factors.h), and up again into place.
  void FinishDeferredOnHost(long long first, long long count) {
    const long long *end = thrust::copy_if(thrust::device, thrust::counting_iterator<long long>(0),
                                           thrust::counting_iterator<long long>(count * n_), entries_.data(),
                                           FlagIs{needsRays_.data(), kEntryDeferred});
    const long long deferred = (long long)(end - entries_.data());
    if (deferred == 0) return;
    std::vector<long long> entries(size_t(deferred), 0);
    std::vector<double> values(size_t(deferred), 0.0);
    std::vector<uint8_t> needs(size_t(deferred), 0);
    RAD_CUDA(cudaMemcpy(entries.data(), entries_.data(), size_t(deferred) * sizeof(long long), cudaMemcpyDeviceToHost));
    ComputeEntriesOnHost(hostView_, hostRows_.data() + first, n_, entries.data(), deferred, options_.pair,
                         values.data(), needs.data(), hostCounters_);
    const DeviceBuffer<double> deviceValues(values);
    const DeviceBuffer<uint8_t> deviceNeeds(needs);
    ScatterEntries<<<Blocks(deferred), kBlock>>>(entries_.data(), deferred, deviceValues.data(), deviceNeeds.data(),
                                                 values_.data(), needsRays_.data());
    RAD_CUDA_LAUNCH();
    RAD_CUDA(cudaDeviceSynchronize());
  }

  void TraceRays(long long first, long long count) {
    // The entries that need rays, compacted so that every thread of the ray kernel has work.
    const long long *end = thrust::copy_if(thrust::device, thrust::counting_iterator<long long>(0),
                                           thrust::counting_iterator<long long>(count * n_), entries_.data(),
                                           FlagIs{needsRays_.data(), kEntryNeedsRays});
    const long long traced = (long long)(end - entries_.data());
    pairsRayTraced_ += traced;
    if (traced > 0) {
      VisibilityKernel<<<Blocks(traced), kBlock>>>(view_, deviceBvh_->View(), rows_.data() + first, entries_.data(),
                                                   traced, options_.seed, options_.shadowRays, values_.data(),
                                                   tallies_.data());
      RAD_CUDA_LAUNCH();
    }
    RAD_CUDA(cudaDeviceSynchronize());
  }

  void ReadRows(long long row, long long count, double *to) const {
    RAD_CUDA(cudaMemcpy(to, values_.data() + size_t(row * n_), size_t(count * n_) * sizeof(double),
                        cudaMemcpyDeviceToHost));
  }

  void AddCounters(FormFactorCounters &counters) const {
    Tallies t{};
    tallies_.Download(&t, 1);
    counters.evaluations += (long long)t.evaluations;
    counters.nodePairs += (long long)t.nodePairs;
    counters.pairsExchanging += (long long)t.exchanging;
    counters.rays += (long long)t.rays;
    counters.pairsOccluded += (long long)t.occluded;
    counters.pairsOverCapacity += (long long)t.overCapacity;
    counters.pairsAtDepthLimit += (long long)t.atDepthLimit;
    counters.pairsHidden += (long long)t.hidden;
    counters.pairsRayTraced += pairsRayTraced_;
    counters.Add(hostCounters_);
  }

 private:
  const FormFactorOptions &options_;
  const GeometryView hostView_;              // the same geometry in host memory, for the deferred entries
  const std::vector<long long> &hostRows_;
  const PairSettings limited_;               // options_.pair with the device's work limit
  FormFactorCounters hostCounters_;          // the deferred entries' counts
  const long long n_, chunkRows_;
  DeviceBuffer<Patch> patches_;
  DeviceBuffer<Occluder> occluders_;
  DeviceBuffer<int64_t> candidateStart_;
  DeviceBuffer<int32_t> candidates_;
  DeviceBuffer<int32_t> convexCornerStart_;
  DeviceBuffer<Vec3> convexCorners_;
  DeviceBuffer<int32_t> convexFaceStart_;
  DeviceBuffer<int32_t> convexFaces_;
  DeviceBuffer<int32_t> convexSurfaceOfFace_;
  DeviceBuffer<SlotBox> occluderBvhBoxes_;
  DeviceBuffer<long long> rows_;
  DeviceBuffer<double> values_;
  DeviceBuffer<uint8_t> needsRays_;
  DeviceBuffer<long long> entries_;
  DeviceBuffer<Tallies> tallies_;
  std::unique_ptr<DeviceBvh> deviceBvh_, occluderBvh_;
  GeometryView view_;
  long long pairsRayTraced_ = 0;
};

// The driver keeps a kernel's stack frame for every thread the GPU can hold (tens of KB a thread for the pair
// kernel, whose exact-occlusion steps hold polygons and cubature cells: about 15 GiB on an H200), and a launch
// that finds no room for it fails. Ranks sharing a GPU each need their own, so the room is taken up front:
// too many ranks on one GPU is then an input error that says so, before any work.
void ReserveKernelStack() {
  cudaFuncAttributes kernel{};
  RAD_CUDA(cudaFuncGetAttributes(&kernel, FormFactorKernel));
  size_t current = 0;
  RAD_CUDA(cudaDeviceGetLimit(&current, cudaLimitStackSize));
  if (kernel.localSizeBytes <= current) return;
  const cudaError_t status = cudaDeviceSetLimit(cudaLimitStackSize, kernel.localSizeBytes);
  if (status == cudaSuccess) return;
  if (status != cudaErrorMemoryAllocation) RAD_CUDA(status);
  (void)cudaGetLastError();  // the failed reservation leaves nothing behind
  int device = 0;
  RAD_CUDA(cudaGetDevice(&device));
  cudaDeviceProp p{};
  RAD_CUDA(cudaGetDeviceProperties(&p, device));
  size_t freeBytes = 0, totalBytes = 0;
  RAD_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  const double threads = double(p.maxThreadsPerMultiProcessor) * p.multiProcessorCount, gib = double(1 << 30);
  char text[640];
  std::snprintf(text, sizeof text,
                "the GPU form-factor kernel does not fit on device %d (%s): it keeps %zu bytes of stack for each "
                "of the %.0f threads the GPU can hold (%.1f GiB), and only %.1f of its %.1f GiB are free (other "
                "processes on the GPU, such as ranks sharing it, hold the rest); run fewer ranks per GPU, or use "
                "--backend cpu",
                device, p.name, size_t(kernel.localSizeBytes), threads, double(kernel.localSizeBytes) * threads / gib,
                double(freeBytes) / gib, double(totalBytes) / gib);
  throw InputError(text);
}

template <typename T>
void ComputeRowsOnDevice(const FormFactorGeometry &g, const FlatBvh &bvh, const std::vector<long long> &rows,
                         const FormFactorOptions &options, std::vector<T> &out, PhaseTimers &timers,
                         FormFactorCounters &counters, bool showProgress) {
  const long long n = (long long)g.patches.size(), m = (long long)rows.size();
  if (m == 0 || n == 0) {
    out.assign(size_t(m) * size_t(n), T(0));
    return;
  }
  ReserveKernelStack();
  DeviceEntries entries(g, bvh, rows, options, timers);
  ComputeRowsByEntries(entries, m, n, options.normalizeRows, out, timers, counters, "form factors (GPU)",
                       showProgress);
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
