#include "pipeline/vpl_job.h"

#include <cstdio>
#include <memory>

#include "pipeline/outputs.h"
#include "io/image_io.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "vpl/vpl_renderer.h"

#include "pipeline/outputs.h"

namespace rad {

int RunVplJob(VplJobOptions o, Execution &exec) {
  if (o.step.png.empty() && o.step.exr.empty()) throw InputError("vpl: give --output PNG and/or --exr EXR");
  CheckRenderOutputs(o.step);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  PhaseTimers &timers = exec.Timers();

  std::vector<Patch> patches;
  {
    ScopedPhase phase(timers, "input I/O");
    const Scene scene = LoadSceneInput(o.input);  // every rank; a bad scene fails alike
    ReportSceneWarnings(scene, exec.Quiet());
    RefuseTwoSidedPlates(scene, "vpl");
    patches = MakePatches(scene, 0);
  }
  std::string how;
  const Camera camera = ChooseCamera(o.step, patches, o.input.Attribute(), &how);
  o.vpl.samplesPerPixel = o.step.samplesPerPixel;
  o.vpl.seed = o.step.seed;
  CheckVplOptions(o.vpl, camera);
  if (exec.Talks())
    std::fprintf(stderr, "radiosity: vpl: %dx%d, %d sample(s) per pixel, %lld paths, %d bounces%s%s%s, %s\n",
                 camera.width, camera.height, o.vpl.samplesPerPixel, o.vpl.paths, o.vpl.bounces,
                 o.vpl.imperfectVisibility ? ", imperfect visibility" : "",
                 o.vpl.indirectScale > 1 ? (", indirect at 1/" + std::to_string(o.vpl.indirectScale)).c_str() : "",
                 o.vpl.interleave ? ", interleaved 3x3" : "", how.c_str());
  VplStats stats;
  Image image;
  {
    ScopedPhase phase(timers, "render");
    image = RenderVpl(MPI_COMM_WORLD, patches, camera, o.vpl, timers, &stats);
  }
  {
    ScopedPhase phase(timers, "image I/O");
    OnRankZero(MPI_COMM_WORLD, [&] {
      if (!o.step.png.empty()) WriteImage(o.step.png, image, o.step.exposure);
      if (!o.step.exr.empty()) WriteExr(o.step.exr, image);
    });
  }
  timers.Add("total", Now() - exec.Start());
  timers.SetCounter("shadow_rays", double(stats.shadowRays));
  if (exec.Talks())
    std::fprintf(stderr, "radiosity: vpl: %lld VPLs (%lld on emitters, %lld after bounces), clamp distance %g%s\n",
                 stats.directVpls + stats.indirectVpls, stats.directVpls, stats.indirectVpls, stats.clampDistance,
                 o.vpl.indirectScale > 1
                     ? (", " + std::to_string(stats.fallbackPixels) + " pixel(s) computed at full resolution").c_str()
                     : "");
  if (!exec.Quiet() || !o.timings.empty())
    timers.Report(MPI_COMM_WORLD, "vpl", "total", o.timings,
                  {{"patches", std::to_string(patches.size())},
                   {"paths", std::to_string(stats.paths)},
                   {"vpls_direct", std::to_string(stats.directVpls)},
                   {"vpls_indirect", std::to_string(stats.indirectVpls)},
                   {"clamp_distance", std::to_string(stats.clampDistance)},
                   {"fallback_pixels", std::to_string(stats.fallbackPixels)}});
  return 0;
}


}  // namespace rad
