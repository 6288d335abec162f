#include "render/camera.h"

#include "render/pixel_kernels.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/error.h"
#include "util/math_constants.h"

namespace rad {

namespace {

// Images larger than this per side are surely a typo, and the renderer's MPI counts stay within int.
constexpr int kMaxImageSide = 16384;

std::string Format(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string Format(Vec3 v) { return "(" + Format(v.x) + ", " + Format(v.y) + ", " + Format(v.z) + ")"; }

bool Finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// The first thing wrong with a camera, or "" if it is usable. Shared by the JSON loader and the options check
// so that both reject exactly the same cameras.
std::string CameraProblem(const Camera &c) {
  if (!Finite(c.position)) return "position " + Format(c.position) + " is not finite";
  if (!Finite(c.target)) return "target " + Format(c.target) + " is not finite";
  if (!Finite(c.up)) return "up " + Format(c.up) + " is not finite";
  const Vec3 view = c.target - c.position;
  const double scale = std::max(Length(c.position), Length(c.target));
  if (!(Length(view) > 1e-12 * scale)) return "position and target are the same point " + Format(c.position);
  const double upLength = Length(c.up);
  // Nearly parallel vectors leave the image's horizontal direction undefined (or dominated by rounding).
  if (!(upLength > 0) || Length(Cross(view, c.up)) <= 1e-6 * Length(view) * upLength) {
    return "up " + Format(c.up) + " is zero or parallel to the view direction " + Format(view);
  }
  if (!(c.fovYDeg > 0 && c.fovYDeg < 180)) return "fov_y_deg must be in (0, 180), got " + Format(c.fovYDeg);
  if (c.width < 1 || c.height < 1 || c.width > kMaxImageSide || c.height > kMaxImageSide) {
    return "width and height must be integers from 1 to " + std::to_string(kMaxImageSide) + ", got " +
           std::to_string(c.width) + " x " + std::to_string(c.height);
  }
  return "";
}

Vec3 ReadVec3(const nlohmann::json &j, const std::string &key, const std::string &path) {
  const auto it = j.find(key);
  if (it == j.end()) throw InputError(path + ": missing key \"" + key + "\"");
  const std::string bad = path + ": \"" + key + "\" must be an array of 3 numbers";
  if (!it->is_array() || it->size() != 3) throw InputError(bad);
  Vec3 v;
  for (int k = 0; k < 3; ++k) {
    const nlohmann::json &e = (*it)[size_t(k)];
    if (!e.is_number()) throw InputError(bad);
    v[k] = e.get<double>();
    if (!std::isfinite(v[k])) throw InputError(bad);
  }
  return v;
}

double ReadNumber(const nlohmann::json &j, const std::string &key, const std::string &path) {
  const auto it = j.find(key);
  if (it == j.end()) throw InputError(path + ": missing key \"" + key + "\"");
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    throw InputError(path + ": \"" + key + "\" must be a number");
  }
  return it->get<double>();
}

// Optional image size: a JSON integer (no fraction, no string) in [1, kMaxImageSide].
void ReadSize(const nlohmann::json &j, const std::string &key, const std::string &path, int &value) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  const std::string bad = path + ": \"" + key + "\" must be an integer from 1 to " + std::to_string(kMaxImageSide);
  if (!it->is_number_integer()) throw InputError(bad);
  // Unsigned first: a huge value must not wrap around into the valid range.
  if (it->is_number_unsigned() ? it->get<unsigned long long>() > (unsigned long long)kMaxImageSide
                               : (it->get<long long>() < 1 || it->get<long long>() > kMaxImageSide)) {
    throw InputError(bad);
  }
  value = it->get<int>();
  if (value < 1) throw InputError(bad);
}

}  // namespace

Camera LoadCameraJson(const std::string &path, Camera defaults) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open camera file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    throw InputError(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InputError(path + ": a camera file must hold one JSON object");
  // A misspelt optional key ("heigth") would otherwise be ignored silently.
  static const std::set<std::string> known{"position", "target", "up", "fov_y_deg", "width", "height"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) {
      throw InputError(path + ": unknown key \"" + it.key() +
                       "\" (expected position, target, up, fov_y_deg, width, height)");
    }
  }
  Camera c = defaults;
  c.position = ReadVec3(j, "position", path);
  c.target = ReadVec3(j, "target", path);
  c.up = ReadVec3(j, "up", path);
  c.fovYDeg = ReadNumber(j, "fov_y_deg", path);
  ReadSize(j, "width", path, c.width);
  ReadSize(j, "height", path, c.height);
  const std::string problem = CameraProblem(c);
  if (!problem.empty()) throw InputError(path + ": " + problem);
  return c;
}

void ValidateCamera(const Camera &camera, const std::string &what) {
  const std::string problem = CameraProblem(camera);
  if (!problem.empty()) throw InputError(what + ": " + problem);
}

Camera FrameScene(const std::vector<Patch> &patches, int width, int height) {
  Camera c;
  c.width = width;
  c.height = height;
  c.fovYDeg = 40;
  c.up = {0, 1, 0};
  if (patches.empty()) return c;
  Vec3 lo = patches[0].corners[0], hi = lo;
  for (const Patch &p : patches) {
    for (const Vec3 &q : p.corners) {
      lo = Min(lo, q);
      hi = Max(hi, q);
    }
  }
  const Vec3 centre = (lo + hi) * 0.5, half = (hi - lo) * 0.5;
  const double tanY = std::tan(0.5 * c.fovYDeg * kPi / 180);
  const double tanX = tanY * double(std::max(width, 1)) / double(std::max(height, 1));
  // The box's near face (z = centre.z + half.z) is where the frustum is narrowest, so it must fit there;
  // 5% margin keeps the outermost corners off the image border.
  double distance = half.z + 1.05 * std::max(half.x / tanX, half.y / tanY);
  // A flat or point-like box would put the camera on (or in) it: step back by a bit of its size.
  const double size = Length(hi - lo);
  distance = std::max(distance, half.z + (size > 0 ? 0.1 * size : 1.0));
  c.target = centre;
  c.position = centre + Vec3(0, 0, distance);
  return c;
}

CameraFrame MakeCameraFrame(const Camera &camera) {
  CameraFrame f;
  f.position = camera.position;
  f.forward = Normalize(camera.target - camera.position);
  f.right = Normalize(Cross(f.forward, camera.up));
  f.up = Cross(f.right, f.forward);
  f.tanY = std::tan(0.5 * camera.fovYDeg * kPi / 180);
  f.tanX = f.tanY * double(camera.width) / double(camera.height);
  f.width = camera.width;
  f.height = camera.height;
  return f;
}

CameraRay GenerateRay(const Camera &camera, double px, double py) { return FrameRay(MakeCameraFrame(camera), px, py); }

}  // namespace rad
