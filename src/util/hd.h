// RAD_HD marks functions that are compiled both for the host (g++) and, under nvcc, for the device.
// Physics is written once in such functions so that the GPU's code paths can be tested on a CPU-only machine.
#pragma once

#if defined(__CUDACC__)
#define RAD_HD __host__ __device__
#define RAD_INLINE __forceinline__
#define RAD_ALWAYS_INLINE __forceinline__
// For the large steps of a pair (exact occlusion, the unoccluded cubature): kept as calls on the device so that
// their local arrays share one stack region instead of adding up in the caller's frame. The driver reserves a
// kernel's stack for every thread the GPU can hold (74 KB a thread, 20 GiB on an H200, with all inlined), so
// the frame decides how many ranks can share a GPU.
#define RAD_DEVICE_NOINLINE __noinline__
#else
#define RAD_DEVICE_NOINLINE
#define RAD_HD
#define RAD_INLINE inline
// For a loop that must be compiled inside its caller: the host clones of util/simd.h get their instruction set
// only for what is inlined into them.
#define RAD_ALWAYS_INLINE inline __attribute__((always_inline))
#endif
