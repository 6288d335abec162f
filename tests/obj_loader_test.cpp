// LoadScene: good scenes keep their polygons, materials and line numbers; every kind of bad input is an
// InputError of one line naming the file, the line where there is one, and the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scene/scene.h"
#include "tests/scratch_dir.h"
#include "util/error.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A fresh directory per test, so that tests cannot see each other's files.
class ScratchDir : public rad::test::ScratchDir {
 public:
  ScratchDir() : rad::test::ScratchDir("obj_loader") {}
};

// Four corners of the unit square in z = 0 and a fifth point above it: enough for most bad cases.
const char *const kSquareVertices =
    "v 0 0 0\n"
    "v 1 0 0\n"
    "v 1 1 0\n"
    "v 0 1 0\n";

const char *const kGoodMtl =
    "# materials\n"
    "newmtl white\n"
    "Kd 0.7 0.6 0.5\n"
    "Ke 0 0 0\n"
    "\n"
    "newmtl light   # a lamp\n"
    "Kd 0.25 0.25 0.25\n"
    "Ke 17 12 4\n"
    "newmtl plain\n"
    "Ns 10\n";

std::string LoadError(const std::string &objPath, bool strict = false) {
  try {
    rad::LoadScene(objPath, rad::SceneLoadOptions{strict});
  } catch (const rad::InputError &error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError for " << objPath;
  return std::string();
}

// `<file>:<line>: ...` (or `<file>: ...` for line 0), on one line, containing `word`.
void ExpectMessage(const std::string &message, const std::string &file, int line, const std::string &word) {
  const std::string prefix = file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": ";
  EXPECT_THAT(message, StartsWith(prefix));
  EXPECT_THAT(message, HasSubstr(word));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// An OBJ of the unit square's vertices followed by `body`, with the good MTL beside it.
std::string WriteScene(const ScratchDir &dir, const std::string &body) {
  dir.Write("scene.mtl", kGoodMtl);
  return dir.Write("scene.obj", std::string("mtllib scene.mtl\n") + kSquareVertices + body);
}

// Lines: 1 mtllib, 2-5 the vertices, so `body` starts on line 6.
void ExpectObjError(const std::string &body, int line, const std::string &word) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, body);
  ExpectMessage(LoadError(obj), obj, line, word);
}

// The same with --strict: polygons that would be mended are refused (tests/polygon_repair_test.cpp has the
// mending itself).
void ExpectStrictError(const std::string &body, int line, const std::string &word) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, body);
  ExpectMessage(LoadError(obj, true), obj, line, word);
  // Without --strict the polygon is mended or skipped (with a good square beside it, the scene is not empty).
  const std::string withSquare = WriteScene(dir, body + "f 1 2 3 4\n");
  EXPECT_NO_THROW(rad::LoadScene(withSquare)) << "without --strict the polygon is mended";
}

void ExpectMtlError(const std::string &mtl, int line, const std::string &word) {
  ScratchDir dir;
  const std::string mtlPath = dir.Write("scene.mtl", mtl);
  const std::string obj = dir.Write("scene.obj", std::string("mtllib scene.mtl\n") + kSquareVertices +
                                                     "usemtl m\nf 1 2 3 4\n");
  ExpectMessage(LoadError(obj), mtlPath, line, word);
}

void ExpectCorner(rad::Vec3 actual, rad::Vec3 expected) {
  EXPECT_DOUBLE_EQ(actual.x, expected.x);
  EXPECT_DOUBLE_EQ(actual.y, expected.y);
  EXPECT_DOUBLE_EQ(actual.z, expected.z);
}

TEST(ObjLoader, LoadsQuadAndTriangleWithMaterialsAndLines) {
  ScratchDir dir;
  dir.Write("scene.mtl", kGoodMtl);
  const std::string obj = dir.Write("scene.obj",
                                    "# a quad and a triangle\r\n"   // 1
                                    "mtllib scene.mtl\r\n"          // 2
                                    "v 0 0 0\r\n"                   // 3
                                    "v 2 0 0\r\n"                   // 4
                                    "v 2 3 0\r\n"                   // 5
                                    "v 0 3 0\r\n"                   // 6
                                    "v 1 1 5\r\n"                   // 7
                                    "f 2 3 5\r\n"                   // 8: before any usemtl
                                    "\r\n"                          // 9
                                    "usemtl white\r\n"              // 10
                                    "f 1/1 2/1 3/1 4/1  # floor\r\n"  // 11: texcoords are ignored
                                    "g lamp\r\n"                    // 12
                                    "usemtl light\r\n"              // 13
                                    "f -5 -4 -1\r\n"                // 14: relative indices
                                    "usemtl plain\r\n"              // 15
                                    "f 4 3 5\r\n");                 // 16
  const rad::Scene scene = rad::LoadScene(obj);
  EXPECT_EQ(scene.path, obj);
  ASSERT_EQ(scene.faces.size(), 4u);

  const rad::Face &first = scene.faces[0];
  EXPECT_EQ(first.line, 8);
  ASSERT_EQ(first.corners.size(), 3u);
  EXPECT_EQ(scene.materials[static_cast<size_t>(first.material)].name, "default");

  const rad::Face &quad = scene.faces[1];
  EXPECT_EQ(quad.line, 11);
  ASSERT_EQ(quad.corners.size(), 4u);
  ExpectCorner(quad.corners[0], {0, 0, 0});
  ExpectCorner(quad.corners[1], {2, 0, 0});
  ExpectCorner(quad.corners[2], {2, 3, 0});
  ExpectCorner(quad.corners[3], {0, 3, 0});
  const rad::Material &white = scene.materials[static_cast<size_t>(quad.material)];
  EXPECT_EQ(white.name, "white");
  ExpectCorner(white.reflectance, {0.7, 0.6, 0.5});
  ExpectCorner(white.emission, {0, 0, 0});

  const rad::Face &lamp = scene.faces[2];
  EXPECT_EQ(lamp.line, 14);
  ASSERT_EQ(lamp.corners.size(), 3u);
  ExpectCorner(lamp.corners[0], {0, 0, 0});
  ExpectCorner(lamp.corners[1], {2, 0, 0});
  ExpectCorner(lamp.corners[2], {1, 1, 5});
  const rad::Material &light = scene.materials[static_cast<size_t>(lamp.material)];
  EXPECT_EQ(light.name, "light");  // the trailing comment is not part of the name
  ExpectCorner(light.reflectance, {0.25, 0.25, 0.25});
  ExpectCorner(light.emission, {17, 12, 4});

  // A material without Kd is 0.5 grey.
  const rad::Face &last = scene.faces[3];
  EXPECT_EQ(last.line, 16);
  const rad::Material &plain = scene.materials[static_cast<size_t>(last.material)];
  EXPECT_EQ(plain.name, "plain");
  ExpectCorner(plain.reflectance, {0.5, 0.5, 0.5});
  ExpectCorner(plain.emission, {0, 0, 0});

  // Index 0 is the built-in default; then the MTL's materials, each once.
  ASSERT_EQ(scene.materials.size(), 4u);
  EXPECT_EQ(first.material, 0);
  EXPECT_EQ(scene.materials[0].name, "default");
  ExpectCorner(scene.materials[0].reflectance, {0.5, 0.5, 0.5});
  ExpectCorner(scene.materials[0].emission, {0, 0, 0});
}

TEST(ObjLoader, BackslashContinuesALine) {
  // OBJ: a line ending in a backslash continues on the next. The face is read whole, at its first line, and
  // later lines keep their numbers (the bad face on line 10 is reported there).
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "usemtl white\nf 1 2 \\\n  3 \\\n4\nf 1 2 3 9\n");
  const std::string message = LoadError(obj);
  ExpectMessage(message, obj, 10, "out of range");
  const std::string good = WriteScene(dir, "usemtl white\nf 1 2 \\\n  3 \\\n4   # a quad\nf 1 \\\n 3 4\n");
  const rad::Scene scene = rad::LoadScene(good);
  ASSERT_EQ(scene.faces.size(), 2u);
  EXPECT_EQ(scene.faces[0].corners.size(), 4u);
  EXPECT_EQ(scene.faces[0].line, 7);
  EXPECT_EQ(scene.faces[1].corners.size(), 3u);
  EXPECT_EQ(scene.faces[1].line, 10);
  ExpectCorner(scene.faces[0].corners[3], {0, 1, 0});
  EXPECT_TRUE(scene.warnings.empty());
}

TEST(ObjLoader, QuadStaysQuad) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "usemtl white\nf 1 2 3 4\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ASSERT_EQ(scene.faces.size(), 1u);
  ASSERT_EQ(scene.faces[0].corners.size(), 4u);
  ExpectCorner(scene.faces[0].corners[2], {1, 1, 0});
  EXPECT_EQ(scene.faces[0].line, 7);
}

TEST(ObjLoader, PlanarConvexPentagonIsAccepted) {
  ScratchDir dir;
  dir.Write("scene.mtl", kGoodMtl);
  const std::string obj = dir.Write("scene.obj",
                                    "mtllib scene.mtl\n"
                                    "v 0 0 1\nv 2 0 1\nv 3 1 1\nv 1 3 1\nv -1 1 1\n"
                                    "usemtl white\n"
                                    "f 1 2 3 4 5\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ASSERT_EQ(scene.faces.size(), 1u);
  EXPECT_EQ(scene.faces[0].corners.size(), 5u);
  EXPECT_EQ(scene.faces[0].line, 8);
  ExpectCorner(scene.faces[0].corners[4], {-1, 1, 1});
}

TEST(ObjLoader, ScenesWithoutMaterialsUseTheDefault) {
  ScratchDir dir;
  const std::string obj = dir.Write("plain.obj", std::string(kSquareVertices) + "f 1 2 3\nf 1 3 4\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ASSERT_EQ(scene.faces.size(), 2u);
  ASSERT_EQ(scene.materials.size(), 1u);
  EXPECT_EQ(scene.materials[0].name, "default");
  EXPECT_EQ(scene.faces[1].material, 0);
  EXPECT_EQ(scene.faces[1].line, 6);
}

TEST(ObjLoader, HarmlessWarningsAreNotErrors) {
  // tinyobjloader warns about both `d` and `Tr` and about texture/normal indices out of range (neither is
  // used here); none of these matters for radiosity.
  ScratchDir dir;
  dir.Write("scene.mtl", "newmtl m\nKd 0.5 0.5 0.5\nd 1\nTr 0\n");
  const std::string obj = dir.Write("scene.obj", std::string("mtllib scene.mtl\n") + kSquareVertices +
                                                     "g walls\ns off\no box\nusemtl m\nf 1/7/9 2/7/9 3/7/9 4/7/9\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ASSERT_EQ(scene.faces.size(), 1u);
  EXPECT_EQ(scene.faces[0].corners.size(), 4u);
}

TEST(ObjLoader, SeveralLibrariesOnOneMtllibLine) {
  // tinyobjloader itself would stop after the first file of the line.
  ScratchDir dir;
  dir.Write("a.mtl", "newmtl a\nKd 0.1 0.2 0.3\n");
  dir.Write("b.mtl", "newmtl b\nKd 0.4 0.5 0.6\nKe 1 1 1\n");
  const std::string obj = dir.Write("scene.obj", std::string("mtllib a.mtl b.mtl\n") + kSquareVertices +
                                                     "usemtl b\nf 1 2 3\nusemtl a\nf 1 3 4\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ASSERT_EQ(scene.faces.size(), 2u);
  EXPECT_EQ(scene.materials[static_cast<size_t>(scene.faces[0].material)].name, "b");
  ExpectCorner(scene.materials[static_cast<size_t>(scene.faces[0].material)].emission, {1, 1, 1});
  EXPECT_EQ(scene.materials[static_cast<size_t>(scene.faces[1].material)].name, "a");
}

// ---- Files ---------------------------------------------------------------------------------------------

TEST(ObjLoader, MissingObjFile) {
  ScratchDir dir;
  const std::string obj = dir.Path("nothere.obj");
  ExpectMessage(LoadError(obj), obj, 0, "cannot open");
}

TEST(ObjLoader, DirectoryIsNotAnObjFile) {
  ScratchDir dir;
  const std::string obj = dir.Path("folder.obj");
  std::filesystem::create_directory(obj);
  ExpectMessage(LoadError(obj), obj, 0, "cannot open");
}

TEST(ObjLoader, UnreadableObjFile) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "usemtl white\nf 1 2 3\n");
  chmod(obj.c_str(), 0);
  if (std::ifstream(obj).good()) GTEST_SKIP() << "running with permission to read anything (root?)";
  ExpectMessage(LoadError(obj), obj, 0, "cannot open");
}

TEST(ObjLoader, MaterialLibraryFoundByItsNameNextToTheObj) {
  // Published scenes name a folder of their author's machine; the file itself sits beside the OBJ.
  ScratchDir dir;
  dir.Write("box.mtl", "newmtl red\nKd 0.6 0.1 0.1\n");
  const std::string obj = dir.Write("scene.obj", std::string("mtllib textures/old/box.mtl\n") + kSquareVertices +
                                                     "usemtl red\nf 1 2 3\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ExpectCorner(scene.materials[static_cast<size_t>(scene.faces[0].material)].reflectance, {0.6, 0.1, 0.1});
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_THAT(scene.warnings[0], StartsWith(obj + ":1: material library 'textures/old/box.mtl' not found"));
  EXPECT_THAT(scene.warnings[0], HasSubstr(dir.Path("box.mtl")));
  // Found nowhere, it is the error it was, naming the path as written.
  const std::string missing = dir.Write("missing.obj", std::string("mtllib other/none.mtl\n") + kSquareVertices +
                                                           "f 1 2 3\n");
  const std::string message = LoadError(missing);
  ExpectMessage(message, missing, 1, "cannot open");
  EXPECT_THAT(message, HasSubstr(dir.Path("other/none.mtl")));
}

TEST(ObjLoader, MissingMtlFile) {
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", std::string("# comment\nmtllib nothere.mtl\n") + kSquareVertices +
                                                     "f 1 2 3\n");
  const std::string message = LoadError(obj);
  ExpectMessage(message, obj, 2, "cannot open");
  EXPECT_THAT(message, HasSubstr("material library '" + dir.Path("nothere.mtl") + "'"));
}

TEST(ObjLoader, UnknownMaterial) {
  ExpectObjError("usemtl white\nf 1 2 3\nusemtl purple\nf 1 3 4\n", 8, "unknown material 'purple'");
}

TEST(ObjLoader, MaterialUsedBeforeItsLibrary) {
  ScratchDir dir;
  dir.Write("scene.mtl", kGoodMtl);
  const std::string obj = dir.Write("scene.obj", std::string(kSquareVertices) +
                                                     "usemtl white\nf 1 2 3\nmtllib scene.mtl\n");
  ExpectMessage(LoadError(obj), obj, 5, "unknown material 'white'");
}

TEST(ObjLoader, UsemtlWithoutName) { ExpectObjError("usemtl\nf 1 2 3\n", 6, "usemtl without a material name"); }

// ---- Vertices and faces --------------------------------------------------------------------------------

TEST(ObjLoader, VertexIndexOutOfRange) {
  // tinyobjloader only warns about this one, naming the file's last line.
  ExpectObjError("f 1 2 3\nf 1 2 9\nf 1 3 4\n", 7, "out of range");
}

TEST(ObjLoader, VertexIndexZero) {
  // tinyobjloader fails the whole file here.
  ExpectObjError("f 1 2 3\n\nf 0 1 2\n", 8, "out of range");
}

TEST(ObjLoader, RelativeVertexIndexOutOfRange) {
  // tinyobjloader accepts this silently and hands out a negative index.
  ExpectObjError("f -1 -2 -9\n", 6, "out of range");
}

TEST(ObjLoader, MalformedVertexReference) { ExpectObjError("f 1 2 x\n", 6, "malformed"); }

TEST(ObjLoader, NanCoordinate) {
  // tinyobjloader silently reads nan and inf as 0.
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n");
  ExpectMessage(LoadError(obj), obj, 3, "non-finite");
}

TEST(ObjLoader, InfiniteCoordinate) {
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv -inf 0 0\nv 0 1 0\nf 1 2 3\n");
  ExpectMessage(LoadError(obj), obj, 2, "non-finite");
}

TEST(ObjLoader, OverflowingCoordinate) {
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv 1 0 0\nv 0 1 1e999\nf 1 2 3\n");
  ExpectMessage(LoadError(obj), obj, 3, "non-finite");
}

TEST(ObjLoader, MalformedCoordinate) {
  // tinyobjloader would read 1,5 as 1.
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv 1,5 0 0\nv 0 1 0\nf 1 2 3\n");
  ExpectMessage(LoadError(obj), obj, 2, "malformed");
}

TEST(ObjLoader, VertexWithTwoCoordinates) {
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n");
  ExpectMessage(LoadError(obj), obj, 2, "3 coordinates");
}

TEST(ObjLoader, FaceWithTwoVertices) {
  // tinyobjloader drops it with a warning.
  ExpectObjError("f 1 2 3\nf 1 2\n", 7, "fewer than 3");
}

TEST(ObjLoader, FaceWithoutVertices) { ExpectObjError("f 1 2 3\nf\n", 7, "fewer than 3"); }

TEST(ObjLoader, StrictZeroAreaTriangle) {
  ExpectStrictError("v 2 0 0\nf 1 2 3\nf 1 2 5\n", 8, "zero-area");
}

TEST(ObjLoader, StrictTinyTriangleInLargeSceneHasZeroArea) {
  // 1e-7 x 1e-7 in a scene of diagonal ~1e2: area 5e-15 < 1e-12 * 1e4.
  ExpectStrictError("v 100 0 0\nv 0 1e-7 0\nv 1e-7 0 0\nf 1 2 3\nf 1 7 6\n", 10, "zero-area");
}

TEST(ObjLoader, StrictNonPlanarQuad) { ExpectStrictError("v 1 1 0.01\nf 1 2 5 4\n", 7, "non-planar"); }

TEST(ObjLoader, SlightlyNonPlanarQuadWithinToleranceIsAccepted) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "v 1 1 1e-8\nf 1 2 5 4\n");
  EXPECT_EQ(rad::LoadScene(obj).faces.size(), 1u);
}

TEST(ObjLoader, StrictNonConvexQuad) {
  // A dart: corner 3 points back inside.
  ExpectStrictError("v 0.3 0.3 0\nf 1 2 5 4\n", 7, "non-convex");
}

TEST(ObjLoader, ClockwiseQuadIsConvexToo) {
  // Orientation decides the front side, not validity.
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "f 4 3 2 1\n");
  EXPECT_EQ(rad::LoadScene(obj).faces[0].corners.size(), 4u);
}

TEST(ObjLoader, StrictSelfIntersectingQuad) {
  // A bow tie with unequal halves (an even one has zero area and fails as such).
  ExpectStrictError("v 2 2 0\nv 2 0 0\nf 1 5 6 4\n", 8, "non-convex");
}

TEST(ObjLoader, StrictSelfIntersectingPentagram) {
  // Every turn has the same sign, but the outline goes round twice.
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj",
                                    "v 1 0 0\n"
                                    "v 0.309017 0.951057 0\n"
                                    "v -0.809017 0.587785 0\n"
                                    "v -0.809017 -0.587785 0\n"
                                    "v 0.309017 -0.951057 0\n"
                                    "f 1 2 3 4 5\n"
                                    "f 1 3 5 2 4\n");
  ExpectMessage(LoadError(obj, true), obj, 7, "self-intersecting");
  // Without --strict the star is skipped as degenerate and the pentagon kept.
  const rad::Scene scene = rad::LoadScene(obj);
  EXPECT_EQ(scene.faces.size(), 1u);
  EXPECT_EQ(scene.repairs.degenerate.count, 1);
}

TEST(ObjLoader, StrictNonConvexPentagon) {
  ScratchDir dir;
  const std::string obj = dir.Write("scene.obj", "v 0 0 0\nv 2 0 0\nv 2 2 0\nv 1 0.5 0\nv 0 2 0\nf 1 2 3 4 5\n");
  ExpectMessage(LoadError(obj, true), obj, 6, "non-convex");
  EXPECT_EQ(rad::LoadScene(obj).faces.size(), 3u);  // without --strict: three triangles
}

TEST(ObjLoader, StrictQuadWithRepeatedVertex) { ExpectStrictError("f 1 2 2 3\n", 6, "repeated vertex"); }

TEST(ObjLoader, StrictQuadWithCollinearCorner) {
  // Really a triangle with an extra point on one edge.
  ExpectStrictError("v 0.5 0 0\nf 1 5 2 3\n", 7, "collinear");
}

TEST(ObjLoader, EmptyScene) {
  ScratchDir dir;
  const std::string obj = WriteScene(dir, "usemtl white\n");
  ExpectMessage(LoadError(obj), obj, 0, "no faces");
}

TEST(ObjLoader, EmptyFile) {
  ScratchDir dir;
  const std::string obj = dir.Write("empty.obj", "");
  ExpectMessage(LoadError(obj), obj, 0, "no faces");
}

// ---- Materials -----------------------------------------------------------------------------------------

TEST(ObjLoader, ReflectanceOfOneIsAcceptedWithAWarning) {
  // `Kd 1 1 1` is in most OBJ loaders' test models: it reflects everything, which the solver can handle unless
  // the scene is closed; a warning naming the MTL line says so.
  ScratchDir dir;
  const std::string mtl = dir.Write("scene.mtl", "newmtl m\nKd 0.5 1 0.5\nnewmtl n\nKd 0.5\n");
  const std::string obj = dir.Write("scene.obj", std::string("mtllib scene.mtl\n") + kSquareVertices +
                                                     "usemtl m\nf 1 2 3\nusemtl n\nf 1 3 4\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ExpectCorner(scene.materials[static_cast<size_t>(scene.faces[0].material)].reflectance, {0.5, 1, 0.5});
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_THAT(scene.warnings[0], StartsWith(mtl + ":2: material 'm'"));
  EXPECT_THAT(scene.warnings[0], HasSubstr("absorbs nothing"));
}

TEST(ObjLoader, ReflectanceAboveOne) { ExpectMtlError("newmtl m\nKd 0.5 1.0001 0.5\n", 2, "outside [0,1]"); }

TEST(ObjLoader, NegativeReflectance) { ExpectMtlError("newmtl m\n\nKd 0.5 0.5 -0.1\n", 3, "reflectance"); }

TEST(ObjLoader, ReflectanceOfUnusedMaterialIsStillChecked) {
  ExpectMtlError("newmtl m\nKd 0.5 0.5 0.5\nnewmtl other\nKd 2 0 0\n", 4, "reflectance");
}

TEST(ObjLoader, NegativeEmission) { ExpectMtlError("newmtl m\nKd 0.5 0.5 0.5\nKe 1 -1 1\n", 3, "emission"); }

TEST(ObjLoader, NonFiniteReflectance) {
  // tinyobjloader silently reads nan as 0.
  ExpectMtlError("newmtl m\nKd 0.5 nan 0.5\n", 2, "non-finite");
}

TEST(ObjLoader, NonFiniteEmission) { ExpectMtlError("newmtl m\nKe inf 0 0\n", 2, "non-finite"); }

TEST(ObjLoader, ReflectanceWithTwoNumbers) { ExpectMtlError("newmtl m\nKd 0.5 0.5\n", 2, "3 numbers"); }

TEST(ObjLoader, DuplicateMaterialName) {
  ExpectMtlError("newmtl m\nKd 0.5 0.5 0.5\nnewmtl m\nKd 0.1 0.1 0.1\n", 3, "duplicate material 'm'");
}

TEST(ObjLoader, SingleReflectanceNumberMeansGrey) {
  // MTL: `Kd r` stands for `Kd r r r`; tinyobjloader alone would read `r 0 0`.
  ScratchDir dir;
  dir.Write("scene.mtl", "newmtl m\nKd 0.3\n");
  const std::string obj = dir.Write("scene.obj", std::string("mtllib scene.mtl\n") + kSquareVertices +
                                                     "usemtl m\nf 1 2 3\n");
  const rad::Scene scene = rad::LoadScene(obj);
  ExpectCorner(scene.materials[static_cast<size_t>(scene.faces[0].material)].reflectance, {0.3, 0.3, 0.3});
}

}  // namespace
