#include "render/radiosity_renderer.h"

#include <embree3/rtcore.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "render/smooth_mesh.h"
#include "util/error.h"
#include "util/embree_util.h"
#include "util/rng.h"

namespace rad {

namespace {

// Third Philox counter word of every pixel sample: keeps the renderer's numbers apart from those of the form
// factors when both use the same seed.
constexpr uint32_t kRenderStream = 0x52454E44u;  // "REND"

// One Embree quad per patch, in patch order, so that a hit's primID is the patch index. Coordinates are taken
// relative to the camera (ray origin 0): single precision then resolves the scene as well as possible where
// the camera looks, also for scenes far from the world origin.
class PatchScene {
 public:
  PatchScene(const std::vector<Patch> &patches, Vec3 origin) {
    device_ = NewEmbreeDevice();
    scene_ = rtcNewScene(device_);
    // Robust mode: no rays slip through the shared edges of neighbouring patches (black speckles otherwise).
    rtcSetSceneFlags(scene_, RTC_SCENE_FLAG_ROBUST);
    rtcSetSceneBuildQuality(scene_, RTC_BUILD_QUALITY_HIGH);
    const size_t n = patches.size();
    RTCGeometry geom = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_QUAD);
    auto *vb = static_cast<float *>(
        rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), 4 * n));
    auto *ib = static_cast<unsigned *>(
        rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT4, 4 * sizeof(unsigned), n));
    for (size_t i = 0; i < n; ++i) {
      const Patch &p = patches[i];
      for (int k = 0; k < 4; ++k) {
        // A triangle is a quad whose last two corners coincide, which Embree accepts.
        const Vec3 c = p.corners[k < p.cornerCount ? k : 2] - origin;
        vb[3 * (4 * i + size_t(k)) + 0] = float(c.x);
        vb[3 * (4 * i + size_t(k)) + 1] = float(c.y);
        vb[3 * (4 * i + size_t(k)) + 2] = float(c.z);
        ib[4 * i + size_t(k)] = unsigned(4 * i + size_t(k));
      }
    }
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene_, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene_);
  }
  ~PatchScene() {
    if (scene_) rtcReleaseScene(scene_);
    if (device_) rtcReleaseDevice(device_);
  }
  PatchScene(const PatchScene &) = delete;
  PatchScene &operator=(const PatchScene &) = delete;
  RTCScene Handle() const { return scene_; }

 private:
  RTCDevice device_ = nullptr;
  RTCScene scene_ = nullptr;
};

// Base-2 radical inverse of i (van der Corput): the second coordinate of a Hammersley point set.
double RadicalInverse2(uint32_t i) {
  i = (i << 16) | (i >> 16);
  i = ((i & 0x00FF00FFu) << 8) | ((i & 0xFF00FF00u) >> 8);
  i = ((i & 0x0F0F0F0Fu) << 4) | ((i & 0xF0F0F0F0u) >> 4);
  i = ((i & 0x33333333u) << 2) | ((i & 0xCCCCCCCCu) >> 2);
  i = ((i & 0x55555555u) << 1) | ((i & 0xAAAAAAAAu) >> 1);
  return ToUnit(i);
}

double Fraction(double x) { return x - std::floor(x); }

// Where sample `s` of a pixel falls inside it, in [0,1)^2. A square sample count gets jittered strata (one
// random point in each cell of an m x m grid); any other count a Hammersley set shifted by one random offset
// per pixel (Cranley-Patterson rotation). The numbers depend only on (seed, pixel, sample).
void SampleOffset(uint64_t seed, uint64_t pixel, int s, int samples, int strata, double &dx, double &dy) {
  const uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  const uint32_t p0 = uint32_t(pixel), p1 = uint32_t(pixel >> 32);
  if (strata * strata == samples) {
    const Philox4x32 r = Philox(p0, p1, uint32_t(s), kRenderStream, k0, k1);
    dx = (s % strata + ToUnit(r.v[0])) / strata;
    dy = (s / strata + ToUnit(r.v[1])) / strata;
  } else {
    const Philox4x32 r = Philox(p0, p1, 0, kRenderStream, k0, k1);
    dx = Fraction((s + 0.5) / samples + ToUnit(r.v[0]));
    dy = Fraction(RadicalInverse2(uint32_t(s)) + ToUnit(r.v[1]));
  }
}

struct RenderInputs {
  const std::vector<Patch> &patches;
  const std::vector<double> &radiance;
  const SmoothMesh *mesh;  // null for flat shading
  const Camera &camera;
  RTCScene scene;
};

// Outgoing radiance seen along one camera ray: that of the first patch hit on its front side, else 0.
void TraceSample(const RenderInputs &in, const CameraRay &ray, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  // The scene is stored relative to the camera: rays start at 0.
  RTCRayHit rh = MakeRayHit(Vec3(0, 0, 0), ray.direction, 0, std::numeric_limits<float>::infinity());
  rtcIntersect1(in.scene, &context, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return;
  const size_t patch = rh.hit.primID;
  // Our own normal, not Embree's Ng: which side is the front is this project's convention (CCW), not Embree's.
  if (!(Dot(ray.direction, in.patches[patch].normal) < 0)) return;
  if (!in.mesh) {
    for (size_t c = 0; c < 3; ++c) out[c] = in.radiance[3 * patch + c];
    return;
  }
  // Embree parametrises a quad over [0,1]^2 with v0 at (0,0), v1 at (1,0), v2 at (1,1), v3 at (0,1); for a
  // triangle stored as (v0, v1, v2, v2) only the first half (v0, v1, v3) has area and (u,v) are barycentric.
  const double u = rh.hit.u, v = rh.hit.v;
  double w[4];
  if (in.mesh->cornerCount[patch] == 3) {
    w[0] = 1 - u - v, w[1] = u, w[2] = v, w[3] = 0;
  } else {
    w[0] = (1 - u) * (1 - v), w[1] = u * (1 - v), w[2] = u * v, w[3] = (1 - u) * v;
  }
  for (size_t k = 0; k < 4; ++k) {
    const size_t vertex = size_t(in.mesh->patchCorners[4 * patch + k]);
    for (size_t c = 0; c < 3; ++c) out[c] += w[k] * in.mesh->vertexRadiance[3 * vertex + c];
  }
}

}  // namespace

Shading ParseShading(const std::string &name) {
  if (name == "flat") return Shading::kFlat;
  if (name == "smooth") return Shading::kSmooth;
  throw InputError("unknown shading \"" + name + "\" (expected flat or smooth)");
}

Image RenderRadiosity(MPI_Comm comm, const std::vector<Patch> &patches, const std::vector<double> &radiance,
                      const Camera &camera, const RenderOptions &options) {
  ValidateCamera(camera, "camera");
  if (options.samplesPerPixel < 1) {
    throw InputError("samples per pixel must be at least 1, got " + std::to_string(options.samplesPerPixel));
  }
  RAD_CHECK(radiance.size() == 3 * patches.size(), "RenderRadiosity: radiance must hold 3 values per patch");
  RAD_CHECK(patches.size() <= std::numeric_limits<unsigned>::max() / 4, "RenderRadiosity: too many patches");
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);

  const int width = camera.width, height = camera.height, samples = options.samplesPerPixel;
  const size_t values = 3 * size_t(width) * size_t(height);
  RAD_CHECK(values <= size_t(std::numeric_limits<int>::max()), "RenderRadiosity: image too large for MPI_Reduce");
  const int strata = int(std::lround(std::sqrt(double(samples))));

  SmoothMesh mesh;
  if (options.shading == Shading::kSmooth) mesh = BuildSmoothMesh(patches, radiance);
  const PatchScene scene(patches, camera.position);
  const RenderInputs in{patches, radiance, options.shading == Shading::kSmooth ? &mesh : nullptr, camera,
                        scene.Handle()};

  // Every pixel is written by exactly one rank and is 0 elsewhere, so the sum below is exact.
  std::vector<float> rgb(values, 0.0f);
  const int myRows = rank < height ? (height - rank + ranks - 1) / ranks : 0;
  tbb::parallel_for(tbb::blocked_range<int>(0, myRows), [&](const tbb::blocked_range<int> &rows) {
    for (int r = rows.begin(); r != rows.end(); ++r) {
      const int y = rank + r * ranks;
      for (int x = 0; x < width; ++x) {
        const uint64_t pixel = uint64_t(y) * uint64_t(width) + uint64_t(x);
        double sum[3] = {0, 0, 0};
        for (int s = 0; s < samples; ++s) {
          double dx, dy, value[3];
          SampleOffset(options.seed, pixel, s, samples, strata, dx, dy);
          TraceSample(in, GenerateRay(camera, x + dx, y + dy), value);
          for (int c = 0; c < 3; ++c) sum[c] += value[c];
        }
        for (size_t c = 0; c < 3; ++c) rgb[3 * size_t(pixel) + c] = float(sum[c] / samples);
      }
    }
  });

  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : rgb.data(), rgb.data(), int(values), MPI_FLOAT, MPI_SUM, 0, comm);
  Image image;
  if (rank != 0) return image;
  image.width = width;
  image.height = height;
  image.rgb = std::move(rgb);
  return image;
}

}  // namespace rad
