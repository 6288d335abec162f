// RAD_HOST_CLONES: a host function compiled for several x86-64 instruction sets, the best one the processor
// has picked when the program starts (GCC's function multiversioning, through an ifunc): SSE2 (any x86-64),
// AVX2 (x86-64-v3) and AVX-512 (x86-64-v4). The form-factor kernel's innermost loops take it
// (formfactor/host_kernels.cpp): written over points or nodes, they vectorise, two lanes wide with SSE2 and eight
// with AVX-512 (the contour loop over a cell's 17 points ran 4x faster with AVX-512 than one point at a time);
// so do the solver's row sweeps (solver/row_kernels.cpp). A clone gets its instruction set only for the code
// inlined into it: the loops it calls are RAD_ALWAYS_INLINE (util/hd.h).
//
// Every clone gives the same bits: vector instructions round each lane as the scalar ones do, the loops keep
// their sums per lane in a fixed order, and no clone fuses a multiply and an add (-ffp-contract=off,
// CMakeLists.txt). Elsewhere (other compilers, other processors, nvcc) the functions are compiled once.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && \
    !defined(RAD_NO_HOST_CLONES)
#define RAD_HOST_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define RAD_HOST_CLONES
#endif
