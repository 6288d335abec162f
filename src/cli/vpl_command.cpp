// `radiosity vpl`: instant radiosity (virtual point lights) image of a scene, an independent check of the
// radiosity pipeline's images, with the three published accelerations as options.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/outputs.h"
#include "image_io.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "vpl/vpl_renderer.h"

namespace rad {

namespace {

struct VplCommandOptions {
  SceneInput input;
  std::string timings;
  ExecutionOptions execution{0, false, "cpu"};  // the VPL renderer runs on the CPU
  VplOptions vpl;
  RenderStepOptions step;
};

int RunVplCommand(VplCommandOptions o) {
  if (o.step.png.empty() && o.step.exr.empty()) throw InputError("vpl: give --output PNG and/or --exr EXR");
  CheckRenderOutputs(o.step);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  Execution exec(o.execution);
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

}  // namespace

CommandRunner AddVplCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand("vpl", "Instant radiosity: render a scene lit by virtual point lights (PNG, EXR)");
  auto o = std::make_shared<VplCommandOptions>();
  o->step.samplesPerPixel = 1;  // the help shows this default; each sample is a full VPL image
  AddSceneInputOptions(*cmd, o->input, "Scene", true);
  cmd->get_option("--input")->check(CLI::ExistingFile);
  cmd->add_option("--output", o->step.png, "Image to write, by its extension: .png (8-bit sRGB) or .exr (linear float32 RGB)");
  cmd->add_option("--exr", o->step.exr, "Linear HDR image to write (OpenEXR, float32 RGB radiance)");
  AddRenderStepOptions(*cmd, o->step);
  cmd->remove_option(cmd->get_option("--shading"));  // the VPL image is shaded per pixel, not from patches
  cmd->add_option("--vpls", o->vpl.paths, "Light paths shot from the emitters (one VPL where each starts)")
      ->capture_default_str()->check(CLI::Range(1LL, 100000000LL));
  cmd->add_option("--bounces", o->vpl.bounces, "Bounces per light path (a VPL where each lands)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  cmd->add_option("--clamp-distance", o->vpl.clampDistance,
                  "dmin of the bounded geometry term cos cos / (d^2 + dmin^2 exp(-d^2/dmin^2)), in scene units "
                  "(0: 5 % of the scene's bounding-box diagonal)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--imperfect-visibility", o->vpl.imperfectVisibility,
                "Shadow rays test each polygon's bounding box instead of the polygon (faster, approximate)");
  cmd->add_option("--indirect-scale", o->vpl.indirectScale,
                  "Indirect light at 1/K resolution, joint bilateral upsampling guided by normals and depth")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_flag("--interleave", o->vpl.interleave,
                "Interleaved sampling: 3x3 VPL subsets over 3x3 pixel tiles, recombined by a discontinuity buffer");
  cmd->add_option("--seed", o->step.seed, "Seed of the Halton scrambling and the pixel jitter")->capture_default_str();
  AddExecutionOptions(*cmd, o->execution, {true, false, false});
  AddTimingsOption(*cmd, o->timings);
  AddExecutionOptions(*cmd, o->execution, {false, true, false});
  return [o]() { return RunVplCommand(*o); };
}

}  // namespace rad
