#include "pipeline/validate_stage.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/image_io.h"
#include "pathtrace/path_tracer.h"
#include "pipeline/outputs.h"
#include "pipeline/path_trace_backend.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/mpi_check.h"
#include "util/timers.h"
#include "validate/validation_report.h"
#include "vpl/vpl_renderer.h"

namespace rad {

namespace {

namespace vf = validate_files;

std::string In(const std::string &dir, const char *name) { return (std::filesystem::path(dir) / name).string(); }

// Wall time of a collective step: the slowest rank's.
double SlowestSince(double begin) {
  double local = Now() - begin, slowest = 0;
  RAD_MPI(MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return slowest;
}

// Rank 0: writes the images of one method.
void WriteImages(const std::string &dir, const char *exr, const char *png, const Image &image, double exposure) {
  WriteExr(In(dir, exr), image);
  WritePng(In(dir, png), image, exposure);
}

// Rank 0: the CSV and the script are written; the plot is drawn by matplotlib if Python runs (it is an extra:
// without it the command still succeeds and the report says why the plot is missing).
void DrawPlot(const std::string &dir, const std::string &python, ValidationReport &report) {
  WriteFileAtomically(In(dir, vf::kCurveCsv), CurveCsv(report));
  WriteFileAtomically(In(dir, vf::kPlotScript), PlotScript());
  const std::string plot = In(dir, vf::kPlot);
  std::error_code ec;
  std::filesystem::remove(plot, ec);  // a plot from an earlier run must not pass for this one
  if (python.empty() || python == "none") {
    report.plotNote = "plotting disabled (--python none)";
    return;
  }
  if (access(python.c_str(), X_OK) != 0) {
    report.plotNote = python + " not found (the plot needs Python 3 with matplotlib)";
    return;
  }
  auto quote = [](const std::string &s) {
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string partial = PartialPath(plot);
  const std::string command = quote(python) + " " + quote(In(dir, vf::kPlotScript)) + " " + quote(partial) +
                              " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  if (status != 0 || !std::filesystem::is_regular_file(partial, ec)) {
    std::filesystem::remove(partial, ec);
    report.plotNote = python + " could not draw it (matplotlib missing?)";
    return;
  }
  if (!CommitPartial(plot).empty()) {
    report.plotNote = "could not rename " + partial;
    return;
  }
  report.plotWritten = true;
  report.plotNote = "drawn by matplotlib (" + python + " " + vf::kPlotScript + ")";
}

}  // namespace

int RunValidation(ValidateOptions o, Execution &exec) {
  const bool quiet = exec.Quiet();
  const int rank = exec.Rank();
  if (o.referenceSpp == 0) o.referenceSpp = 4 * o.samplesPerPixel;
  if (o.referenceSpp <= o.samplesPerPixel)
    throw InputError("--reference-spp " + std::to_string(o.referenceSpp) + " must exceed --spp " +
                     std::to_string(o.samplesPerPixel) + " (the reference must be the better image)");
  {
    for (const std::string &file : o.formFactors.input.files) {
      std::error_code ec;
      const bool exists = std::filesystem::is_regular_file(file, ec);
      AgreeOrThrow(exists, file + ": no such scene file (--input)");
    }
  }
  // The renderers' checks first: a scene they cannot draw fails before the long form-factor step.
  const Scene scene = LoadSceneInput(o.formFactors.input);
  RefuseTwoSidedPlates(scene, "validate (its path tracer and VPL renderer)");
  const OutputFolder folder(o.outputDir);  // removed again, if made here, when the job stops before writing
  ValidationReport report;
  report.input = o.formFactors.input.Label();
  report.ranks = exec.Ranks();

  // 1. Radiosity: form factors, solve, render (the steps of `run`).
  double begin = Now();
  o.formFactors.beyondDense = FormFactorOperator::kHierarchical;  // as `run`: no F file here
  FormFactorJob job(o.formFactors, exec);
  job.Run();
  o.solve.backend = o.render.backend = exec.UsedBackend();
  report.threadsPerRank = exec.Threads();
  const std::vector<Patch> &patches = job.Geometry().patches;
  const double formFactorSeconds = SlowestSince(begin);

  // One camera for all three renderers.
  std::string how;
  const Camera camera = ChooseCamera(o.render, patches, o.formFactors.input.Attribute(), &how);
  report.cameraHow = how;
  report.width = camera.width;
  report.height = camera.height;
  VplOptions vplOptions;
  vplOptions.paths = o.vpls;
  // --seed drives all the random numbers: form factors, path tracer, VPLs (the radiosity image keeps `run`'s
  // pixel jitter, so that it is the image `run` would make).
  const unsigned long long seed = o.formFactors.seed;
  vplOptions.seed = seed;
  CheckVplOptions(vplOptions, camera);  // bad options fail before the long steps
  if (exec.Talks())
    std::fprintf(stderr, "radiosity: validate: %dx%d, %s; path tracer %d spp (reference %d spp), %lld VPL paths\n",
                 camera.width, camera.height, how.c_str(), o.samplesPerPixel, o.referenceSpp, o.vpls);

  begin = Now();
  SolverResult result;
  try {
    result = SolveStep(o.solve, patches, job.Rows(), exec.Timers(), quiet);
  } catch (const SolveFailed &e) {
    if (rank == 0) std::fprintf(stderr, "radiosity: error: %s; nothing written\n", e.what());
    return kExitNotConverged;
  }
  const double solveSeconds = SlowestSince(begin);
  begin = Now();
  const Image radiosityImage = RenderSolution(o.render, patches, result.radiance, camera, exec.Timers());
  const double renderSeconds = SlowestSince(begin);
  char text[256];
  std::snprintf(text, sizeof text, "%zu patches (%s), %s solver (%d iterations), %d spp %s shading",
                patches.size(), job.UsedMeshing().Describe().c_str(), SolverMethodName(o.solve.solver), result.iterations,
                o.render.samplesPerPixel, ShadingName(o.render.shading));
  report.methods.push_back({"radiosity", text, formFactorSeconds + solveSeconds + renderSeconds,
                            {{"form factors", formFactorSeconds}, {"solve", solveSeconds}, {"render", renderSeconds}}});

  // 2. Path tracer: the image, the reference and the MSE ladder 1, 4, 16, ... up to --spp.
  // On the backend of the form factors: the GPU's wavefront where the radiosity ran on GPUs.
  const PathTraceBackend tracer(exec.UsedBackend(), scene, PathTraceSettings{}, kGpuPathsPerBatch);
  RayCounts rays;
  auto trace = [&](int spp, unsigned long long traceSeed, double *seconds) {
    const double start = Now();
    Image image = tracer.Render(MPI_COMM_WORLD, camera, spp, traceSeed, &rays, false);
    *seconds = SlowestSince(start);
    if (exec.Talks()) std::fprintf(stderr, "radiosity: validate: path traced %d spp in %.3f s\n", spp, *seconds);
    return image;
  };
  double pathSeconds = 0;
  const Image pathImage = trace(o.samplesPerPixel, seed, &pathSeconds);
  std::snprintf(text, sizeof text, "%d spp, next-event estimation + MIS, Russian roulette, %s", o.samplesPerPixel,
                tracer.Describe());
  report.methods.push_back({"pathtrace", text, pathSeconds, {}});
  // The reference has its own random numbers: sharing the first samples with the images it judges would
  // hide their noise.
  report.referenceSpp = o.referenceSpp;
  report.referenceSeed = seed + 0x9E3779B97F4A7C15ULL;
  const Image reference = trace(o.referenceSpp, report.referenceSeed, &report.referenceSeconds);
  std::vector<int> ladder;
  for (int spp = 1; spp < o.samplesPerPixel; spp *= 4) ladder.push_back(spp);
  ladder.push_back(o.samplesPerPixel);
  for (int spp : ladder) {
    SppPoint point;
    point.spp = spp;
    Image image;
    if (spp == o.samplesPerPixel) {
      point.seconds = pathSeconds;
    } else {
      image = trace(spp, seed, &point.seconds);
    }
    if (rank == 0) point.mse = Mse(ToRgbImage(reference), ToRgbImage(spp == o.samplesPerPixel ? pathImage : image));
    report.curve.push_back(point);
  }
  report.slope = LogLogSlope(report.curve);

  // 3. Instant radiosity.
  begin = Now();
  VplStats vplStats;
  const Image vplImage = RenderVpl(MPI_COMM_WORLD, MakePatches(scene, 0), camera, vplOptions, exec.Timers(), &vplStats);
  const double vplSeconds = SlowestSince(begin);
  std::snprintf(text, sizeof text, "%lld light paths, %d bounces, %lld VPLs", vplOptions.paths, vplOptions.bounces,
                vplStats.directVpls + vplStats.indirectVpls);
  report.methods.push_back({"vpl", text, vplSeconds, {}});

  // 4. Rank 0: metrics, images and the report.
  OnRankZero(MPI_COMM_WORLD, [&] {
    const std::string &dir = o.outputDir;
    const double maxY = MaxLuminance(pathImage);
    report.range = maxY > 0 ? maxY : 1;
    report.rangeRule = maxY > 0 ? "max luminance of the path-traced image" : "the path-traced image is black: 1";
    report.radiosity = MeasureAgreement(pathImage, radiosityImage, report.range, o.render.exposure);
    report.vpl = MeasureAgreement(pathImage, vplImage, report.range, o.render.exposure);
    report.heatScale = std::max(report.radiosity.maxLuminanceDifference, report.vpl.maxLuminanceDifference);
    if (!(report.heatScale > 0)) report.heatScale = 1;
    WriteImages(dir, vf::kRadiosityExr, vf::kRadiosityPng, radiosityImage, o.render.exposure);
    WriteImages(dir, vf::kPathTraceExr, vf::kPathTracePng, pathImage, o.render.exposure);
    WriteImages(dir, vf::kVplExr, vf::kVplPng, vplImage, o.render.exposure);
    WriteExr(In(dir, vf::kReferenceExr), reference);
    WritePng(In(dir, vf::kRadiosityHeat), HeatMapImage(pathImage, radiosityImage, report.heatScale), 0);
    WritePng(In(dir, vf::kVplHeat), HeatMapImage(pathImage, vplImage, report.heatScale), 0);
    DrawPlot(dir, o.python, report);
    WriteFileAtomically(In(dir, vf::kMetrics), MetricsJson(report));
    WriteFileAtomically(In(dir, vf::kReport), ReportHtml(report));
    if (!quiet) {
      std::fprintf(stderr, "radiosity: validate: L = %.6g (%s)\n", report.range, report.rangeRule.c_str());
      std::fprintf(stderr, "radiosity: validate: radiosity vs path traced: RMSE %.4g, PSNR %.2f dB, SSIM %.4f (PNGs %.4f)\n",
                   report.radiosity.rmse, report.radiosity.psnrDb, report.radiosity.ssim,
                   report.radiosity.ssimDisplay);
      std::fprintf(stderr, "radiosity: validate: VPL vs path traced:       RMSE %.4g, PSNR %.2f dB, SSIM %.4f (PNGs %.4f)\n",
                   report.vpl.rmse, report.vpl.psnrDb, report.vpl.ssim, report.vpl.ssimDisplay);
      std::fprintf(stderr, "radiosity: validate: path tracer MSE vs spp: log-log slope %.3f (1/spp: -1)%s%s\n",
                   report.slope, report.plotWritten ? "" : "; no plot: ",
                   report.plotWritten ? "" : report.plotNote.c_str());
      std::fprintf(stderr, "radiosity: validate: wrote %s/%s\n", dir.c_str(), vf::kReport);
    }
  });
  return FinishSolve(result);
}

}  // namespace rad
