// `radiosity validate`: the radiosity image and the VPL image measured against a path-traced image of the same
// camera, and the path tracer's own convergence (MSE against samples per pixel). This file holds the numbers
// and writes them: metrics.json for scripts, report.html for people, a CSV of the MSE curve. The rendering
// itself is done by the validation stage (src/pipeline/validate_stage.cpp); everything here is plain functions on images.
#pragma once

#include <string>
#include <vector>

#include "render/image.h"
#include "validate/image_metrics.h"

namespace rad {

RgbImage ToRgbImage(const Image &image);
double MaxLuminance(const Image &image);

// MSE and RMSE over pixels and R, G, B; PSNR and SSIM (on luminance) with the dynamic range L = `range`.
// ssimDisplay: SSIM of the images as their PNG files show them (8-bit sRGB at `exposure`, values / 255, L = 1):
// stricter where it matters to the eye, since L = the light's luminance makes the linear SSIM lenient on the
// dark walls.
struct ImageAgreement {
  double mse = 0, rmse = 0, psnrDb = 0, ssim = 0, ssimDisplay = 0;
  double maxLuminanceDifference = 0;
};
// Throws InputError if the sizes differ.
ImageAgreement MeasureAgreement(const Image &reference, const Image &image, double range, double exposure);

// |Y_reference - Y_image| / scale through the viridis map, as linear values ready for WritePng (exposure 0).
Image HeatMapImage(const Image &reference, const Image &image, double scale);
// The same from the two luminance planes: |Y_a - Y_b| / scale through the colour map, as linear values that
// WritePng encodes back to the map's sRGB colours.
Image HeatMapOfLuminance(const Plane &ya, const Plane &yb, double scale);

// One render of the path tracer at `spp` samples per pixel against the reference render.
struct SppPoint {
  int spp = 0;
  double seconds = 0, mse = 0;
};
// Least-squares slope of log(mse) against log(spp); NaN with fewer than two usable points (mse > 0).
double LogLogSlope(const std::vector<SppPoint> &points);

struct MethodTiming {
  std::string name;         // "radiosity", "pathtrace", "vpl"
  std::string description;  // settings, for people
  double seconds = 0;       // wall time of the slowest rank
  std::vector<std::pair<std::string, double>> phases;  // optional breakdown (seconds)
};

struct ValidationReport {
  std::string input, cameraHow;
  int width = 0, height = 0, ranks = 1, threadsPerRank = 1;
  double range = 1;             // L of PSNR and SSIM
  std::string rangeRule;
  double heatScale = 1;         // |dY| shown as the top of both heat maps
  ImageAgreement radiosity, vpl;  // each against the path-traced image
  std::vector<MethodTiming> methods;
  // MSE of the path tracer against a longer render.
  std::vector<SppPoint> curve;
  int referenceSpp = 0;
  double referenceSeconds = 0;
  unsigned long long referenceSeed = 0;
  double slope = 0;
  bool plotWritten = false;
  std::string plotNote;         // why the plot is missing, or how it was drawn
};

// File names inside the output folder.
namespace validate_files {
inline const char *kRadiosityExr = "radiosity.exr", *kRadiosityPng = "radiosity.png";
inline const char *kPathTraceExr = "pathtrace.exr", *kPathTracePng = "pathtrace.png";
inline const char *kVplExr = "vpl.exr", *kVplPng = "vpl.png";
inline const char *kReferenceExr = "pathtrace_reference.exr";
inline const char *kRadiosityHeat = "heat_radiosity_vs_pathtrace.png", *kVplHeat = "heat_vpl_vs_pathtrace.png";
inline const char *kMetrics = "metrics.json", *kReport = "report.html";
inline const char *kCurveCsv = "mse_vs_spp.csv", *kPlot = "mse_vs_spp.png", *kPlotScript = "plot_mse_vs_spp.py";
}  // namespace validate_files

std::string MetricsJson(const ValidationReport &report);
std::string ReportHtml(const ValidationReport &report);
std::string CurveCsv(const ValidationReport &report);
// A matplotlib script that reads the CSV next to it and writes the log-log plot (run by the command if
// Python is there, and kept so that a person can re-run it).
std::string PlotScript();

// The number the report shows for a metric: "%.6g" (the tests look for these strings), "inf", or "n/a".
std::string ReportNumber(double value);

}  // namespace rad
