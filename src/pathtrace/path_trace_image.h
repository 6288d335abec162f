// Path-traced images: scanlines shared cyclically among the ranks (as the radiosity renderer does), TBB threads
// within a rank, jittered samples per pixel. Every pixel is computed by one thread from counter-based random
// numbers, so the image is the same, bit for bit, for any number of ranks and threads.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "pathtrace/path_tracer.h"
#include "render/camera.h"
#include "render/image.h"

namespace rad {

// Throws InputError for a bad camera or sample count (what every path-traced image is checked for first).
void CheckPathTraceImage(const Camera &camera, int samplesPerPixel);

// Collective over `comm`; the image is returned on rank 0 (other ranks get an empty Image). `rays` receives
// this rank's ray counts. Throws InputError for a bad camera or sample count.
Image RenderPathTraced(MPI_Comm comm, const PathTracer &tracer, const Camera &camera, int samplesPerPixel,
                       uint64_t seed, RayCounts *rays, bool showProgress);

}  // namespace rad
