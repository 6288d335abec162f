#include "pipeline/render_stage.h"

#include <cstdio>
#include <filesystem>

#include "io/image_io.h"
#include "io/ply_writer.h"
#include "pipeline/execution.h"
#include "pipeline/outputs.h"
#include "render/radiosity_renderer.h"
#include "render/smooth_mesh.h"
#include "util/agree.h"
#include "util/error.h"

namespace rad {

Camera ChooseCamera(const CameraOptions &o, const std::vector<Patch> &patches, const std::string &scene,
                    std::string *how) {
  Camera camera;
  if (!o.camera.empty()) {
    camera = LoadCameraJson(o.camera);
    *how = "camera file " + o.camera;
  } else if (!o.position.empty()) {
    camera.position = {o.position[0], o.position[1], o.position[2]};
    camera.target = {o.target[0], o.target[1], o.target[2]};
    if (!o.up.empty()) camera.up = {o.up[0], o.up[1], o.up[2]};
    *how = "--camera-position/--camera-target";
  } else {
    const std::string first = scene.substr(0, scene.find('\n'));
    const std::filesystem::path sibling = std::filesystem::path(first).replace_extension(".camera.json");
    std::error_code ec;
    if (!first.empty() && std::filesystem::is_regular_file(sibling, ec)) {
      camera = LoadCameraJson(sibling.string());
      *how = "the scene's camera " + sibling.string();
    } else {
      camera = FrameScene(patches, o.width > 0 ? o.width : 512, o.height > 0 ? o.height : 512);
      *how = "a camera framing the scene (no --camera given)";
    }
  }
  if (o.fovY > 0) camera.fovYDeg = o.fovY;
  if (o.width > 0) camera.width = o.width;
  if (o.height > 0) camera.height = o.height;
  ValidateCamera(camera, "the camera options");
  return camera;
}

void CheckRenderOutputs(const RenderStepOptions &o) {
  if (!o.png.empty()) CheckImageOutputPath("--output", o.png);
  if (!o.exr.empty()) CheckImageOutputPath("--exr", o.exr, true);
  if (!o.ply.empty()) CheckOutputPath("--ply", o.ply);
}

Image RenderSolution(const RenderStepOptions &o, const std::vector<Patch> &patches,
                     const std::vector<double> &radiance, const Camera &camera, PhaseTimers &timers,
                     const LightmapShading *lightmap) {
  if (o.shading == Shading::kLightmap && !lightmap)
    throw InputError("--shading lightmap needs patches that are lightmap texels (--texel-size or "
                     "--lightmap-resolution)");
  RenderOptions options;
  options.samplesPerPixel = o.samplesPerPixel;
  options.shading = o.shading;
  options.seed = o.seed;
  options.lightmap = lightmap;
  ScopedPhase phase(timers, "render");
  return RenderRadiosityOn(o.backend, MPI_COMM_WORLD, patches, radiance, camera, options);
}

void RenderStep(const RenderStepOptions &o, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                const std::string &scene, PhaseTimers &timers, bool quiet, const LightmapShading *lightmap) {
  std::string how;
  const Camera camera = ChooseCamera(o, patches, scene, &how);
  if (WorldRank() == 0 && !quiet)
    std::fprintf(stderr, "radiosity: render: %dx%d, %d samples per pixel, %s shading, %s\n", camera.width,
                 camera.height, o.samplesPerPixel, ShadingName(o.shading), how.c_str());
  const Image image = RenderSolution(o, patches, radiance, camera, timers, lightmap);
  ScopedPhase phase(timers, "image I/O");
  OnRankZero(MPI_COMM_WORLD, [&] {
    if (!o.png.empty()) WriteImage(o.png, image, o.exposure);
    if (!o.exr.empty()) WriteExr(o.exr, image);
    if (!o.ply.empty()) WritePly(o.ply, BuildSmoothMesh(patches, radiance), o.exposure);
  });
}

}  // namespace rad
