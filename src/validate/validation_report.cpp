#include "validate/validation_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/error.h"

namespace rad {

namespace {

using Json = nlohmann::ordered_json;
namespace vf = validate_files;

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json AgreementJson(const ImageAgreement &a, const char *heatmap, double heatScale) {
  return {{"mse", Number(a.mse)},
          {"rmse", Number(a.rmse)},
          {"psnr_db", Number(a.psnrDb)},  // null: identical images
          {"ssim", Number(a.ssim)},       // null: image smaller than the 11x11 window
          {"ssim_display", Number(a.ssimDisplay)},  // of the PNG files: sRGB / 255, L = 1
          {"max_luminance_difference", a.maxLuminanceDifference},
          {"heatmap", {{"path", heatmap}, {"colormap", "viridis"}, {"scale_max", heatScale}}}};
}

std::string Escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Figure(const char *path, const std::string &caption) {
  return std::string("<figure><img src=\"") + path + "\" alt=\"" + Escape(caption) + "\"><figcaption>" +
         Escape(caption) + "</figcaption></figure>\n";
}

}  // namespace

RgbImage ToRgbImage(const Image &image) {
  RgbImage out;
  out.width = image.width;
  out.height = image.height;
  out.rgb.assign(image.rgb.begin(), image.rgb.end());
  return out;
}

double MaxLuminance(const Image &image) {
  const Plane y = Luminance(ToRgbImage(image));
  double m = 0;
  for (double v : y.values) m = std::max(m, v);
  return m;
}

ImageAgreement MeasureAgreement(const Image &reference, const Image &image, double range, double exposure) {
  if (reference.width != image.width || reference.height != image.height)
    throw InputError("validate: images of different sizes (" + std::to_string(reference.width) + "x" +
                     std::to_string(reference.height) + " and " + std::to_string(image.width) + "x" +
                     std::to_string(image.height) + ")");
  const RgbImage a = ToRgbImage(reference), b = ToRgbImage(image);
  const Plane ya = Luminance(a), yb = Luminance(b);
  ImageAgreement out;
  out.mse = Mse(a, b);
  out.rmse = std::sqrt(out.mse);
  out.psnrDb = Psnr(out.mse, range);
  out.ssim = Ssim(ya, yb, range);
  RgbImage da = a, db = b;
  for (double &v : da.rgb) v = LinearToSrgb8(v, exposure) / 255.0;
  for (double &v : db.rgb) v = LinearToSrgb8(v, exposure) / 255.0;
  out.ssimDisplay = Ssim(Luminance(da), Luminance(db), 1.0);
  for (size_t i = 0; i < ya.values.size(); ++i)
    out.maxLuminanceDifference = std::max(out.maxLuminanceDifference, std::fabs(ya.values[i] - yb.values[i]));
  return out;
}

Image HeatMapOfLuminance(const Plane &ya, const Plane &yb, double scale) {
  Image heat;
  heat.width = ya.width;
  heat.height = ya.height;
  heat.rgb.resize(ya.values.size() * 3);
  for (size_t i = 0; i < ya.values.size(); ++i) {
    const std::array<double, 3> c = HeatColourSrgb(std::fabs(ya.values[i] - yb.values[i]) / scale);
    // WritePng encodes linear values: decode the map's sRGB colour so that it comes out as intended.
    for (size_t k = 0; k < 3; ++k) {
      const double s = c[k];
      heat.rgb[3 * i + k] = float(s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4));
    }
  }
  return heat;
}

Image HeatMapImage(const Image &reference, const Image &image, double scale) {
  return HeatMapOfLuminance(Luminance(ToRgbImage(reference)), Luminance(ToRgbImage(image)), scale);
}

double LogLogSlope(const std::vector<SppPoint> &points) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const SppPoint &p : points) {
    if (!(p.mse > 0) || p.spp <= 0) continue;
    const double x = std::log(double(p.spp)), y = std::log(p.mse);
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double d = n * sxx - sx * sx;
  if (n < 2 || d <= 0) return std::numeric_limits<double>::quiet_NaN();
  return (n * sxy - sx * sy) / d;
}

std::string ReportNumber(double value) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

std::string MetricsJson(const ValidationReport &r) {
  Json j;
  j["input"] = r.input;
  j["camera"] = r.cameraHow;
  j["width"] = r.width;
  j["height"] = r.height;
  j["ranks"] = r.ranks;
  j["threads_per_rank"] = r.threadsPerRank;
  j["reference"] = vf::kPathTraceExr;
  j["values"] = "linear radiance (the EXR files); MSE over pixels and R, G, B; SSIM on luminance";
  j["dynamic_range"] = r.range;
  j["dynamic_range_rule"] = r.rangeRule;
  j["radiosity_vs_pathtrace"] = AgreementJson(r.radiosity, vf::kRadiosityHeat, r.heatScale);
  j["vpl_vs_pathtrace"] = AgreementJson(r.vpl, vf::kVplHeat, r.heatScale);
  Json methods = Json::object();
  for (const MethodTiming &m : r.methods) {
    Json phases = Json::object();
    for (const auto &[name, seconds] : m.phases) phases[name] = seconds;
    methods[m.name] = {{"seconds", m.seconds}, {"settings", m.description}, {"phases", phases}};
  }
  j["methods"] = methods;
  Json points = Json::array();
  for (const SppPoint &p : r.curve) points.push_back({{"spp", p.spp}, {"seconds", p.seconds}, {"mse", p.mse}});
  j["mse_vs_spp"] = {{"reference", vf::kReferenceExr},
                     {"reference_spp", r.referenceSpp},
                     {"reference_seconds", r.referenceSeconds},
                     {"reference_seed", r.referenceSeed},
                     {"points", points},
                     {"loglog_slope", Number(r.slope)},
                     {"csv", vf::kCurveCsv},
                     {"plot", r.plotWritten ? Json(vf::kPlot) : Json(nullptr)},
                     {"plot_note", r.plotNote}};
  return j.dump(2) + "\n";
}

std::string CurveCsv(const ValidationReport &r) {
  std::string out = "spp,seconds,mse\n";
  char buf[128];
  for (const SppPoint &p : r.curve) {
    std::snprintf(buf, sizeof buf, "%d,%.9g,%.9g\n", p.spp, p.seconds, p.mse);
    out += buf;
  }
  return out;
}

std::string PlotScript() {
  // Reads mse_vs_spp.csv from its own folder; the guide line is c/spp through the first point.
  return R"PY(# Draws mse_vs_spp.png from mse_vs_spp.csv (written by `radiosity validate`).
import csv, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
here = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(here, "mse_vs_spp.csv"))))
spp = [float(r["spp"]) for r in rows]
mse = [float(r["mse"]) for r in rows]
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "mse_vs_spp.png")
fig, ax = plt.subplots(figsize=(5, 4), dpi=100)
ax.loglog(spp, mse, "o-", label="path tracer vs reference")
if spp and mse[0] > 0:
    ax.loglog(spp, [mse[0] * spp[0] / s for s in spp], "--", color="gray", label="1/spp")
ax.set_xlabel("samples per pixel")
ax.set_ylabel("MSE (linear radiance)")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(out, format="png")
)PY";
}

std::string ReportHtml(const ValidationReport &r) {
  const auto N = ReportNumber;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>radiosity validate: " +
       Escape(r.input) + "</title>\n<style>\n";
  h += "body{font-family:sans-serif;margin:2em;max-width:80em}\n"
       ".row{display:flex;flex-wrap:wrap;gap:1em}\n"
       "figure{margin:0}\nfigure img{width:20em;image-rendering:pixelated;border:1px solid #888}\n"
       "table{border-collapse:collapse;margin:1em 0}\ntd,th{border:1px solid #aaa;padding:.3em .6em;text-align:right}\n"
       "th:first-child,td:first-child{text-align:left}\n</style>\n</head>\n<body>\n";
  h += "<h1>Validation of " + Escape(r.input) + "</h1>\n";
  h += "<p>" + std::to_string(r.width) + " &times; " + std::to_string(r.height) + " pixels, " + Escape(r.cameraHow) +
       "; " + std::to_string(r.ranks) + " rank(s) &times; " + std::to_string(r.threadsPerRank) +
       " thread(s). The path-traced image is the reference.</p>\n";
  h += "<h2>Images</h2>\n<div class=\"row\">\n";
  h += Figure(vf::kRadiosityPng, "radiosity");
  h += Figure(vf::kPathTracePng, "path traced (reference)");
  h += Figure(vf::kVplPng, "instant radiosity (VPL)");
  h += "</div>\n<p>Linear images: " + std::string(vf::kRadiosityExr) + ", " + vf::kPathTraceExr + ", " + vf::kVplExr +
       ".</p>\n";
  h += "<h2>Differences</h2>\n<div class=\"row\">\n";
  h += Figure(vf::kRadiosityHeat, "|Y radiosity - Y path traced|");
  h += Figure(vf::kVplHeat, "|Y VPL - Y path traced|");
  h += "</div>\n<p>Luminance differences through the viridis map, 0 (dark purple) to " + N(r.heatScale) +
       " (yellow), the same scale for both.</p>\n";
  h += "<h2>Metrics against the path-traced image</h2>\n";
  h += "<p>On linear radiance; MSE over pixels and R, G, B; PSNR and SSIM with L = " + N(r.range) + " (" +
       Escape(r.rangeRule) + "); SSIM on luminance, 11&times;11 Gaussian window. \"SSIM of the PNGs\": "
       "the same on the 8-bit sRGB values the PNG files hold (/255, L = 1), which weighs the dark walls as the "
       "eye does.</p>\n";
  h += "<table>\n<tr><th>method</th><th>MSE</th><th>RMSE</th><th>PSNR (dB)</th><th>SSIM</th>"
       "<th>SSIM of the PNGs</th><th>max |&Delta;Y|</th></tr>\n";
  auto row = [&](const char *name, const ImageAgreement &a) {
    h += std::string("<tr><td>") + name + "</td><td>" + N(a.mse) + "</td><td>" + N(a.rmse) + "</td><td>" +
         N(a.psnrDb) + "</td><td>" + N(a.ssim) + "</td><td>" + N(a.ssimDisplay) + "</td><td>" +
         N(a.maxLuminanceDifference) + "</td></tr>\n";
  };
  row("radiosity", r.radiosity);
  row("VPL", r.vpl);
  h += "</table>\n<h2>Timings</h2>\n<table>\n<tr><th>method</th><th>settings</th><th>wall time (s)</th></tr>\n";
  for (const MethodTiming &m : r.methods) {
    std::string phases;
    for (const auto &[name, seconds] : m.phases) phases += (phases.empty() ? "" : ", ") + name + " " + N(seconds) + " s";
    h += "<tr><td>" + Escape(m.name) + "</td><td style=\"text-align:left\">" + Escape(m.description) +
         (phases.empty() ? "" : " (" + Escape(phases) + ")") + "</td><td>" + N(m.seconds) + "</td></tr>\n";
  }
  h += "</table>\n<h2>Path tracer: MSE against samples per pixel</h2>\n";
  h += "<p>Each render against a reference of " + std::to_string(r.referenceSpp) + " samples per pixel (" +
       N(r.referenceSeconds) + " s, its own random numbers, " + vf::kReferenceExr +
       "). An unbiased estimator's MSE falls like 1/spp (slope -1 on log-log axes) until the reference's own "
       "noise shows; measured slope " + N(r.slope) + ".</p>\n";
  h += "<table>\n<tr><th>spp</th><th>seconds</th><th>MSE</th></tr>\n";
  for (const SppPoint &p : r.curve)
    h += "<tr><td>" + std::to_string(p.spp) + "</td><td>" + N(p.seconds) + "</td><td>" + N(p.mse) + "</td></tr>\n";
  h += "</table>\n";
  if (r.plotWritten)
    h += Figure(vf::kPlot, "MSE against spp (log-log), with a 1/spp guide");
  else
    h += "<p>No plot: " + Escape(r.plotNote) + ". The data are in " + vf::kCurveCsv + ".</p>\n";
  h += "<p>Numbers for scripts: <a href=\"" + std::string(vf::kMetrics) + "\">" + vf::kMetrics + "</a>.</p>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace rad
