// Binary PLY of the smoothed mesh. Values are encoded byte by byte so the file is little-endian whatever the
// host; the linear radiance travels next to the display colour so that viewers show colour and analysis tools
// keep the numbers.
#include "io/ply_writer.h"

#include <cstdint>
#include <cstring>
#include <sstream>

#include "render/image.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace rad {
namespace {

void PutU32(std::string &out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(char((v >> shift) & 0xff));
}

void PutFloat(std::string &out, double v) {
  const float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  PutU32(out, bits);
}

std::string Header(const SmoothMesh &mesh, double exposure) {
  std::ostringstream exposureText;
  exposureText << exposure;
  return "ply\n"
         "format binary_little_endian 1.0\n"
         "comment written by radiosity " RAD_VERSION "\n"
         "comment radiance_r/g/b: outgoing radiance B at the vertex (linear, units of Ke), area-weighted mean of its patches\n"
         "comment red/green/blue: sRGB of radiance * 2^exposure, exposure " + exposureText.str() + "\n"
         "element vertex " + std::to_string(mesh.vertices.size()) + "\n"
         "property float x\nproperty float y\nproperty float z\n"
         "property float radiance_r\nproperty float radiance_g\nproperty float radiance_b\n"
         "property uchar red\nproperty uchar green\nproperty uchar blue\n"
         "element face " + std::to_string(mesh.cornerCount.size()) + "\n"
         "property list uchar int vertex_indices\n"
         "end_header\n";
}

}  // namespace

void WritePly(const std::string &path, const SmoothMesh &mesh, double exposure) {
  const size_t vertexCount = mesh.vertices.size(), faceCount = mesh.cornerCount.size();
  RAD_CHECK(mesh.vertexRadiance.size() == 3 * vertexCount, "SmoothMesh: vertexRadiance is not 3 per vertex");
  RAD_CHECK(mesh.patchCorners.size() == 4 * faceCount, "SmoothMesh: patchCorners is not 4 per patch");

  std::string data = Header(mesh, exposure);
  for (size_t v = 0; v < vertexCount; ++v) {
    for (int k = 0; k < 3; ++k) PutFloat(data, mesh.vertices[v][k]);
    for (int c = 0; c < 3; ++c) PutFloat(data, mesh.vertexRadiance[3 * v + c]);
    for (int c = 0; c < 3; ++c) data.push_back(char(LinearToSrgb8(mesh.vertexRadiance[3 * v + c], exposure)));
  }
  for (size_t f = 0; f < faceCount; ++f) {
    const int count = mesh.cornerCount[f];
    RAD_CHECK(count == 3 || count == 4, "SmoothMesh: a patch has neither 3 nor 4 corners");
    data.push_back(char(count));
    for (int k = 0; k < count; ++k) {
      const int index = mesh.patchCorners[4 * f + size_t(k)];
      RAD_CHECK(index >= 0 && size_t(index) < vertexCount, "SmoothMesh: corner index out of range");
      PutU32(data, uint32_t(index));
    }
  }

  WriteFileAtomically(path, data, "PLY file");
}

}  // namespace rad
