#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "io/image_io.h"
#include "tests/temp_file.h"
#include "util/error.h"

namespace rad {
namespace {

namespace fs = std::filesystem;

using test::TempFile;

// Non-square, every value distinct, so a swapped axis or channel would show.
Image TestImage(int width, int height) {
  Image image;
  image.width = width;
  image.height = height;
  image.rgb.resize(size_t(width) * size_t(height) * 3);
  for (size_t i = 0; i < image.rgb.size(); ++i) image.rgb[i] = float(i) * 0.0137f;
  return image;
}

// The IEC 61966-2-1 decoding curve, the inverse of what LinearToSrgb8 encodes.
double SrgbToLinear(int code) {
  const double s = code / 255.0;
  return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
}

TEST(ImageIo, SrgbKnownValues) {
  EXPECT_EQ(LinearToSrgb8(0, 0), 0);
  EXPECT_EQ(LinearToSrgb8(1, 0), 255);
  EXPECT_EQ(LinearToSrgb8(0.5, 0), 188);
  EXPECT_EQ(LinearToSrgb8(0.18, 0), 118);
  EXPECT_EQ(LinearToSrgb8(0.001, 0), 3);  // linear segment: 12.92 * 0.001 * 255 = 3.29
  // Both branches meet at 0.0031308 (12.92 * v = 0.04045, 10.3 in 8 bits).
  EXPECT_EQ(LinearToSrgb8(0.0031308 * (1 - 1e-9), 0), 10);
  EXPECT_EQ(LinearToSrgb8(0.0031308 * (1 + 1e-9), 0), 10);
  EXPECT_EQ(LinearToSrgb8(1.5, 0), 255);
  EXPECT_EQ(LinearToSrgb8(std::numeric_limits<double>::infinity(), 0), 255);
  EXPECT_EQ(LinearToSrgb8(-0.5, 0), 0);
  EXPECT_EQ(LinearToSrgb8(std::nan(""), 0), 0);
  EXPECT_EQ(LinearToSrgb8(0.5, std::nan("")), 0);
}

TEST(ImageIo, ExposureScalesByPowersOfTwo) {
  EXPECT_EQ(LinearToSrgb8(0.25, 1), LinearToSrgb8(0.5, 0));
  EXPECT_EQ(LinearToSrgb8(0.25, 1), 188);
  EXPECT_EQ(LinearToSrgb8(1, -1), 188);
  EXPECT_EQ(LinearToSrgb8(0.6, 1), 255);  // clamped after scaling
  EXPECT_EQ(LinearToSrgb8(4, -3), 188);
}

TEST(ImageIo, SrgbEncodingInvertsTheStandardDecoding) {
  for (int code = 0; code <= 255; ++code) EXPECT_EQ(LinearToSrgb8(SrgbToLinear(code), 0), code) << code;
}

TEST(ImageIo, ExrRoundTripIsExact) {
  // 7x4 is stored uncompressed by tinyexr, 40x3 with ZIP: both paths must be lossless float32.
  for (const auto &[width, height] : {std::pair{7, 4}, std::pair{40, 3}}) {
    Image image = TestImage(width, height);
    image.At(0, 0, 0) = 0.0f;
    image.At(1, 0, 1) = 1e-30f;
    image.At(2, 0, 2) = 1e-40f;  // subnormal
    image.At(3, 1, 0) = 12345.678f;
    image.At(width - 1, height - 1, 2) = 1.0f + std::numeric_limits<float>::epsilon();  // not representable in half
    TempFile file(".exr");
    WriteExr(file.path, image);
    EXPECT_FALSE(fs::exists(file.path + ".partial"));
    const Image back = ReadExr(file.path);
    ASSERT_EQ(back.width, width);
    ASSERT_EQ(back.height, height);
    ASSERT_EQ(back.rgb.size(), image.rgb.size());
    for (size_t i = 0; i < image.rgb.size(); ++i) EXPECT_EQ(back.rgb[i], image.rgb[i]) << "value " << i;
  }
}

TEST(ImageIo, PngRoundTripGivesTheSrgbCodes) {
  Image image = TestImage(5, 3);
  image.At(0, 0, 0) = std::nanf("");
  image.At(1, 0, 0) = -1.0f;
  image.At(2, 0, 0) = 100.0f;
  const double exposure = -0.5;
  TempFile file(".png");
  WritePng(file.path, image, exposure);
  EXPECT_FALSE(fs::exists(file.path + ".partial"));
  const Image8 back = ReadPng(file.path);
  ASSERT_EQ(back.width, 5);
  ASSERT_EQ(back.height, 3);
  ASSERT_EQ(back.rgb.size(), image.rgb.size());
  for (size_t i = 0; i < image.rgb.size(); ++i) EXPECT_EQ(back.rgb[i], LinearToSrgb8(image.rgb[i], exposure)) << i;
  EXPECT_EQ(back.rgb[0], 0);
  EXPECT_EQ(back.rgb[3], 0);
  EXPECT_EQ(back.rgb[6], 255);
}

TEST(ImageIo, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  TempFile dir("_missing_dir");
  const Image image = TestImage(4, 2);
  for (const std::string name : {"out.exr", "out.png"}) {
    const std::string path = dir.path + "/" + name;
    try {
      if (name == "out.exr") {
        WriteExr(path, image);
      } else {
        WritePng(path, image, 0);
      }
      ADD_FAILURE() << "no InputError for " << path;
    } catch (const InputError &e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(fs::exists(path + ".partial"));
  }
  EXPECT_FALSE(fs::exists(dir.path));
}

TEST(ImageIo, EmptyImageIsRefused) {
  TempFile file(".exr");
  EXPECT_THROW(WriteExr(file.path, Image{}), InputError);
  EXPECT_THROW(WritePng(file.path, Image{}, 0), InputError);
  EXPECT_FALSE(fs::exists(file.path));
}

TEST(ImageIo, ReadingMissingOrGarbageFilesThrows) {
  TempFile missing(".exr");
  EXPECT_THROW(ReadExr(missing.path), InputError);
  EXPECT_THROW(ReadPng(missing.path), InputError);

  TempFile garbage(".bin");
  std::ofstream(garbage.path, std::ios::binary) << "this is not an image, neither EXR nor PNG\n";
  for (const auto &read : {+[](const std::string &p) { ReadExr(p); }, +[](const std::string &p) { ReadPng(p); }}) {
    try {
      read(garbage.path);
      ADD_FAILURE() << "no InputError for a garbage file";
    } catch (const InputError &e) {
      EXPECT_NE(std::string(e.what()).find(garbage.path), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace rad
