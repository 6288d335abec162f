// `radiosity pathtrace`: scene -> reference image (PNG, EXR) by unbiased path tracing, and/or a Monte Carlo
// estimate of every patch's outgoing radiance (HDF5, /pathtrace/B and /pathtrace/stderr), in the radiance units
// of the radiosity solution, to check it against.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/pathtrace_job.h"

namespace rad {

CommandRunner AddPathTraceCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "pathtrace", "Reference image and per-patch radiance by unbiased path tracing (CPU or GPU), in radiosity's units");
  auto o = std::make_shared<PathTraceJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  AddSceneInputOptions(*cmd, o->input, "Scene", true);
  cmd->add_option("--output", o->png, "Image to write, by its extension: .png (8-bit sRGB) or .exr (linear float32 RGB)");
  cmd->add_option("--exr", o->exr, "Linear HDR image to write (OpenEXR, float32 RGB radiance)");
  AddCameraOptions(*cmd, o->camera);
  cmd->add_option("--spp", o->samplesPerPixel, "Paths per pixel (jittered over the pixel)")->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--exposure", o->exposure, "PNG only: scale radiance by 2^exposure before sRGB encoding")
      ->capture_default_str();
  cmd->add_option("--max-depth", o->maxDepth,
                  "Most bounces of a path (0: emitters only, 1: direct light; the bias is at most Kd_max^depth)")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  cmd->add_option("--roulette-depth", o->rouletteDepth, "Bounces before Russian roulette may end a path")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--roulette-threshold", o->rouletteThreshold,
                  "Russian roulette spares paths whose throughput is at least this and raises survivors' to it")
      ->capture_default_str()->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--seed", o->seed, "Seed of the counter-based random numbers")->capture_default_str();
  cmd->add_option("--patch-estimates", o->patchEstimates,
                  "Also write a Monte Carlo estimate of every patch's outgoing radiance with its standard error "
                  "(HDF5: /patches, /pathtrace/B, /pathtrace/stderr)");
  cmd->add_option("--patch-samples", o->patchSamples, "Stratified points per patch for --patch-estimates")
      ->capture_default_str()->check(CLI::Range(2, 1 << 24));
  AddMeshingOptions(*cmd, o->meshing,
                    "Patches of --patch-estimates: every polygon split into 4^K (as `formfactors --subdiv`)");
  AddExecutionOptions(*cmd, *execution);
  AddTimingsOption(*cmd, o->timings);
  cmd->add_option("--gpu-batch", o->gpuBatch,
                  "GPU backend: paths in flight per batch (device memory: about 300 bytes each)")
      ->capture_default_str()->check(CLI::Range(1LL, 1LL << 28));
  return [o, execution]() {
    Execution exec(*execution);
    return RunPathTraceJob(*o, exec);
  };
}

}  // namespace rad
