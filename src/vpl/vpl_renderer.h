// `radiosity vpl`: instant radiosity (Keller 1997). Light paths from the emitters leave virtual point lights
// (vpl_lights.h); every pixel's sample point gathers the irradiance E of every VPL through a shadow ray with the
// bounded geometry term, and shows L = Ke + Kd / pi * E (front sides; back sides and misses are black), in the
// radiance units of the radiosity renderer.
//
// Direct light comes from the VPLs at depth 0 (points on the emitters, cosine lobe), not from a separate
// next-event estimate: one kind of light for everything, and the same Halton points decide both.
// The accelerations act on the indirect light only (VPLs at depth >= 1); direct light is always computed at
// every pixel with exact visibility unless --imperfect-visibility, which applies to every shadow ray.
#pragma once

#include <mpi.h>

#include <vector>

#include "render/camera.h"
#include "render/image.h"
#include "scene/patch.h"
#include "util/timers.h"

namespace rad {

struct VplOptions {
  long long paths = 1024;       // light paths, one depth-0 VPL each
  int bounces = 3;              // VPLs after up to this many bounces
  double clampDistance = 0;     // dmin of the bounded geometry term; 0: 5 % of the scene's bounding-box diagonal
  bool imperfectVisibility = false;
  int indirectScale = 1;        // > 1: indirect light at 1/K resolution, joint bilateral upsampling
  bool interleave = false;      // 3x3 VPL subsets over pixel tiles + discontinuity buffer
  int samplesPerPixel = 1;      // 1: the pixel centre; more: jittered (SampleOffset), each one a full image
  unsigned long long seed = 1;  // Halton scrambling and pixel jitter
};

struct VplStats {
  long long paths = 0, directVpls = 0, indirectVpls = 0;
  double clampDistance = 0;
  long long shadowRays = 0;      // this rank's
  long long fallbackPixels = 0;  // --indirect-scale: pixels computed at full resolution (summed over samples)
};

// Throws InputError for bad options or a bad camera.
void CheckVplOptions(const VplOptions &options, const Camera &camera);

// Collective over `comm`: rows y % P == rank are this rank's (TBB threads within); the image is returned on
// rank 0 (others get an empty one). The result does not depend on the number of ranks or threads.
// Phases go to `timers`.
Image RenderVpl(MPI_Comm comm, const std::vector<Patch> &patches, const Camera &camera, const VplOptions &options,
                PhaseTimers &timers, VplStats *stats);

}  // namespace rad
