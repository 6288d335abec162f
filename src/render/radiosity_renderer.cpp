#include "render/radiosity_renderer.h"

#include "util/rtcore.h"
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "render/smooth_mesh.h"
#include "scene/embree_geometry.h"
#include "util/decomposition.h"
#include "util/error.h"
#include "util/embree_util.h"
#include "util/rng.h"

namespace rad {

namespace {

// One Embree quad per patch, in patch order, so that a hit's primID is the patch index. Coordinates are taken
// relative to the camera (ray origin 0): single precision then resolves the scene as well as possible where
// the camera looks, also for scenes far from the world origin.
class PatchScene {
 public:
  PatchScene(const std::vector<Patch> &patches, Vec3 origin) {
    scene_ = rtcNewScene(EmbreeDevice());
    // Robust mode: no rays slip through the shared edges of neighbouring patches (black speckles otherwise).
    rtcSetSceneFlags(scene_, RTC_SCENE_FLAG_ROBUST);
    rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);
    AttachPatchQuads(scene_, patches, origin);
    rtcCommitScene(scene_);
  }
  ~PatchScene() {
    if (scene_) rtcReleaseScene(scene_);
  }
  PatchScene(const PatchScene &) = delete;
  PatchScene &operator=(const PatchScene &) = delete;
  RTCScene Handle() const { return scene_; }

 private:
  RTCScene scene_ = nullptr;
};

struct RenderInputs {
  ShadingView shading;
  CameraFrame frame;
  RTCScene scene;
};

// Outgoing radiance seen along one camera ray: that of the first patch hit on its front side, else 0.
void TraceSample(const RenderInputs &in, const CameraRay &ray, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  // The scene is stored relative to the camera: rays start at 0.
  RTCRayHit rh = MakeRayHit(Vec3(0, 0, 0), ray.direction, 0, std::numeric_limits<float>::infinity());
  Intersect1(in.scene, nullptr, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return;
  // Embree's (u, v) of a quad are the parametrisation ShadeHit expects; a triangle stored as (v0, v1, v2, v2)
  // is hit only in its first half (v0, v1, v3), where (u, v) are barycentric.
  ShadeHit(in.shading, ray.direction, (long long)rh.hit.primID, rh.hit.u, rh.hit.v, out);
}

}  // namespace

Shading ParseShading(const std::string &name) {
  if (name == "flat") return Shading::kFlat;
  if (name == "smooth") return Shading::kSmooth;
  if (name == "lightmap") return Shading::kLightmap;
  throw InputError("unknown shading \"" + name + "\" (expected flat or smooth)");
}

const char *ShadingName(Shading shading) {
  return shading == Shading::kFlat ? "flat" : (shading == Shading::kLightmap ? "lightmap" : "smooth");
}

ShadingView MakeShadingView(const std::vector<Patch> &patches, const std::vector<double> &radiance,
                            const SmoothMesh *mesh, const LightmapShading *lightmap) {
  ShadingView view;
  view.patches = patches.data();
  view.radiance = radiance.data();
  if (lightmap) {
    view.lightmapPage = lightmap->page.data();
    view.lightmapUv = lightmap->uv.data();
    view.lightmapTexels = lightmap->texels.data();
    view.lightmapSide = lightmap->side;
  }
  if (mesh) {
    view.patchCorners = mesh->patchCorners.data();
    view.cornerCount = mesh->cornerCount.data();
    view.vertexRadiance = mesh->vertexRadiance.data();
  }
  return view;
}

void CheckRenderInputs(const std::vector<Patch> &patches, const std::vector<double> &radiance, const Camera &camera,
                       const RenderOptions &options) {
  ValidateCamera(camera, "camera");
  if (options.samplesPerPixel < 1) {
    throw InputError("samples per pixel must be at least 1, got " + std::to_string(options.samplesPerPixel));
  }
  RAD_CHECK(radiance.size() == 3 * patches.size(), "RenderRadiosity: radiance must hold 3 values per patch");
  RAD_CHECK(patches.size() <= std::numeric_limits<unsigned>::max() / 4, "RenderRadiosity: too many patches");
  const size_t values = 3 * size_t(camera.width) * size_t(camera.height);
  RAD_CHECK(values <= size_t(std::numeric_limits<int>::max()), "RenderRadiosity: image too large for MPI_Reduce");
}

Image ReduceImage(MPI_Comm comm, int width, int height, std::vector<float> rgb) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : rgb.data(), rgb.data(), int(rgb.size()), MPI_FLOAT, MPI_SUM, 0, comm);
  Image image;
  if (rank != 0) return image;
  image.width = width;
  image.height = height;
  image.rgb = std::move(rgb);
  return image;
}

Image RenderRadiosity(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                      const Camera &camera, const RenderOptions &options) {
  CheckRenderInputs(patches, radiance, camera, options);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);

  const int width = camera.width, height = camera.height, samples = options.samplesPerPixel;
  const int strata = int(std::lround(std::sqrt(double(samples))));

  SmoothMesh mesh;
  if (options.shading == Shading::kSmooth) mesh = BuildSmoothMesh(patches, radiance);
  const PatchScene scene(patches, camera.position);
  RAD_CHECK(options.shading != Shading::kLightmap || options.lightmap, "lightmap shading without a lightmap");
  const LightmapShading *lightmap = options.shading == Shading::kLightmap ? options.lightmap : nullptr;
  const RenderInputs in{MakeShadingView(patches, radiance, options.shading == Shading::kSmooth ? &mesh : nullptr, lightmap),
                        MakeCameraFrame(camera), scene.Handle()};

  // Every pixel is written by exactly one rank and is 0 elsewhere, so the sum in ReduceImage is exact.
  std::vector<float> rgb(3 * size_t(width) * size_t(height), 0.0f);
  tbb::parallel_for(tbb::blocked_range<int>(0, CyclicCount(height, rank, ranks)), [&](const tbb::blocked_range<int> &rows) {
    for (int r = rows.begin(); r != rows.end(); ++r) {
      const int y = CyclicItem(r, rank, ranks);
      for (int x = 0; x < width; ++x)
        AveragePixel(in.frame, options.seed, samples, strata, x, y,
                     [&](const CameraRay &ray, double value[3]) { TraceSample(in, ray, value); },
                     &rgb[3 * (size_t(y) * size_t(width) + size_t(x))]);
    }
  });
  return ReduceImage(comm, width, height, std::move(rgb));
}

}  // namespace rad
