#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/ply_writer.h"
#include "render/image.h"
#include "tests/temp_file.h"
#include "util/error.h"

namespace rad {
namespace {

namespace fs = std::filesystem;

using test::TempFile;

// A unit quad (0 1 2 3) and a triangle (1 4 2) on its right edge; the triangle repeats its third corner.
SmoothMesh QuadAndTriangle() {
  SmoothMesh mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {2, 0.5, -0.25}};
  mesh.vertexRadiance = {0, 0, 0, 0.5, 0.25, 0.125, 1.5, 2.0, 0.001, 0.18, 0.9, 0.3, 3.0, 0.0, 0.75};
  mesh.patchCorners = {0, 1, 2, 3, 1, 4, 2, 2};
  mesh.cornerCount = {4, 3};
  return mesh;
}

// Reads little-endian values from the binary body, failing the test rather than reading past the end.
struct Reader {
  const std::string &data;
  size_t pos;
  bool ok = true;
  uint32_t U32() {
    if (pos + 4 > data.size()) return ok = false, 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= uint32_t(uint8_t(data[pos++])) << (8 * k);
    return v;
  }
  float Float() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  uint8_t U8() {
    if (pos + 1 > data.size()) return ok = false, 0;
    return uint8_t(data[pos++]);
  }
};

TEST(Ply, HeaderAndBinaryBodyDescribeTheMesh) {
  const SmoothMesh mesh = QuadAndTriangle();
  const double exposure = 0.5;
  TempFile file(".ply");
  WritePly(file.path, mesh, exposure);
  EXPECT_FALSE(fs::exists(file.path + ".partial"));

  std::ifstream in(file.path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  const std::string data = content.str();
  const std::string endHeader = "end_header\n";
  const size_t headerEnd = data.find(endHeader);
  ASSERT_NE(headerEnd, std::string::npos);

  std::vector<std::string> lines;
  std::istringstream header(data.substr(0, headerEnd));
  int comments = 0;
  for (std::string line; std::getline(header, line);) {
    if (line.rfind("comment ", 0) == 0) {
      ++comments;
    } else {
      lines.push_back(line);
    }
  }
  EXPECT_GE(comments, 2);
  EXPECT_NE(data.substr(0, headerEnd).find("comment written by radiosity"), std::string::npos);
  const std::vector<std::string> expected = {
      "ply",
      "format binary_little_endian 1.0",
      "element vertex 5",
      "property float x",
      "property float y",
      "property float z",
      "property float radiance_r",
      "property float radiance_g",
      "property float radiance_b",
      "property uchar red",
      "property uchar green",
      "property uchar blue",
      "element face 2",
      "property list uchar int vertex_indices",
  };
  EXPECT_EQ(lines, expected);

  Reader body{data, headerEnd + endHeader.size()};
  for (size_t v = 0; v < mesh.vertices.size(); ++v) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(body.Float(), float(mesh.vertices[v][k])) << "vertex " << v;
    for (int c = 0; c < 3; ++c) EXPECT_EQ(body.Float(), float(mesh.vertexRadiance[3 * v + c])) << "vertex " << v;
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(body.U8(), LinearToSrgb8(mesh.vertexRadiance[3 * v + c], exposure)) << "vertex " << v;
    }
  }
  const std::vector<std::vector<uint32_t>> faces = {{0, 1, 2, 3}, {1, 4, 2}};
  for (const auto &face : faces) {
    ASSERT_EQ(body.U8(), face.size());
    std::vector<uint32_t> indices;
    for (size_t k = 0; k < face.size(); ++k) indices.push_back(body.U32());
    EXPECT_EQ(indices, face);
  }
  EXPECT_TRUE(body.ok) << "file ends early";
  EXPECT_EQ(body.pos, data.size()) << "bytes after the last face";
  // The colours carry the exposure: vertex 1's red 0.5 * 2^0.5 = 0.707 encodes to 219 (188 without exposure),
  // vertex 2's red 1.5 * 2^0.5 clamps to 255.
  const size_t firstVertex = headerEnd + endHeader.size(), vertexSize = 6 * 4 + 3;
  EXPECT_EQ(uint8_t(data[firstVertex + 1 * vertexSize + 24]), 219);
  EXPECT_EQ(uint8_t(data[firstVertex + 2 * vertexSize + 24]), 255);
}

TEST(Ply, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  TempFile dir("_missing_dir");
  const std::string path = dir.path + "/mesh.ply";
  try {
    WritePly(path, QuadAndTriangle(), 0);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
  EXPECT_FALSE(fs::exists(dir.path));
}

TEST(Ply, ReplacesAnExistingFile) {
  TempFile file(".ply");
  std::ofstream(file.path) << "old contents that are longer than nothing";
  SmoothMesh empty;
  WritePly(file.path, empty, 0);
  std::ifstream in(file.path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  const std::string data = content.str();
  EXPECT_EQ(data.rfind("ply\n", 0), 0u);
  EXPECT_NE(data.find("element vertex 0\n"), std::string::npos);
  EXPECT_NE(data.find("element face 0\n"), std::string::npos);
  EXPECT_EQ(data.size() - data.find("end_header\n"), std::string("end_header\n").size());
}

}  // namespace
}  // namespace rad
