// The patch mesh with per-vertex radiance as a binary little-endian PLY file (MeshLab, ParaView, Blender):
// vertex properties x y z (float), radiance_r radiance_g radiance_b (float, linear), red green blue (uchar,
// sRGB of radiance * 2^exposure); faces as `list uchar int vertex_indices` (triangles and quads as they are).
// Written to "<path>.partial" and renamed into place; InputError naming the path if it cannot be written.
#pragma once

#include <string>

#include "render/smooth_mesh.h"

namespace rad {

void WritePly(const std::string &path, const SmoothMesh &mesh, double exposure);

}  // namespace rad
