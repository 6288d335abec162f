// RAD_HD marks functions that are compiled both for the host (g++) and, under nvcc, for the device.
// Physics is written once in such functions so that the GPU's code paths can be tested on a CPU-only machine.
#pragma once

#if defined(__CUDACC__)
#define RAD_HD __host__ __device__
#define RAD_INLINE __forceinline__
#define RAD_ALWAYS_INLINE __forceinline__
#else
#define RAD_HD
#define RAD_INLINE inline
// For a loop that must be compiled inside its caller: the host clones of util/simd.h get their instruction set
// only for what is inlined into them.
#define RAD_ALWAYS_INLINE inline __attribute__((always_inline))
#endif
