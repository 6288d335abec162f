// The formats read through Assimp (STL, PLY, OFF, glTF): the same box written in each gives the OBJ's polygons
// bit for bit, corners in the same order (so the same winding); glTF's node transforms and materials; the
// materials file; several files as one scene; every bad file an InputError of one line naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "scene/scene.h"
#include "tests/scratch_dir.h"
#include "util/error.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using rad::Vec3;

// Each test's own folder.
class ScratchDir : public rad::test::ScratchDir {
 public:
  ScratchDir() : rad::test::ScratchDir("mesh_loader") {}
};

// A closed box [0,2] x [0,1] x [0,1.5] shifted by (-0.5, 0.25, -1.25): every coordinate a float exactly (and one
// that tinyobjloader, which reads the OBJ's numbers, rounds correctly: it reads 0.375 as 0.37500000000000006),
// fronts facing inward (a room). Quads as in meshes/tests/unit_cube.obj; the triangles split each quad at
// corner 0.
const std::vector<Vec3> kBox = {{-0.5, 0.25, 0.25}, {1.5, 0.25, 0.25}, {1.5, 0.25, -1.25}, {-0.5, 0.25, -1.25},
                                {-0.5, 1.25, -1.25}, {1.5, 1.25, -1.25}, {1.5, 1.25, 0.25}, {-0.5, 1.25, 0.25}};
const std::vector<std::vector<int>> kQuads = {{0, 1, 2, 3}, {4, 5, 6, 7}, {3, 2, 5, 4},
                                              {7, 6, 1, 0}, {3, 4, 7, 0}, {1, 6, 5, 2}};

std::vector<std::vector<int>> Triangles(const std::vector<std::vector<int>> &quads) {
  std::vector<std::vector<int>> triangles;
  for (const auto &q : quads) {
    triangles.push_back({q[0], q[1], q[2]});
    triangles.push_back({q[0], q[2], q[3]});
  }
  return triangles;
}

// Shortest text that reads back as the same double (all of kBox's are short).
std::string Number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

std::string Point(Vec3 p) { return Number(p.x) + " " + Number(p.y) + " " + Number(p.z); }

#define EXPECT_SAME_VEC3(a, b) EXPECT_EQ(Point(a), Point(b))

std::string Obj(const std::vector<std::vector<int>> &faces) {
  std::string text;
  for (Vec3 v : kBox) text += "v " + Point(v) + "\n";
  for (const auto &f : faces) {
    text += "f";
    for (int i : f) text += " " + std::to_string(i + 1);
    text += "\n";
  }
  return text;
}

std::string AsciiStl(const std::vector<std::vector<int>> &triangles, const std::string &solid = "box") {
  std::string text = "solid " + solid + "\n";
  for (const auto &t : triangles) {
    text += "  facet normal 0 0 0\n    outer loop\n";
    for (int i : t) text += "      vertex " + Point(kBox[size_t(i)]) + "\n";
    text += "    endloop\n  endfacet\n";
  }
  return text + "endsolid " + solid + "\n";
}

template <typename T>
void Put(std::string &bytes, T value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));  // little-endian hosts only (x86-64, arm64)
  bytes.append(raw, sizeof(T));
}

std::string BinaryStl(const std::vector<std::vector<int>> &triangles, double normalSign = 1) {
  std::string bytes = "binary STL of a box";
  bytes.resize(80, ' ');
  Put(bytes, uint32_t(triangles.size()));
  for (const auto &t : triangles) {
    const Vec3 a = kBox[size_t(t[0])], b = kBox[size_t(t[1])], c = kBox[size_t(t[2])];
    const Vec3 n = rad::Cross(b - a, c - a);  // the facet normal agrees with the winding
    for (Vec3 p : {n / rad::Length(n) * normalSign, a, b, c}) {
      Put(bytes, float(p.x));
      Put(bytes, float(p.y));
      Put(bytes, float(p.z));
    }
    Put(bytes, uint16_t(0));
  }
  return bytes;
}

std::string PlyHeader(const char *format, size_t faces) {
  return std::string("ply\nformat ") + format + " 1.0\ncomment a box\nelement vertex " + std::to_string(kBox.size()) +
         "\nproperty float x\nproperty float y\nproperty float z\nelement face " + std::to_string(faces) +
         "\nproperty list uchar int vertex_indices\nend_header\n";
}

// The faces as text lines "count i j k ...", as ASCII PLY and OFF both write them.
std::string FaceLines(const std::vector<std::vector<int>> &faces) {
  std::string text;
  for (const auto &f : faces) {
    text += std::to_string(f.size());
    for (int i : f) text += " " + std::to_string(i);
    text += "\n";
  }
  return text;
}

std::string AsciiPly(const std::vector<std::vector<int>> &faces) {
  std::string text = PlyHeader("ascii", faces.size());
  for (Vec3 v : kBox) text += Point(v) + "\n";
  return text + FaceLines(faces);
}

std::string BinaryPly(const std::vector<std::vector<int>> &faces, bool bigEndian = false) {
  std::string bytes = PlyHeader(bigEndian ? "binary_big_endian" : "binary_little_endian", faces.size());
  auto put = [&](auto value) {
    std::string raw;
    Put(raw, value);
    if (bigEndian) std::reverse(raw.begin(), raw.end());
    bytes += raw;
  };
  for (Vec3 v : kBox) {
    put(float(v.x));
    put(float(v.y));
    put(float(v.z));
  }
  for (const auto &f : faces) {
    put(uint8_t(f.size()));
    for (int i : f) put(int32_t(i));
  }
  return bytes;
}

std::string Off(const std::vector<std::vector<int>> &faces) {
  std::string text = "OFF\n# a box\n" + std::to_string(kBox.size()) + " " + std::to_string(faces.size()) + " 0\n";
  for (Vec3 v : kBox) text += Point(v) + "\n";
  return text + FaceLines(faces);
}

// glTF buffer: the positions (float VEC3) then the triangles' indices (uint32).
std::string GltfBuffer(const std::vector<std::vector<int>> &triangles) {
  std::string bytes;
  for (Vec3 v : kBox) {
    Put(bytes, float(v.x));
    Put(bytes, float(v.y));
    Put(bytes, float(v.z));
  }
  for (const auto &t : triangles)
    for (int i : t) Put(bytes, uint32_t(i));
  return bytes;
}

// One mesh "boxmesh" of one primitive with material "lamp" (base colour, emissive, emissive strength), under node
// "box" (`nodeExtra`: its transform), under node "room"; `bufferUri` empty for a .glb's own buffer.
std::string GltfJson(size_t triangleCount, const std::string &bufferUri, const std::string &nodeExtra = "",
                     const std::string &materials = "") {
  const size_t positions = kBox.size() * 12, indices = triangleCount * 12;
  std::ostringstream j;
  j << R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],)"
    << R"("nodes":[{"name":"room","children":[1]},{"name":"box","mesh":0)" << nodeExtra << "}],"
    << R"("meshes":[{"name":"boxmesh","primitives":[{"attributes":{"POSITION":0},"indices":1,"material":0}]}],)"
    << R"("materials":)"
    << (materials.empty() ? R"([{"name":"lamp","pbrMetallicRoughness":{"baseColorFactor":[0.25,0.5,0.75,1]},)"
                            R"("emissiveFactor":[1,0.5,0.25],)"
                            R"("extensions":{"KHR_materials_emissive_strength":{"emissiveStrength":4}}}])"
                          : materials)
    << R"(,"extensionsUsed":["KHR_materials_emissive_strength"],)"
    << R"("buffers":[{"byteLength":)" << positions + indices
    << (bufferUri.empty() ? std::string() : R"(,"uri":")" + bufferUri + "\"") << "}],"
    << R"("bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":)" << positions << "},"
    << R"({"buffer":0,"byteOffset":)" << positions << R"(,"byteLength":)" << indices << "}],"
    << R"("accessors":[{"bufferView":0,"componentType":5126,"count":)" << kBox.size()
    << R"(,"type":"VEC3","min":[-0.5,0.25,-1.25],"max":[1.5,1.25,0.25]},)"
    << R"({"bufferView":1,"componentType":5125,"count":)" << triangleCount * 3 << R"(,"type":"SCALAR"}]})";
  return j.str();
}

std::string Glb(const std::string &json, const std::string &bin) {
  std::string j = json, b = bin;
  while (j.size() % 4 != 0) j += ' ';
  while (b.size() % 4 != 0) b += '\0';
  std::string bytes = "glTF";
  Put(bytes, uint32_t(2));
  Put(bytes, uint32_t(12 + 8 + j.size() + 8 + b.size()));
  Put(bytes, uint32_t(j.size()));
  bytes += "JSON" + j;
  Put(bytes, uint32_t(b.size()));
  bytes += std::string("BIN\0", 4) + b;
  return bytes;
}

// Same polygons, bit for bit, corner by corner (and so the same winding), in the same order.
void ExpectSamePolygons(const rad::Scene &actual, const rad::Scene &expected) {
  ASSERT_EQ(actual.faces.size(), expected.faces.size());
  for (size_t f = 0; f < actual.faces.size(); ++f) {
    const auto &a = actual.faces[f].corners, &e = expected.faces[f].corners;
    ASSERT_EQ(a.size(), e.size()) << "face " << f;
    for (size_t k = 0; k < a.size(); ++k) {
      const double ak[3] = {a[k].x, a[k].y, a[k].z}, ek[3] = {e[k].x, e[k].y, e[k].z};
      EXPECT_EQ(std::memcmp(ak, ek, sizeof ak), 0) << "face " << f << " corner " << k << ": " << Point(a[k])
                                                    << " vs " << Point(e[k]);
    }
  }
}

std::string LoadError(const std::function<void()> &load) {
  try {
    load();
  } catch (const rad::InputError &e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

std::string LoadError(const std::string &path) {
  return LoadError([&] { rad::LoadScene(path); });
}

// `file: ...` or `file:line: ...` (a PLY header line), on one line, containing `word`.
void ExpectOneLine(const std::string &message, const std::string &file, const std::string &word) {
  EXPECT_THAT(message, StartsWith(file + ":"));
  EXPECT_THAT(message, HasSubstr(word));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(MeshLoader, StlAsciiAndBinaryGiveTheObjTrianglesBitForBit) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  const rad::Scene obj = rad::LoadScene(dir.Write("box.obj", Obj(triangles)));
  for (const std::string &file : {dir.Write("box.stl", AsciiStl(triangles)), dir.Write("binary.stl", BinaryStl(triangles)),
                                  dir.Write("UPPER.STL", BinaryStl(triangles))}) {
    SCOPED_TRACE(file);
    const rad::Scene stl = rad::LoadScene(file);
    ExpectSamePolygons(stl, obj);
    EXPECT_EQ(stl.path, file);
    ASSERT_EQ(stl.sources, std::vector<std::string>{file});
    for (const rad::Face &f : stl.faces) {
      EXPECT_EQ(f.line, 0);
      EXPECT_EQ(f.source, 0);
      EXPECT_EQ(stl.materials[size_t(f.material)].reflectance[0], 0.5);  // the default: STL has no materials
      EXPECT_EQ(stl.materials[size_t(f.material)].emission[0], 0.0);
    }
    EXPECT_TRUE(stl.warnings.empty()) << stl.warnings.front();
  }
  // Facet normals against the winding: the winding decides, with a warning.
  const rad::Scene flipped = rad::LoadScene(dir.Write("flipped.stl", BinaryStl(triangles, -1)));
  ExpectSamePolygons(flipped, obj);
  ASSERT_EQ(flipped.warnings.size(), 1u);
  EXPECT_THAT(flipped.warnings[0], HasSubstr("12 of 12 facets have a stored normal pointing against their winding"));
}

TEST(MeshLoader, PlyAndOffKeepTheQuadsBitForBit) {
  ScratchDir dir;
  const rad::Scene obj = rad::LoadScene(dir.Write("box.obj", Obj(kQuads)));
  for (const std::string &file : {dir.Write("box.ply", AsciiPly(kQuads)), dir.Write("binary.ply", BinaryPly(kQuads)),
                                  dir.Write("big.ply", BinaryPly(kQuads, true)),
                                  dir.Write("box.off", Off(kQuads)), dir.Write("box.Off", Off(kQuads))}) {
    SCOPED_TRACE(file);
    const rad::Scene scene = rad::LoadScene(file);
    ExpectSamePolygons(scene, obj);
    for (const rad::Face &f : scene.faces) EXPECT_EQ(f.corners.size(), 4u);  // not triangulated
  }
  // A pentagon and a triangle in one PLY come through as written.
  const std::vector<std::vector<int>> mixed = {{0, 1, 2, 3}, {4, 5, 6}};
  const rad::Scene ply = rad::LoadScene(dir.Write("mixed.ply", AsciiPly(mixed)));
  ExpectSamePolygons(ply, rad::LoadScene(dir.Write("mixed.obj", Obj(mixed))));
}

TEST(MeshLoader, GltfGivesTheObjTrianglesAndItsMaterial) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  const rad::Scene obj = rad::LoadScene(dir.Write("box.obj", Obj(triangles)));
  dir.Write("box.bin", GltfBuffer(triangles));
  const std::string gltf = dir.Write("box.gltf", GltfJson(triangles.size(), "box.bin"));
  const std::string glb = dir.Write("box.glb", Glb(GltfJson(triangles.size(), ""), GltfBuffer(triangles)));
  for (const std::string &file : {gltf, glb}) {
    SCOPED_TRACE(file);
    const rad::Scene scene = rad::LoadScene(file);
    ExpectSamePolygons(scene, obj);
    for (const rad::Face &f : scene.faces) {
      const rad::Material &m = scene.materials[size_t(f.material)];
      EXPECT_EQ(m.name, "lamp");
      EXPECT_EQ(m.reflectance[0], 0.25);  // base colour -> Kd
      EXPECT_EQ(m.reflectance[1], 0.5);
      EXPECT_EQ(m.reflectance[2], 0.75);
      EXPECT_EQ(m.emission[0], 4.0);  // emissive x strength -> Ke
      EXPECT_EQ(m.emission[1], 2.0);
      EXPECT_EQ(m.emission[2], 1.0);
    }
  }
}

// Translation, rotation and scale, composed in double from the file's numbers; a mirroring transform keeps
// the front side by reversing the corners (glTF: the determinant's sign decides the winding).
TEST(MeshLoader, GltfNodeTransformsInDoubleAndMirroringKeepsTheFront) {
  ScratchDir dir;
  const std::vector<std::vector<int>> floor = {{0, 1, 2}};  // in y = 0.25, front +y (into the box)
  dir.Write("t.bin", GltfBuffer(floor));
  const double h = std::sqrt(0.5);
  const std::string rotate = R"(,"translation":[10,20,30],"rotation":[0,0,)" + Number(h) + "," + Number(h) +
                             R"(],"scale":[2,2,2])";
  const rad::Scene turned = rad::LoadScene(dir.Write("turned.gltf", GltfJson(1, "t.bin", rotate)));
  ASSERT_EQ(turned.faces.size(), 1u);
  for (size_t k = 0; k < 3; ++k) {
    const Vec3 p = kBox[size_t(floor[0][k])], q = turned.faces[0].corners[k];
    // 90 degrees about z: (x, y) -> (-y, x), then scale 2 and translate.
    EXPECT_NEAR(q.x, 10 - 2 * p.y, 1e-14);
    EXPECT_NEAR(q.y, 20 + 2 * p.x, 1e-14);
    EXPECT_EQ(q.z, 30 + 2 * p.z);
  }
  const std::string mirror = R"(,"matrix":[1,0,0,0, 0,-1,0,0, 0,0,1,0, 0,0,0,1])";
  const rad::Scene mirrored = rad::LoadScene(dir.Write("mirrored.gltf", GltfJson(1, "t.bin", mirror)));
  ASSERT_EQ(mirrored.faces.size(), 1u);
  const auto &c = mirrored.faces[0].corners;
  const Vec3 normal = rad::Cross(c[1] - c[0], c[2] - c[0]);
  EXPECT_LT(normal.y, 0);  // the mirrored floor (y = -0.25) still faces the mirrored box's inside, -y
  EXPECT_EQ(c[0].y, -0.25);
}

TEST(MeshLoader, MaterialsFileByObjectMaterialAndFileName) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  // Two solids: "walls" (the first 10 triangles) and "lamp" (the last 2).
  const std::vector<std::vector<int>> walls(triangles.begin(), triangles.end() - 2), lamp(triangles.end() - 2,
                                                                                           triangles.end());
  std::string stl = AsciiStl(walls, "walls") + AsciiStl(lamp, "lamp");
  const std::string stlPath = dir.Write("room.stl", stl);
  const std::string plyPath = dir.Write("box.ply", AsciiPly(kQuads));
  dir.Write("box.bin", GltfBuffer(triangles));
  const std::string gltfPath = dir.Write("box.gltf", GltfJson(triangles.size(), "box.bin"));
  const std::string json = dir.Write("m.json", R"({
    "lamp": {"Kd": [0.75, 0.75, 0.75], "Ke": [17, 12, 4]},
    "room.stl": {"Kd": 0.25},
    "box": {"Kd": [0.125, 0.25, 0.5]},
    "unused": {"Ke": 1}
  })");
  const rad::Scene scene = rad::LoadScene({stlPath, plyPath, gltfPath}, rad::SceneLoadOptions{false, json});
  ASSERT_EQ(scene.faces.size(), 12u + 6u + 12u);
  ASSERT_EQ(scene.sources, (std::vector<std::string>{stlPath, plyPath, gltfPath}));
  auto material = [&](size_t f) { return scene.materials[size_t(scene.faces[f].material)]; };
  for (size_t f = 0; f < 10; ++f) EXPECT_SAME_VEC3(material(f).reflectance, Vec3(0.25, 0.25, 0.25)) << f;  // by file
  for (size_t f = 10; f < 12; ++f) {  // by the solid's name
    EXPECT_EQ(material(f).name, "lamp");
    EXPECT_SAME_VEC3(material(f).emission, Vec3(17, 12, 4));
  }
  for (size_t f = 12; f < 18; ++f) {
    EXPECT_EQ(material(f).name, "box");  // PLY: by the file's name without extension
    EXPECT_EQ(scene.faces[f].source, 1);
  }
  // glTF: the node "box" comes before its material "lamp".
  for (size_t f = 18; f < 30; ++f) EXPECT_SAME_VEC3(material(f).reflectance, Vec3(0.125, 0.25, 0.5)) << f;
  EXPECT_EQ(rad::FaceOrigin(scene, 13), plyPath + " face 1");
  bool warned = false;
  for (const std::string &w : scene.warnings) warned = warned || w.find("'unused'") != std::string::npos;
  EXPECT_TRUE(warned) << "no warning about the material that names nothing";
}

TEST(MeshLoader, SeveralFilesAppendFacesInOrderAndMergeMaterials) {
  ScratchDir dir;
  const std::vector<std::vector<int>> first(kQuads.begin(), kQuads.begin() + 3), second(kQuads.begin() + 3,
                                                                                          kQuads.end());
  dir.Write("m.mtl", "newmtl white\nKd 0.5 0.5 0.5\n");
  const std::string half = dir.Write("half.obj", "mtllib m.mtl\nusemtl white\n" + Obj(first));
  const std::string other = dir.Write("other.off", Off(second));
  const rad::Scene whole = rad::LoadScene(dir.Write("whole.obj", Obj(kQuads)));
  const rad::Scene both = rad::LoadScene({half, other}, rad::SceneLoadOptions{});
  ExpectSamePolygons(both, whole);
  EXPECT_EQ(both.path, half + ", " + other);
  ASSERT_EQ(both.materials.size(), 2u);  // default and white (same values, other name: kept apart)
  EXPECT_EQ(both.faces[0].line, 11);
  EXPECT_EQ(both.faces[4].line, 0);
  EXPECT_EQ(both.faces[4].source, 1);
  EXPECT_EQ(rad::FaceOrigin(both, 0), half + ":11");
  EXPECT_EQ(rad::FaceOrigin(both, 4), other + " face 1");
  EXPECT_EQ(rad::FaceOrigin(whole, 1), "line 10");
  EXPECT_EQ(rad::FaceOrigin(rad::LoadScene(other), 2), "face 2");
  // One file and no materials file: exactly LoadScene(path).
  EXPECT_EQ(rad::LoadScene({other}, rad::SceneLoadOptions{}).path, other);
}

TEST(MeshLoader, GltfPointsAndLinesLeftOutWithAWarning) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  std::string buffer = GltfBuffer(triangles);
  const size_t lines = buffer.size();
  Put(buffer, uint32_t(0));
  Put(buffer, uint32_t(1));
  dir.Write("box.bin", buffer);
  std::string json = GltfJson(triangles.size(), "box.bin");
  // A second primitive of mode LINES (1) over a third accessor.
  json.replace(json.find(R"("material":0}])"), std::strlen(R"("material":0}])"),
               R"("material":0},{"attributes":{"POSITION":0},"indices":2,"mode":1}])");
  json.replace(json.find(R"("byteLength":)"), std::strlen(R"("byteLength":)") + std::to_string(lines).size(),
               R"("byteLength":)" + std::to_string(lines + 8));
  json.replace(json.find(R"(}],"accessors")"), 2,
               R"(},{"buffer":0,"byteOffset":)" + std::to_string(lines) + R"(,"byteLength":8}])");
  json.replace(json.rfind("}]}"), 3, R"(},{"bufferView":2,"componentType":5125,"count":2,"type":"SCALAR"}]})");
  const rad::Scene scene = rad::LoadScene(dir.Write("lines.gltf", json));
  EXPECT_EQ(scene.faces.size(), triangles.size());
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_THAT(scene.warnings[0], HasSubstr("1 point(s) or line segment(s) left out"));
}

TEST(MeshLoader, UnknownExtensionNamesTheFileAndTheFormats) {
  ScratchDir dir;
  for (const std::string name : {"box.dae", "box", "box.stl.gz"}) {
    const std::string file = dir.Write(name, AsciiStl(Triangles(kQuads)));
    const std::string message = LoadError(file);
    ExpectOneLine(message, file, "unknown scene format");
    EXPECT_THAT(message, HasSubstr(".obj, .stl, .ply, .off, .gltf, .glb"));
  }
}

TEST(MeshLoader, BadFilesAreInputErrorsNamingTheFile) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  const std::string binary = BinaryStl(triangles);
  struct Case {
    std::string name, bytes, word;
  };
  std::string zeroArea = AsciiStl({{0, 1, 2}, {0, 0, 1}});
  const std::vector<Case> cases = {
      {"empty.stl", "", "empty file"},
      {"empty.ply", "", "empty file"},
      {"empty.off", "", "empty file"},
      {"empty.gltf", "", "empty file"},
      {"empty.glb", "", "empty file"},
      {"truncated.stl", binary.substr(0, binary.size() - 30), "binary STL of 12 triangles should have 684 bytes"},
      {"nofaces.stl", "solid nothing\nendsolid nothing\n", ""},
      {"nofaces.off", "OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n", ""},
      {"header.ply", "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nend_header\n0\n", ""},
      {"garbage.ply", "this is not a PLY file at all\n", "not a PLY file"},
      {"short.ply", AsciiPly(kQuads).substr(0, AsciiPly(kQuads).size() - 30), "cut short: face 3 of the 6"},
      {"shortbinary.ply", BinaryPly(kQuads).substr(0, BinaryPly(kQuads).size() - 3), "cut short: face 5 of the 6"},
      {"word.ply", std::string(AsciiPly(kQuads)).replace(AsciiPly(kQuads).rfind(' '), 2, " x"), ":24: malformed number 'x' in PLY face 5"},
      {"noend.ply", AsciiPly(kQuads).substr(0, 60), "without its end_header line"},
      {"noendbinary.ply", std::string(BinaryPly(kQuads)).replace(BinaryPly(kQuads).find("end_header"), 3, "END"),
       ":10: unknown PLY header line 'END_header'"},
      {"index.ply", AsciiPly({{0, 1, 99}}), ""},
      {"index.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", ":6: vertex index 7 of OFF face 0 out of range"},
      {"short.off", "OFF\n4 1 0\n0 0 0\n1 0 0\n0 1 0\n", "cut short: vertex 3 of the 4"},
      {"tencorners.off", Off({{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}}), ":12: OFF face 0 has 10 corners"},
      {"comment.off", "OFF\n3 1 0\n0 0 0\n# the second\n1 0 0\n0 1 0\n3 0 1 2\n", ":4: blank or comment line"},
      {"word.off", "OFF\n3 1 0\n0 0 0\n1 0 x\n0 1 0\n3 0 1 2\n", ":4: malformed coordinate 'x'"},
      {"garbage.gltf", "{ this is not JSON", ""},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = dir.Write(c.name, c.bytes);
    const std::string message = LoadError(file);
    ExpectOneLine(message, file, c.word);
  }
  // A degenerate STL facet (a repeated corner) is mended like an OBJ polygon: skipped with a warning naming its
  // face, or refused with --strict.
  const std::string zeroAreaFile = dir.Write("zeroarea.stl", zeroArea);
  const rad::Scene mended = rad::LoadScene(zeroAreaFile);
  EXPECT_EQ(mended.faces.size(), 1u);
  EXPECT_EQ(mended.repairs.degenerate.count + mended.repairs.zeroArea.count, 1);
  ASSERT_FALSE(mended.warnings.empty());
  EXPECT_THAT(mended.warnings.back(), HasSubstr("(face 1)"));
  ExpectOneLine(LoadError([&] { rad::LoadScene(zeroAreaFile, rad::SceneLoadOptions{true, ""}); }), zeroAreaFile,
                "face 1: degenerate polygon");
  ExpectOneLine(LoadError(dir.Path("missing.ply")), dir.Path("missing.ply"), "cannot open file");
  std::filesystem::create_directory(dir.Path("folder.stl"));
  ExpectOneLine(LoadError(dir.Path("folder.stl")), dir.Path("folder.stl"), "not a regular file");
}

// Cut short anywhere, a binary file is read or refused, never a crash or another kind of error.
TEST(MeshLoader, TruncatedBinaryFilesNeverCrash) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"t.stl", BinaryStl(triangles)},
      {"t.ply", BinaryPly(kQuads)},
      {"t.glb", Glb(GltfJson(triangles.size(), ""), GltfBuffer(triangles))}};
  for (const auto &[name, bytes] : files) {
    for (size_t length = 0; length < bytes.size(); length += (length < 200 ? 1 : 7)) {
      const std::string file = dir.Write(name, bytes.substr(0, length));
      try {
        rad::LoadScene(file);
      } catch (const rad::InputError &e) {
        EXPECT_THAT(std::string(e.what()), StartsWith(file + ":"));
      }
    }
  }
}

// Assimp 5.2's PLY reader loops for ever or crashes on a header without end_header, and reads what it cannot parse
// as 0: every file cut short, and every header with one byte changed, is read or refused, never worse.
TEST(MeshLoader, CutOrCorruptedTextFilesNeverCrash) {
  ScratchDir dir;
  const auto triangles = Triangles(kQuads);
  dir.Write("box.bin", GltfBuffer(triangles));
  const std::vector<std::pair<std::string, std::string>> files = {
      {"a.ply", AsciiPly(kQuads)}, {"b.ply", BinaryPly(kQuads)}, {"a.off", Off(kQuads)},
      {"a.stl", AsciiStl(triangles)}, {"a.gltf", GltfJson(triangles.size(), "box.bin")}};
  auto load = [&](const std::string &name, const std::string &bytes) {
    const std::string file = dir.Write(name, bytes);
    try {
      rad::LoadScene(file);
    } catch (const rad::InputError &e) {
      EXPECT_THAT(std::string(e.what()), StartsWith(file + ":"));
    }
  };
  for (const auto &[name, bytes] : files) {
    SCOPED_TRACE(name);
    for (size_t length = 0; length < bytes.size(); length += (length < 300 ? 1 : 11)) load(name, bytes.substr(0, length));
    const size_t header = name.back() == 'y' ? bytes.find("end_header") + 11 : std::min<size_t>(bytes.size(), 120);
    for (size_t at = 0; at < header; ++at) {
      for (char c : {' ', '\n', 'x', '9'}) {
        std::string changed = bytes;
        changed[at] = c;
        load(name, changed);
      }
    }
  }
}

TEST(MeshLoader, BadMaterialsAreInputErrorsNamingTheFile) {
  ScratchDir dir;
  const std::string stl = dir.Write("box.stl", AsciiStl(Triangles(kQuads)));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{ \"box\": ", "malformed JSON"},
      {"[1, 2]", "JSON object of materials"},
      {R"({"box": {"Kd": [1.5, 0, 0]}})", "outside [0,1]"},
      {R"({"box": {"Ke": [0, -1, 0]}})", "negative emission"},
      {R"({"box": {"kd": [0.5, 0.5, 0.5]}})", "unknown field 'kd'"},
      {R"({"box": {"Kd": [0.5, 0.5]}})", "Kd must be [r, g, b]"},
      {R"({"box": 0.5})", "must be an object"},
  };
  for (const auto &[text, word] : bad) {
    SCOPED_TRACE(text);
    const std::string json = dir.Write("m.json", text);
    ExpectOneLine(LoadError([&] { rad::LoadScene({stl}, rad::SceneLoadOptions{false, json}); }), json, word);
  }
  ExpectOneLine(LoadError([&] { rad::LoadScene({stl}, rad::SceneLoadOptions{false, dir.Path("none.json")}); }), dir.Path("none.json"),
                "cannot open file");
  // glTF materials are checked like MTL ones.
  const auto triangles = Triangles(kQuads);
  dir.Write("box.bin", GltfBuffer(triangles));
  const std::string gltf = dir.Write(
      "bad.gltf", GltfJson(triangles.size(), "box.bin", "",
                           R"([{"name":"hot","emissiveFactor":[1,1,1],"pbrMetallicRoughness":{"baseColorFactor":[2,0,0,1]}}])"));
  ExpectOneLine(LoadError(gltf), gltf, "outside [0,1]");
  // A glTF material without a base colour gets the default grey, like an MTL material without Kd.
  const std::string plain = dir.Write("plain.gltf", GltfJson(triangles.size(), "box.bin", "", R"([{"name":"plain"}])"));
  const rad::Scene scene = rad::LoadScene(plain);
  EXPECT_SAME_VEC3(scene.materials[size_t(scene.faces[0].material)].reflectance, Vec3(0.5, 0.5, 0.5));
}

}  // namespace
