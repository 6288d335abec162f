// Hemicube rows on the rank's GPU (--method hemicube with the GPU backend): every pixel of a batch of rows traced
// on the project's BVH in device memory, one thread per pixel (HemicubePixelHit, formfactor/hemicube_bvh.h), and
// the hits summed into CSR rows on the host in pixel order (AppendHemicubeRows), as the host reference sums them.
// Includable without CUDA.
#pragma once

#include <vector>

#include "formfactor/form_factor_rows.h"
#include "formfactor/hemicube.h"
#include "scene/patch.h"
#include "scene/scene.h"

namespace rad {

// `rows` (global, ascending) into f as CSR in f.precision. `rays`: how many were traced.
void ComputeHemicubeRowsGpu(const Scene &scene, const std::vector<Patch> &patches, const std::vector<long long> &rows,
                            const HemicubeOptions &options, FormFactorRows &f, long long &rays);

}  // namespace rad
