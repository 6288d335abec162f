// Pinhole camera: from a camera JSON file (CONTRACTS.md), from options, or one that frames the scene.
#pragma once

#include <string>
#include <vector>

#include "scene/patch.h"
#include "util/vec3.h"

namespace rad {

struct Camera {
  Vec3 position{0, 0, 1}, target{0, 0, 0}, up{0, 1, 0};
  double fovYDeg = 40;  // full vertical field of view
  int width = 512, height = 512;
};

// {"position":[x,y,z], "target":[x,y,z], "up":[x,y,z], "fov_y_deg": v, "width": W, "height": H}; width and
// height are optional (keep the given defaults). Throws InputError naming the file and the problem
// (missing file, bad JSON, missing key, wrong type, degenerate camera: position == target, up parallel to the
// view direction, fov outside (0, 180), size < 1).
Camera LoadCameraJson(const std::string &path, Camera defaults = Camera());

// Checks a camera built from options; throws InputError with `what` (e.g. "--camera-position") in the text.
void ValidateCamera(const Camera &camera, const std::string &what);

// A camera that sees the whole bounding box of the patches: looking along -z at its centre from +z (the
// OBJ convention of the bundled scenes), 40 degree field of view, far enough that the box fits.
Camera FrameScene(const std::vector<Patch> &patches, int width, int height);

// Ray through image position (px, py) in pixels, (0,0) = top-left corner of the image, y down.
struct CameraRay {
  Vec3 origin, direction;  // direction is unit length
};
CameraRay GenerateRay(const Camera &camera, double px, double py);

}  // namespace rad
