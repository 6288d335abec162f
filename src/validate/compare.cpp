#include "validate/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/hdf5_util.h"
#include "io/image_io.h"
#include "io/radiosity_file_reader.h"
#include "util/error.h"
#include "validate/image_metrics.h"
#include "validate/patch_metrics.h"
#include "validate/validation_report.h"

namespace rad {

using Json = nlohmann::ordered_json;

FileKind DetectKind(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.good() || std::filesystem::is_directory(path))
    throw InputError(path + ": cannot open (missing or unreadable)");
  unsigned char magic[8] = {};
  in.read(reinterpret_cast<char *>(magic), sizeof magic);
  static const unsigned char kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const unsigned char kExrMagic[4] = {0x76, 0x2f, 0x31, 0x01};
  if (in.gcount() == 8 && std::equal(magic, magic + 8, kPngMagic)) return FileKind::kPng;
  if (in.gcount() >= 4 && std::equal(magic, magic + 4, kExrMagic)) return FileKind::kExr;
  H5QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) > 0) return FileKind::kHdf5;
  throw InputError(path + ": not a PNG image, an OpenEXR image or a radiosity HDF5 file");
}

namespace {





// --- images -------------------------------------------------------------------------------------------------

RgbImage PngValues(const std::string &path) {
  const Image8 png = ReadPng(path);
  RgbImage out;
  out.width = png.width;
  out.height = png.height;
  out.rgb.resize(png.rgb.size());
  for (size_t i = 0; i < png.rgb.size(); ++i) out.rgb[i] = png.rgb[i] / 255.0;
  return out;
}

// Linear values, or (encode = true) the 8-bit sRGB values `render` would have written to a PNG with this
// exposure, so that an EXR is compared with a PNG on the PNG's own terms.
RgbImage ExrValues(const std::string &path, bool encode, double exposure) {
  const Image exr = ReadExr(path);
  RgbImage out;
  out.width = exr.width;
  out.height = exr.height;
  out.rgb.resize(exr.rgb.size());
  for (size_t i = 0; i < exr.rgb.size(); ++i) {
    const float v = exr.rgb[i];
    if (!std::isfinite(v)) {
      const size_t pixel = i / 3;
      throw InputError(path + ": pixel (x=" + std::to_string(pixel % size_t(exr.width)) +
                       ", y=" + std::to_string(pixel / size_t(exr.width)) + ") is not finite");
    }
    out.rgb[i] = encode ? LinearToSrgb8(v, exposure) / 255.0 : double(v);
  }
  return out;
}

double MaxOf(const Plane &p) {
  double m = 0;
  for (double v : p.values) m = std::max(m, v);
  return m;
}

// L for SSIM and PSNR. sRGB values lie in [0,1]: L = 1. Linear radiance has no fixed range: by default the
// largest luminance of the reference A (so that C1, C2 scale with the scene's brightness and a brighter scene
// is not judged more leniently), or --range.
double DynamicRange(bool linear, const CompareOptions &o, const Plane &lumA, std::string &rule) {
  if (!linear) {
    rule = "sRGB-encoded values in [0,1]";
    return 1;
  }
  if (o.range > 0) {
    rule = "--range";
    return o.range;
  }
  const double maxA = MaxOf(lumA);
  if (maxA > 0) {
    rule = "max luminance of the reference A";
    return maxA;
  }
  rule = "the reference A is black (max luminance 0): fallback 1";
  return 1;
}

void WriteHeatmap(const std::string &path, const Plane &lumA, const Plane &lumB, double scale) {
  WritePng(path, HeatMapOfLuminance(lumA, lumB, scale), 0);
}

Json CompareImages(const CompareOptions &o, FileKind kindA, FileKind kindB, std::string &text) {
  const bool linear = kindA == FileKind::kExr && kindB == FileKind::kExr;
  const bool mixed = kindA != kindB;
  if (o.range > 0 && !linear)
    throw InputError("--range: only for two EXR images (PNG values are compared in [0,1], with L = 1)");
  const RgbImage a = kindA == FileKind::kPng ? PngValues(o.a) : ExrValues(o.a, !linear, o.exposure);
  const RgbImage b = kindB == FileKind::kPng ? PngValues(o.b) : ExrValues(o.b, !linear, o.exposure);
  if (a.width != b.width || a.height != b.height)
    throw InputError(o.b + ": image is " + std::to_string(b.width) + " x " + std::to_string(b.height) + ", but " +
                     o.a + " is " + std::to_string(a.width) + " x " + std::to_string(a.height) +
                     " (images must have the same size)");

  const Plane lumA = Luminance(a), lumB = Luminance(b);
  std::string rule;
  const double range = DynamicRange(linear, o, lumA, rule);
  const double mse = Mse(a, b), rmse = std::sqrt(mse), psnr = Psnr(mse, range);
  const double ssim = Ssim(lumA, lumB, range);
  const int windowsX = std::max(0, a.width - kSsimWindow + 1), windowsY = std::max(0, a.height - kSsimWindow + 1);

  double maxDiff = 0;
  for (size_t i = 0; i < lumA.values.size(); ++i)
    maxDiff = std::max(maxDiff, std::fabs(lumA.values[i] - lumB.values[i]));
  const double heatScale = o.heatmapMax > 0 ? o.heatmapMax : (maxDiff > 0 ? maxDiff : 1.0);
  if (!o.heatmap.empty()) WriteHeatmap(o.heatmap, lumA, lumB, heatScale);

  std::string values;
  if (linear) {
    values = "linear (both OpenEXR)";
  } else if (mixed) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "sRGB-encoded in [0,1]; the EXR encoded as an 8-bit sRGB PNG at exposure %g",
                  o.exposure);
    values = buf;
  } else {
    values = "sRGB-encoded in [0,1] (both 8-bit PNG)";
  }

  Json j;
  j["kind"] = "images";
  j["a"] = o.a;
  j["b"] = o.b;
  j["width"] = a.width;
  j["height"] = a.height;
  j["values"] = linear ? "linear" : "srgb";
  if (mixed) j["exposure"] = o.exposure;
  j["dynamic_range"] = range;
  j["dynamic_range_rule"] = rule;
  j["mse"] = mse;
  j["rmse"] = rmse;
  j["psnr_db"] = std::isfinite(psnr) ? Json(psnr) : Json(nullptr);  // identical images: no finite PSNR
  j["ssim"] = std::isfinite(ssim) ? Json(ssim) : Json(nullptr);     // smaller than the window: undefined
  j["ssim_windows"] = {windowsX, windowsY};
  j["max_luminance_difference"] = maxDiff;
  if (!o.heatmap.empty()) j["heatmap"] = {{"path", o.heatmap}, {"colormap", "viridis"}, {"scale_max", heatScale}};

  char buf[512];
  text += "compare: " + o.a + " (reference A) vs " + o.b + " (B), " + std::to_string(a.width) + " x " +
          std::to_string(a.height) + " pixels\n";
  text += "values: " + values + "\n";
  std::snprintf(buf, sizeof buf, "dynamic range L: %.6g (%s)\n", range, rule.c_str());
  text += buf;
  std::snprintf(buf, sizeof buf, "MSE:  %.6e  (mean over pixels and R, G, B)\nRMSE: %.6e\n", mse, rmse);
  text += buf;
  if (std::isfinite(psnr)) {
    std::snprintf(buf, sizeof buf, "PSNR: %.4f dB  (10 log10(L^2 / MSE))\n", psnr);
  } else {
    std::snprintf(buf, sizeof buf, "PSNR: inf (identical images)\n");
  }
  text += buf;
  if (std::isfinite(ssim)) {
    std::snprintf(buf, sizeof buf,
                  "SSIM: %.6f  (luminance; 11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03; mean over the %d x %d "
                  "window positions inside the image, no padding)\n",
                  ssim, windowsX, windowsY);
  } else {
    std::snprintf(buf, sizeof buf, "SSIM: undefined (the image is smaller than the 11x11 window)\n");
  }
  text += buf;
  std::snprintf(buf, sizeof buf, "max |Y_A - Y_B|: %.6e\n", maxDiff);
  text += buf;
  if (!o.heatmap.empty()) {
    std::snprintf(buf, sizeof buf, "heat map: %s  (|Y_A - Y_B|, viridis: 0 = dark purple .. %.6g = yellow)\n",
                  o.heatmap.c_str(), heatScale);
    text += buf;
  }
  return j;
}

// --- radiosity files ----------------------------------------------------------------------------------------

struct PatchData {
  long long n = 0;
  std::vector<double> b, centroid;
};

PatchData ReadPatchData(const std::string &path) {
  RadiosityFileReader file(path);
  if (!file.Complete()) throw InputError(path + ": incomplete file (complete != 1): the writer did not finish");
  if (!file.Has("/radiosity/B")) throw InputError(path + ": no /radiosity/B (run `radiosity solve` first)");
  PatchData d;
  d.n = file.PatchCount();
  d.b = file.ReadDoubles("/radiosity/B");
  d.centroid = file.ReadDoubles("/patches/centroid");
  if (d.b.size() != 3 * size_t(d.n))
    throw InputError(path + ": /radiosity/B has " + std::to_string(d.b.size()) + " values for " +
                     std::to_string(d.n) + " patches");
  if (d.centroid.size() != 3 * size_t(d.n))
    throw InputError(path + ": /patches/centroid has " + std::to_string(d.centroid.size()) + " values for " +
                     std::to_string(d.n) + " patches");
  for (size_t i = 0; i < d.b.size(); ++i)
    if (!std::isfinite(d.b[i]))
      throw InputError(path + ": /radiosity/B of patch " + std::to_string(i / 3) + " is not finite");
  return d;
}

Json PatchJson(long long patch, int channel, const PatchData &a, const PatchData &b) {
  if (patch < 0) return Json(nullptr);
  const size_t p = size_t(patch);
  return Json{{"index", patch},
              {"channel", channel},
              {"a", {a.b[3 * p], a.b[3 * p + 1], a.b[3 * p + 2]}},
              {"b", {b.b[3 * p], b.b[3 * p + 1], b.b[3 * p + 2]}},
              {"centroid", {a.centroid[3 * p], a.centroid[3 * p + 1], a.centroid[3 * p + 2]}}};
}

std::string PatchText(long long patch, int channel, const PatchData &a, const PatchData &b) {
  if (patch < 0) return "";
  const size_t p = size_t(patch);
  char buf[400];
  std::snprintf(buf, sizeof buf, " at patch %lld (channel %c): A = (%.6g, %.6g, %.6g), B = (%.6g, %.6g, %.6g), "
                "centroid (%.4g, %.4g, %.4g)", patch, "RGB"[channel], a.b[3 * p], a.b[3 * p + 1], a.b[3 * p + 2],
                b.b[3 * p], b.b[3 * p + 1], b.b[3 * p + 2], a.centroid[3 * p], a.centroid[3 * p + 1],
                a.centroid[3 * p + 2]);
  return buf;
}

Json ComparePatches(const CompareOptions &o, std::string &text) {
  const PatchData a = ReadPatchData(o.a), b = ReadPatchData(o.b);
  if (a.n != b.n)
    throw InputError(o.b + ": " + std::to_string(b.n) + " patches, but " + o.a + " has " + std::to_string(a.n) +
                     " (not the same patches)");
  // The same patches: centroids equal up to rounding, relative to the scene's size.
  double extent = 0;
  for (size_t k = 0; k < 3; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = k; i < a.centroid.size(); i += 3) {
      lo = std::min(lo, a.centroid[i]);
      hi = std::max(hi, a.centroid[i]);
    }
    if (a.n > 0) extent = std::max(extent, hi - lo);
  }
  const double centroidGap = MaxAbsDifference(a.centroid, b.centroid);
  if (!(centroidGap <= 1e-6 * std::max(1.0, extent))) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", centroidGap);
    throw InputError(o.b + ": /patches/centroid differs from " + o.a + "'s by up to " + buf +
                     " (not the same patches)");
  }
  const PatchComparison c = ComparePatchRadiosity(a.b, b.b);

  auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  Json j;
  j["kind"] = "patches";
  j["a"] = o.a;
  j["b"] = o.b;
  j["patches"] = c.patches;
  j["relative_rmse"] = number(c.relativeRmse);
  j["rmse"] = c.rmse;
  j["rms_a"] = c.rmsReference;
  j["max_abs_difference"] = c.maxAbsDifference;
  j["max_abs_patch"] = PatchJson(c.maxAbsPatch, c.maxAbsChannel, a, b);
  j["max_relative_difference"] = c.maxRelativeDifference;
  j["max_relative_patch"] = PatchJson(c.maxRelativePatch, c.maxRelativeChannel, a, b);
  j["zero_reference_mismatches"] = c.zeroReferenceMismatches;
  j["max_centroid_difference"] = centroidGap;

  char buf[512];
  text += "compare: " + o.a + " (reference A) vs " + o.b + " (B), " + std::to_string(c.patches) +
          " patches (centroids agree)\n";
  std::snprintf(buf, sizeof buf,
                "relative RMSE of B: %.6e  (sqrt(mean (A-B)^2) / sqrt(mean A^2) over patches and R, G, B; "
                "RMSE %.6e, RMS of A %.6e)\n",
                c.relativeRmse, c.rmse, c.rmsReference);
  text += buf;
  std::snprintf(buf, sizeof buf, "max |A - B|: %.6e", c.maxAbsDifference);
  text += buf + PatchText(c.maxAbsPatch, c.maxAbsChannel, a, b) + "\n";
  std::snprintf(buf, sizeof buf, "max |A - B| / |A|: %.6e", c.maxRelativeDifference);
  text += buf + PatchText(c.maxRelativePatch, c.maxRelativeChannel, a, b) + "\n";
  if (c.zeroReferenceMismatches > 0)
    text += std::to_string(c.zeroReferenceMismatches) + " values are 0 in A but not in B (no relative difference)\n";
  return j;
}

}  // namespace

Json Compare(const CompareOptions &o, std::string &text) {
  const FileKind kindA = DetectKind(o.a), kindB = DetectKind(o.b);
  const bool fileA = kindA == FileKind::kHdf5, fileB = kindB == FileKind::kHdf5;
  if (fileA != fileB)
    throw InputError((fileA ? o.b : o.a) + ": is an image but " + (fileA ? o.a : o.b) +
                     " is an HDF5 file (compare two images or two radiosity files)");
  if (fileA && !o.heatmap.empty())
    throw InputError(o.heatmap + ": --heatmap needs two images, not two radiosity files");
  return fileA ? ComparePatches(o, text) : CompareImages(o, kindA, kindB, text);
}

}  // namespace rad
