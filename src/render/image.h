// An image of the solution as the renderers make it: linear HDR radiance, 3 floats per pixel. The renderers,
// the path tracer and the validation work on this type; io/image_io.h writes it to files (EXR, PNG).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rad {

// Linear radiance, 3 floats (R, G, B) per pixel, rows from the top of the image down.
struct Image {
  int width = 0, height = 0;
  std::vector<float> rgb;  // size 3 * width * height
  float &At(int x, int y, int channel) { return rgb[(size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(channel)]; }
  float At(int x, int y, int channel) const { return rgb[(size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(channel)]; }
};

// Display encoding of one linear value: v * 2^exposure, clamped to [0,1], sRGB transfer curve, rounded to 8 bits.
// What a PNG, the PLY colours and the validation's display-space metrics show.
uint8_t LinearToSrgb8(double linear, double exposure);

}  // namespace rad
