// `radiosity compare A B`: how close B is to the reference A. For two images (PNG or EXR) of the same size:
// MSE, RMSE, PSNR and SSIM (Wang et al. 2004, on luminance) and optionally a heat map of the difference. For
// two radiosity HDF5 files of the same patches: the patch-level relative RMSE of /radiosity/B and the largest
// differences. Serial: a comparison is small.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace rad {

struct CompareOptions {
  std::string a, b, json, heatmap;
  double exposure = 0;
  double range = 0;       // 0: the default rule (see DynamicRange)
  double heatmapMax = 0;  // 0: the largest difference
};

enum class FileKind { kPng, kExr, kHdf5 };

// By content, not by name: a renamed file is still compared as what it is. InputError for anything else.
FileKind DetectKind(const std::string &path);

// Compares o.a with o.b (two images or two radiosity files, InputError otherwise), writes the heat map if asked,
// and returns every number as JSON; `text` receives the same for people.
nlohmann::ordered_json Compare(const CompareOptions &o, std::string &text);

}  // namespace rad
