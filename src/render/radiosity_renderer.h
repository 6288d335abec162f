// Images of a radiosity solution: primary rays (Embree) against the patches themselves, several jittered
// samples per pixel (counter-based random numbers: the image is the same for any number of ranks and threads),
// each sample showing the outgoing radiance of the patch it hits (its front side; back sides and misses are 0).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "lightmap/lightmap_pages.h"
#include "render/camera.h"
#include "render/image.h"
#include "render/pixel_kernels.h"
#include "render/smooth_mesh.h"
#include "scene/patch.h"

namespace rad {

// Flat: each patch's B; smooth: B interpolated from the patches' corners; lightmap: the baked lightmap's texels
// with bilinear filtering (patches that are lightmap texels, lightmap/lightmap_pages.h).
enum class Shading { kFlat, kSmooth, kLightmap };
Shading ParseShading(const std::string &name);  // "flat" | "smooth" | "lightmap"; throws InputError
const char *ShadingName(Shading shading);

struct RenderOptions {
  int samplesPerPixel = 16;
  Shading shading = Shading::kSmooth;
  unsigned long long seed = 1;
  const LightmapShading *lightmap = nullptr;  // Shading::kLightmap: what it reads (the CPU renderer draws it)
};

// Collective over `comm`: scanlines are shared cyclically among the ranks, each rank uses its TBB threads,
// and the whole image is returned on rank 0 (other ranks get an empty Image). `radiance` holds 3 values per
// patch ([N][3] flattened).
Image RenderRadiosity(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                      const Camera &camera, const RenderOptions &options);

// Shared by the CPU and GPU renderers.
// Throws InputError for a bad camera or sample count.
void CheckRenderInputs(const std::vector<Patch> &patches, const std::vector<double> &radiance, const Camera &camera,
                       const RenderOptions &options);
// Host pointers into the patches, the radiance and (smooth shading) the mesh or (lightmap shading) the
// lightmap, which must outlive the view.
ShadingView MakeShadingView(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                            const SmoothMesh *mesh, const LightmapShading *lightmap = nullptr);
// Sums every rank's pixels (each pixel is non-zero on one rank only, so the sum is exact) onto rank 0.
Image ReduceImage(MPI_Comm comm, int width, int height, std::vector<float> rgb);

}  // namespace rad
