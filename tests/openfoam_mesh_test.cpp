// OpenFOAM cases as scenes (io/openfoam_mesh.cpp), on a one-cell cube written here by hand as blockMesh would
// write it: the faces of the viewFactorWall patches only, in OpenFOAM's order, fronts facing into the cell (the
// file's normals point out of it), a material per patch; a faceCompactList gives the same scene; every bad case
// an InputError naming the file. The files its viewFactor model reads are checked against OpenFOAM itself in
// tests/cli/test_openfoam.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/openfoam_mesh.h"
#include "scene/scene.h"
#include "tests/scratch_dir.h"
#include "util/error.h"

namespace {

using ::testing::HasSubstr;
using rad::Vec3;

const char *const kHeader = "FoamFile\n{\n    version 2.0;\n    format ascii;\n    class %s;\n    object %s;\n}\n";

std::string Header(const std::string &cls, const std::string &object) {
  char text[256];
  std::snprintf(text, sizeof text, kHeader, cls.c_str(), object.c_str());
  return "/* a comment before the header */\n" + std::string(text) + "// * * * //\n";
}

// The unit cube as one cell: the floor (z = 0), the four sides, then the top; normals out of the cube.
const char *const kPoints = "8\n(\n(0 0 0)\n(1 0 0)\n(1 1 0)\n(0 1 0)\n(0 0 1)\n(1 0 1)\n(1 1 1)\n(0 1 1)\n)\n";
const char *const kFaces =
    "6\n(\n4(0 3 2 1)\n4(0 1 5 4)\n4(3 7 6 2)\n4(0 4 7 3)\n4(1 2 6 5)\n4(4 5 6 7)\n)\n";
const char *const kCompactFaces =
    "7\n(\n0 4 8 12 16 20 24\n)\n24\n(\n0 3 2 1 0 1 5 4 3 7 6 2 0 4 7 3 1 2 6 5 4 5 6 7\n)\n";
const char *const kBoundary =
    "3\n(\n    floor\n    {\n        type wall;\n        inGroups List<word> 2(viewFactorWall wall);\n"
    "        nFaces 1;\n        startFace 0;\n    }\n"
    "    sides { type wall; inGroups 1(viewFactorWall); nFaces 4; startFace 1; }\n"
    "    top { type patch; nFaces 1; startFace 5; }\n)\n";

class OpenFoamCase : public rad::test::ScratchDir {
 public:
  OpenFoamCase() : rad::test::ScratchDir("openfoam_case") {
    std::filesystem::create_directories(Path("constant/polyMesh"));
  }
  std::string Mesh(const std::string &name) const { return Path("constant/polyMesh/" + name); }
  void WriteMesh(const std::string &faces = kFaces, const std::string &facesClass = "faceList",
                 const std::string &boundary = kBoundary) const {
    Write("constant/polyMesh/points", Header("vectorField", "points") + kPoints);
    Write("constant/polyMesh/faces", Header(facesClass, "faces") + faces);
    Write("constant/polyMesh/boundary", Header("polyBoundaryMesh", "boundary") + boundary);
  }
  std::string Case() const { return Path(""); }
};

// Front-side normal of a face (corners counter-clockwise seen from the front).
Vec3 FrontNormal(const rad::Face &face) {
  Vec3 twice(0, 0, 0);
  for (size_t c = 0; c < face.corners.size(); ++c)
    twice = twice + rad::Cross(face.corners[c], face.corners[(c + 1) % face.corners.size()]);
  return twice / rad::Length(twice);
}

void ExpectTheCubesWalls(const rad::Scene &scene) {
  ASSERT_EQ(scene.faces.size(), 5u);  // the top is not in viewFactorWall
  const Vec3 centre(0.5, 0.5, 0.5);
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const rad::Face &face = scene.faces[f];
    EXPECT_EQ(face.polygon, int(f));
    Vec3 mid(0, 0, 0);
    for (const Vec3 &c : face.corners) mid = mid + c / double(face.corners.size());
    EXPECT_NEAR(rad::Dot(FrontNormal(face), centre - mid), 0.5, 1e-15) << "face " << f << " must face inward";
    EXPECT_EQ(scene.materials[size_t(face.material)].name, f == 0 ? "floor" : "sides");
  }
  EXPECT_EQ(scene.faces[0].corners[0].z, 0.0);                  // the floor first
  EXPECT_EQ(FrontNormal(scene.faces[0]).z, 1.0);                // facing up, into the cell
  EXPECT_EQ(FrontNormal(scene.faces[1]).y, 1.0);                // the y = 0 side faces +y
}

TEST(OpenFoamMesh, ViewFactorWallFacesFacingIntoTheDomain) {
  OpenFoamCase c;
  c.WriteMesh();
  EXPECT_TRUE(rad::IsOpenFoamCase(c.Case()));
  EXPECT_TRUE(rad::IsOpenFoamCase(c.Path("constant/polyMesh")));
  EXPECT_FALSE(rad::IsOpenFoamCase(c.Path("constant")));
  ExpectTheCubesWalls(rad::LoadScene(c.Case()));
  ExpectTheCubesWalls(rad::LoadScene(c.Path("constant/polyMesh")));

  const rad::OpenFoamBoundary b = rad::ReadOpenFoamBoundary(c.Case());
  ASSERT_EQ(b.patches.size(), 3u);
  EXPECT_TRUE(b.patches[0].ViewFactorWall());
  EXPECT_EQ(b.patches[0].groups, (std::vector<std::string>{"viewFactorWall", "wall"}));
  EXPECT_EQ(b.patches[1].startFace, 1);
  EXPECT_EQ(b.patches[1].faceCount, 4);
  EXPECT_FALSE(b.patches[2].ViewFactorWall());
  EXPECT_EQ(rad::OpenFoamCaseDir(c.Path("constant/polyMesh")), rad::OpenFoamCaseDir(c.Case()));
}

TEST(OpenFoamMesh, FaceCompactListGivesTheSameScene) {
  OpenFoamCase c;
  c.WriteMesh(kCompactFaces, "faceCompactList");
  ExpectTheCubesWalls(rad::LoadScene(c.Case()));
}

TEST(OpenFoamMesh, PatchesTakeTheirMaterialsByName) {
  OpenFoamCase c;
  c.WriteMesh();
  const std::string materials = c.Write("materials.json", R"({"floor": {"Kd": 0.25, "Ke": [1, 2, 3]}})");
  const rad::Scene scene = rad::LoadScene(std::vector<std::string>{c.Case()}, rad::SceneLoadOptions{false, materials});
  ASSERT_EQ(scene.faces.size(), 5u);
  const rad::Material &floor = scene.materials[size_t(scene.faces[0].material)];
  EXPECT_EQ(floor.name, "floor");
  EXPECT_EQ(floor.reflectance.x, 0.25);
  EXPECT_EQ(floor.emission.z, 3.0);
  EXPECT_EQ(scene.materials[size_t(scene.faces[1].material)].reflectance.x, 0.5);
}

// Each bad case: an InputError whose one line names `file` and says `problem`.
void ExpectRefused(const std::string &path, const std::string &file, const std::string &problem) {
  try {
    rad::LoadScene(path);
    ADD_FAILURE() << "accepted a case with " << problem;
  } catch (const rad::InputError &e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr(file));
    EXPECT_THAT(what, HasSubstr(problem));
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(OpenFoamMesh, BadCasesAreRefusedNamingTheFile) {
  OpenFoamCase c;
  c.WriteMesh(kFaces, "faceList", "1\n(\n top { type patch; nFaces 1; startFace 5; }\n)\n");
  ExpectRefused(c.Case(), c.Mesh("boundary"), "viewFactorWall");

  c.WriteMesh("6\n(\n4(0 3 2 1)\n4(0 1 5 4)\n4(3 7 6 2)\n4(0 4 7 3)\n4(1 2 6 9)\n4(4 5 6 7)\n)\n");
  ExpectRefused(c.Case(), c.Mesh("faces"), "point 9 is not among the 8 points");

  c.WriteMesh("4\n(\n4(0 3 2 1)\n4(0 1 5 4)\n4(3 7 6 2)\n4(0 4 7 3)\n)\n");
  ExpectRefused(c.Case(), c.Mesh("faces"), "has 4 faces, but the boundary's patches run to face 5");

  c.WriteMesh("6\n(\n4(0 3 2 1)\n3(0 1 5 4)\n)\n");
  ExpectRefused(c.Case(), c.Mesh("faces"), "says 3 points but lists 4");

  c.WriteMesh();
  c.Write("constant/polyMesh/points", Header("vectorField", "points") + "8\n(\n(0 0 0)\n(1 0 x)\n)\n");
  ExpectRefused(c.Case(), c.Mesh("points"), "expected a finite number but found 'x'");

  c.Write("constant/polyMesh/points",
          "FoamFile { version 2.0; format binary; class vectorField; object points; }\n8(....)");
  ExpectRefused(c.Case(), c.Mesh("points"), "foamFormatConvert");

  std::filesystem::rename(c.Mesh("points"), c.Mesh("points.gz"));
  ExpectRefused(c.Case(), c.Mesh("points.gz"), "gunzip");

  c.Write("constant/polyMesh/boundary", "just some text\n");
  ExpectRefused(c.Case(), c.Mesh("boundary"), "no FoamFile header");

  c.Write("constant/polyMesh/boundary", Header("polyBoundaryMesh", "boundary") + "1\n(\n floor { type wall; }\n)\n");
  ExpectRefused(c.Case(), c.Mesh("boundary"), "lacks nFaces or startFace");
}

}  // namespace
