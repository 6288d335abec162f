// EXR and PNG through tinyexr and stb (both the compiled Debian libraries: no *_IMPLEMENTATION here). EXR keeps
// float32 so that an image read back equals the one written; the PNG is only a preview. Writers go through
// their partial name (util/atomic_file.h) so that a failed or interrupted write never leaves a complete-looking
// file.
#include "io/image_io.h"

#include <stb_image.h>
#include <stb_image_write.h>
#include <tinyexr.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/atomic_file.h"
#include "util/error.h"

namespace rad {
namespace {

void CheckWritable(const std::string &path, const Image &image, const std::string &what) {
  if (image.width <= 0 || image.height <= 0) throw InputError(path + ": cannot write " + what + " (empty image)");
  RAD_CHECK(image.rgb.size() == size_t(image.width) * size_t(image.height) * 3, "Image.rgb size is not 3*W*H");
}

// tinyexr hands out messages that the caller must free.
std::string TakeExrError(const char *err, int code) {
  if (err == nullptr) return "tinyexr error " + std::to_string(code);
  std::string text = err;
  FreeEXRErrorMessage(err);
  return text;
}

}  // namespace

void WriteExr(const std::string &path, const Image &image) {
  const std::string what = "EXR image";
  CheckWritable(path, image, what);
  WriteAtomically(path, what, [&](const std::string &partial) -> std::string {
    const char *err = nullptr;
    const int rc = SaveEXR(image.rgb.data(), image.width, image.height, 3, /*save_as_fp16=*/0, partial.c_str(), &err);
    return rc == TINYEXR_SUCCESS ? "" : TakeExrError(err, rc);
  });
}

ImageFormat ImageFormatOf(const std::string &option, const std::string &path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  std::string extension = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
  for (char &c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".png") return ImageFormat::kPng;
  if (extension == ".exr") return ImageFormat::kExr;
  throw InputError(option + " " + path + ": an image file must end in .png (8-bit sRGB) or .exr (linear float32)");
}

void WriteImage(const std::string &path, const Image &image, double exposure) {
  if (ImageFormatOf("image", path) == ImageFormat::kExr)
    WriteExr(path, image);
  else
    WritePng(path, image, exposure);
}

namespace {
std::vector<uint8_t> SrgbBytes(const Image &image, double exposure) {
  std::vector<uint8_t> bytes(image.rgb.size());
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = LinearToSrgb8(image.rgb[i], exposure);
  return bytes;
}
}  // namespace

void WritePng(const std::string &path, const Image &image, double exposure) {
  const std::string what = "PNG image";
  CheckWritable(path, image, what);
  const std::vector<uint8_t> bytes = SrgbBytes(image, exposure);
  WriteAtomically(path, what, [&](const std::string &partial) -> std::string {
    errno = 0;  // stb gives no reason of its own; fopen's errno is the likely one
    if (stbi_write_png(partial.c_str(), image.width, image.height, 3, bytes.data(), image.width * 3)) return "";
    return errno ? std::strerror(errno) : "stb_image_write failed";
  });
}

std::vector<uint8_t> EncodePng(const Image &image, double exposure) {
  const std::vector<uint8_t> bytes = SrgbBytes(image, exposure);
  std::vector<uint8_t> png;
  stbi_write_png_to_func(
      [](void *context, void *data, int size) {
        auto *out = static_cast<std::vector<uint8_t> *>(context);
        out->insert(out->end(), static_cast<uint8_t *>(data), static_cast<uint8_t *>(data) + size);
      },
      &png, image.width, image.height, 3, bytes.data(), image.width * 3);
  return png;
}

Image ReadExr(const std::string &path) {
  float *rgba = nullptr;
  const char *err = nullptr;
  Image image;
  const int rc = LoadEXR(&rgba, &image.width, &image.height, path.c_str(), &err);
  if (rc != TINYEXR_SUCCESS) throw InputError(path + ": cannot read EXR image (" + TakeExrError(err, rc) + ")");
  const size_t pixels = size_t(image.width) * size_t(image.height);
  image.rgb.resize(pixels * 3);
  for (size_t i = 0; i < pixels; ++i) {
    for (size_t c = 0; c < 3; ++c) image.rgb[i * 3 + c] = rgba[i * 4 + c];
  }
  std::free(rgba);
  return image;
}

Image8 ReadPng(const std::string &path) {
  Image8 image;
  int channelsInFile = 0;
  stbi_uc *data = stbi_load(path.c_str(), &image.width, &image.height, &channelsInFile, 3);
  if (data == nullptr) {
    const char *reason = stbi_failure_reason();
    throw InputError(path + ": cannot read PNG image (" + (reason ? reason : "unknown reason") + ")");
  }
  image.rgb.assign(data, data + size_t(image.width) * size_t(image.height) * 3);
  stbi_image_free(data);
  return image;
}

}  // namespace rad
