// The unoccluded form-factor kernel on the GPU, for a batch of patch pairs. It runs exactly the host's
// physics (formfactor/unoccluded.h, compiled by nvcc as __host__ __device__), so host tests cover its maths.
#pragma once

#include <vector>

#include "formfactor/unoccluded.h"

namespace rad {

struct DevicePair {
  ConvexPolygon emitter, receiver;  // patch corners, not yet clipped
  Vec3 emitterNormal, receiverNormal;
  double emitterArea;
};

// Returns false (leaving `out` empty) when no CUDA device is usable.
bool UnoccludedBatchOnDevice(const std::vector<DevicePair> &pairs, const QuadratureSettings &settings,
                             std::vector<double> &out);

}  // namespace rad
