// The radiosity image on the rank's GPU: the CPU renderer's pixel code (render/pixel_kernels.h) with primary
// rays on the project's BVH in device memory. Includable without CUDA.
#pragma once

#include <mpi.h>

#include <vector>

#include "render/camera.h"
#include "render/image.h"
#include "render/radiosity_renderer.h"
#include "scene/patch.h"

namespace rad {

// Same contract as RenderRadiosity (rows shared cyclically among the ranks, image on rank 0).
Image RenderRadiosityGpu(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                         const Camera &camera, const RenderOptions &options);

}  // namespace rad
