// Images of the solution (render/image.h: linear HDR radiance in memory) written as OpenEXR (tinyexr, float32
// RGB, linear) and as 8-bit sRGB PNG (stb_image_write) after an exposure scale. Both are written to
// "<path>.partial" and renamed into place, so a failed write never leaves a file that looks complete. Readers
// are for tests/tools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "render/image.h"

namespace rad {

// Throw InputError naming the path if the file cannot be written.
void WriteExr(const std::string &path, const Image &image);
void WritePng(const std::string &path, const Image &image, double exposure);
// The PNG file's bytes, for a container that embeds the image (a glTF scene).
std::vector<uint8_t> EncodePng(const Image &image, double exposure);

// An image file's format, chosen by its extension: `.png` or `.exr`, in any case. A path with neither is an
// InputError naming `option`: writing PNG bytes into `x.exr` (or into `x.jpg`) would give a file that other
// tools misread.
enum class ImageFormat { kPng, kExr };
ImageFormat ImageFormatOf(const std::string &option, const std::string &path);
// Writes `image` in the format of its extension: PNG (8-bit sRGB after `exposure`) or EXR (linear float32).
void WriteImage(const std::string &path, const Image &image, double exposure);

// Throw InputError naming the path if the file is missing or unreadable.
Image ReadExr(const std::string &path);  // linear RGB
struct Image8 {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, rows from the top
};
Image8 ReadPng(const std::string &path);

}  // namespace rad
