#include "pipeline/pathtrace_job.h"

#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "pipeline/outputs.h"
#include "pipeline/path_trace_backend.h"
#include "io/image_io.h"
#include "pathtrace/patch_estimates.h"
#include "pathtrace/path_tracer.h"
#include "io/radiosity_file.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/timers.h"

#include "pipeline/outputs.h"

namespace rad {

namespace {


std::string Format(const char *format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// Rates over the slowest rank's time for `phase`; rank 0 prints them; they also go into the report.
void ReportRates(const std::string &what, double items, const RayCounts &rays, double seconds, bool quiet,
                 std::vector<std::pair<std::string, std::string>> &extra) {
  double local[3] = {double(rays.primary + rays.bounce), double(rays.shadow), seconds}, all[3] = {0, 0, 0};
  MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&local[2], &all[2], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double totalRays = all[0] + all[1], slowest = all[2];
  const double itemRate = slowest > 0 ? items / slowest : 0, rayRate = slowest > 0 ? totalRays / slowest : 0;
  if (WorldRank() == 0 && !quiet)
    std::fprintf(stderr, "radiosity: pathtrace: %s: %.0f samples in %.3f s: %.4g samples/s, %.4g rays/s "
                 "(%.0f closest-hit + %.0f shadow rays, %.2f rays per sample)\n",
                 what.c_str(), items, slowest, itemRate, rayRate, all[0], all[1], items > 0 ? totalRays / items : 0);
  extra.push_back({what + " samples", Format("%.0f", items)});
  extra.push_back({what + " samples per second", Format("%.4g", itemRate)});
  extra.push_back({what + " rays", Format("%.0f", totalRays)});
  extra.push_back({what + " rays per second", Format("%.4g", rayRate)});
}

}  // namespace

int RunPathTraceJob(const PathTraceJobOptions &o, Execution &exec) {
  PhaseTimers &timers = exec.Timers();
  const bool quiet = exec.Quiet();
  if (o.png.empty() && o.exr.empty() && o.patchEstimates.empty())
    throw InputError("nothing to do: give --output (PNG), --exr and/or --patch-estimates");
  CheckOutputsDistinct(SceneInputPaths(o.input.files, o.input.materials),
                       {{"--output", o.png}, {"--exr", o.exr}, {"--patch-estimates", o.patchEstimates},
                        {"--timings", o.timings}});
  if (!o.png.empty()) CheckImageOutputPath("--output", o.png);
  if (!o.exr.empty()) CheckImageOutputPath("--exr", o.exr, true);
  if (!o.patchEstimates.empty()) CheckOutputPath("--patch-estimates", o.patchEstimates);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  if (exec.Talks() && !exec.ThreadNote().empty())
    std::fprintf(stderr, "radiosity: note: %s\n", exec.ThreadNote().c_str());

  Scene scene;
  Meshing meshing;
  std::vector<Patch> patches;
  {
    ScopedPhase phase(timers, "scene load");
    scene = LoadSceneInput(o.input);  // every rank reads it; a bad file fails on every rank alike
    ReportSceneWarnings(scene, quiet);
    RefuseTwoSidedPlates(scene, "pathtrace");
    meshing = ResolveMeshing(scene, o.meshing);
    if (CountPatches(scene, meshing) > std::numeric_limits<int32_t>::max())
      throw InputError(o.input.Label() + ": " + meshing.Describe() + " gives too many patches");
    patches = MakePatches(scene, meshing);
  }
  PathTraceSettings settings;
  settings.maxDepth = o.maxDepth;
  settings.rouletteDepth = o.rouletteDepth;
  settings.rouletteThreshold = o.rouletteThreshold;
  exec.AnnounceBackend();
  std::unique_ptr<PathTraceBackend> tracer;
  {
    ScopedPhase phase(timers, "BVH");
    tracer = std::make_unique<PathTraceBackend>(exec.UsedBackend(), scene, settings, o.gpuBatch);
  }
  bool emitters = false;
  for (const Face &f : scene.faces)
    emitters = emitters || RgbLuminance(scene.materials[size_t(f.material)].emission) > 0;
  if (exec.Talks()) {
    std::fprintf(stderr, "radiosity: pathtrace: %s: %zu polygons, %s, %d rank(s) x %d thread(s), max depth %d, "
                 "Russian roulette after %d bounces\n",
                 o.input.Label().c_str(), scene.faces.size(), tracer->Describe(), exec.Ranks(), exec.Threads(), o.maxDepth,
                 o.rouletteDepth);
    if (!emitters) std::fprintf(stderr, "radiosity: warning: %s has no emitter (Ke > 0): everything is black\n",
                                o.input.Label().c_str());
  }

  std::vector<std::pair<std::string, std::string>> extra;
  if (!o.png.empty() || !o.exr.empty()) {
    std::string how;
    const Camera camera = ChooseCamera(o.camera, patches, o.input.Attribute(), &how);
    if (exec.Talks())
      std::fprintf(stderr, "radiosity: pathtrace: %dx%d, %d samples per pixel, %s\n", camera.width, camera.height,
                   o.samplesPerPixel, how.c_str());
    RayCounts rays;
    Image image;
    const double begin = Now();
    {
      ScopedPhase phase(timers, "path trace");
      image = tracer->Render(MPI_COMM_WORLD, camera, o.samplesPerPixel, o.seed, &rays, !quiet);
    }
    ReportRates("image", double(camera.width) * camera.height * o.samplesPerPixel, rays, Now() - begin, quiet,
                extra);
    ScopedPhase phase(timers, "image I/O");
    OnRankZero(MPI_COMM_WORLD, [&] {
      if (!o.png.empty()) WriteImage(o.png, image, o.exposure);
      if (!o.exr.empty()) WriteExr(o.exr, image);
    });
  }

  if (!o.patchEstimates.empty()) {
    if (exec.Talks())
      std::fprintf(stderr, "radiosity: pathtrace: patch estimates: %zu patches (%s) x %d points\n",
                   patches.size(), meshing.Describe().c_str(), o.patchSamples);
    RayCounts rays;
    PatchEstimates estimates;
    const double begin = Now();
    {
      ScopedPhase phase(timers, "patch estimates");
      estimates = tracer->EstimatePatches(MPI_COMM_WORLD, patches, o.patchSamples, o.seed, &rays, !quiet);
    }
    ReportRates("patch estimates", double(patches.size()) * o.patchSamples, rays, Now() - begin, quiet, extra);
    ScopedPhase phase(timers, "output I/O");
    RadiosityFileWriter writer(MPI_COMM_WORLD, o.patchEstimates);
    Attributes file;
    file.strings["input"] = o.input.Attribute();
    if (!o.input.materials.empty()) file.strings["materials"] = o.input.materials;
    writer.WriteFileAttributes(file);
    writer.WritePatches(patches);
    Attributes group;
    group.strings["method"] = "path tracing: stratified points per patch, cosine-weighted bounces, next-event "
                              "estimation, Russian roulette";
    group.numbers["points_per_patch"] = o.patchSamples;
    group.numbers["max_depth"] = o.maxDepth;
    group.numbers["roulette_depth"] = o.rouletteDepth;
    group.numbers["roulette_threshold"] = o.rouletteThreshold;
    group.numbers["subdiv"] = meshing.subdiv;
    if (meshing.maxPatchSize > 0) group.numbers["max_patch_size"] = meshing.maxPatchSize;
    if (meshing.texelSize > 0) group.numbers["texel_size"] = meshing.texelSize;
    if (meshing.texelSize > 0) group.numbers["lightmap_resolution"] = meshing.lightmapResolution;
    group.numbers["seed"] = double(o.seed);
    writer.WritePathTrace(estimates.radiance, estimates.standardError, group);
    writer.Commit();
  }

  timers.Add("total", Now() - exec.Start());
  extra.push_back({"patches", std::to_string(patches.size())});
  extra.push_back({"threads per rank", std::to_string(exec.Threads())});
  extra.push_back({"backend", BackendName(exec.UsedBackend())});
  extra.push_back({"input", o.input.Label()});
  if (!quiet || !o.timings.empty()) timers.Report(MPI_COMM_WORLD, "pathtrace", "total", o.timings, extra);
  return 0;
}


}  // namespace rad
