// An OpenFOAM case's mesh boundary (constant/polyMesh: points, faces, boundary; ASCII, as blockMesh and
// snappyHexMesh write it by default), and the files its `viewFactor` radiation model reads beside it. The case is
// serial (not decomposed): the view factors are computed once, for its boundary faces, before decomposePar.
#pragma once

#include <string>
#include <vector>

#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

struct MaterialsFile;

// The group whose patches OpenFOAM's viewFactor model (and viewFactorsGen) exchange radiation between.
inline constexpr const char *kViewFactorGroup = "viewFactorWall";

struct OpenFoamPatch {
  std::string name, type;
  std::vector<std::string> groups;  // inGroups
  long long startFace = 0, faceCount = 0;
  bool ViewFactorWall() const;
};

struct OpenFoamBoundary {
  std::string caseDir;                // the case: CASE/constant/polyMesh holds the mesh
  std::vector<OpenFoamPatch> patches;  // in the order of constant/polyMesh/boundary
};

// True when `path` is an OpenFOAM case (a folder with constant/polyMesh/boundary) or its polyMesh folder.
bool IsOpenFoamCase(const std::string &path);
// The case folder of `path` (the case itself, or the case of its constant/polyMesh folder).
std::string OpenFoamCaseDir(const std::string &path);

// constant/polyMesh/boundary. InputError naming the file and the problem (binary or compressed files included).
OpenFoamBoundary ReadOpenFoamBoundary(const std::string &path);

// The scene of the case's viewFactorWall patches: one polygon per boundary face, in patch order then face order
// (which is OpenFOAM's numbering of the view-factor faces), corners reversed so that the front side faces into
// the domain (OpenFOAM's boundary normals point out of it). Each patch is a material of its name, taken from
// `materials` when that names it (Kd, Ke, roles), else grey Kd 0.5.
Scene LoadOpenFoamScene(const std::string &path, const MaterialsFile &materials);

// The view factors between the case's viewFactorWall faces as its viewFactor model reads them, written into
// CASE/constant (each file whole or not at all): F (each face's nonzero view factors), globalFaceFaces (their
// faces), mapDist (one processor: every face local) and finalAgglom (each face its own coarse face, for every
// patch). `viewFactors` is K x K row-major over the K faces in the scene's order; `header` goes in a comment.
void WriteOpenFoamViewFactors(const OpenFoamBoundary &boundary, const std::vector<double> &viewFactors, size_t k,
                              const std::string &header);

}  // namespace rad
