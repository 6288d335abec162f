// The render stage of `render`, `run` and `validate`: choosing the camera, rendering the solution on all ranks on
// the chosen backend and writing the PNG, EXR and PLY files on rank 0.
#pragma once

#include <string>
#include <vector>

#include "pipeline/backend.h"
#include "render/camera.h"
#include "render/image.h"
#include "render/radiosity_renderer.h"
#include "scene/patch.h"
#include "util/timers.h"

namespace rad {

// Where the camera is and the image size: shared by every command that makes an image (render, run, pathtrace).
struct CameraOptions {
  std::string camera;                     // camera JSON file
  std::vector<double> position, target, up;
  double fovY = 0;                        // 0: the camera file's, or 40 degrees
  int width = 0, height = 0;              // 0: the camera file's, or 512
};

struct RenderStepOptions : CameraOptions {
  int samplesPerPixel = 16;
  Shading shading = Shading::kSmooth;
  double exposure = 0;
  unsigned long long seed = 1;
  std::string png, exr, ply;              // outputs; empty = not written
  Backend backend = Backend::kCpu;        // resolved by the command (--backend)
};

// The camera, in order of preference: --camera FILE; --camera-position/--camera-target; the scene's own
// "<scene>.camera.json" next to the scene file (the bundled scenes' published cameras; of several files, the
// first: `scene` is SceneInput::Attribute(), one path per line); one that frames the scene. `how` says which,
// for the log.
Camera ChooseCamera(const CameraOptions &o, const std::vector<Patch> &patches, const std::string &scene,
                    std::string *how);

// Checks on rank 0 that the output folders exist (every rank fails alike).
void CheckRenderOutputs(const RenderStepOptions &o);

// Collective: renders `radiance` (3 per patch) through `camera` with o's samples, shading, seed and backend;
// the image is returned on rank 0 (others get an empty one). Timed as the phase "render".
// `lightmap`: what --shading lightmap draws (needed then, else unused).
Image RenderSolution(const RenderStepOptions &o, const std::vector<Patch> &patches,
                     const std::vector<double> &radiance, const Camera &camera, PhaseTimers &timers,
                     const LightmapShading *lightmap = nullptr);

// Collective: renders `radiance` (3 per patch) and writes the outputs named in `o`.
// InputError for --shading lightmap without a lightmap (patches that are not texels).
void RenderStep(const RenderStepOptions &o, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                const std::string &scene, PhaseTimers &timers, bool quiet, const LightmapShading *lightmap = nullptr);

}  // namespace rad
