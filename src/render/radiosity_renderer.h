// Images of a radiosity solution: primary rays (Embree) against the patches themselves, several jittered
// samples per pixel (counter-based random numbers: the image is the same for any number of ranks and threads),
// each sample showing the outgoing radiance of the patch it hits (its front side; back sides and misses are 0).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "image_io.h"
#include "render/camera.h"
#include "scene/patch.h"

namespace rad {

enum class Shading { kFlat, kSmooth };
Shading ParseShading(const std::string &name);  // "flat" | "smooth"; throws InputError

struct RenderOptions {
  int samplesPerPixel = 16;
  Shading shading = Shading::kSmooth;
  unsigned long long seed = 1;
};

// Collective over `comm`: scanlines are shared cyclically among the ranks, each rank uses its TBB threads,
// and the whole image is returned on rank 0 (other ranks get an empty Image). `radiance` holds 3 values per
// patch ([N][3] flattened).
Image RenderRadiosity(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                      const Camera &camera, const RenderOptions &options);

}  // namespace rad
