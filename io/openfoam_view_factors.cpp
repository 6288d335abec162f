// The files OpenFOAM's viewFactor radiation model reads beside a case's mesh (the layout viewFactorsGen writes,
// read by viewFactor::initialise): F, globalFaceFaces, mapDist and finalAgglom in CASE/constant.
#include <filesystem>
#include <sstream>

#include "io/openfoam_mesh.h"
#include "util/atomic_file.h"

namespace rad {

namespace fs = std::filesystem;

void WriteOpenFoamViewFactors(const OpenFoamBoundary &boundary, const std::vector<double> &viewFactors, size_t k,
                              const std::string &header) {
  const fs::path constant = fs::path(boundary.caseDir) / "constant";
  auto begin = [&](std::ostringstream &out, const char *cls, const char *object) {
    out << "/* " << header << " */\n"
        << "FoamFile\n{\n    version     2.0;\n    format      ascii;\n    class       " << cls
        << ";\n    location    \"constant\";\n    object      " << object << ";\n}\n\n";
  };
  std::ostringstream f, faces, map, agglom;
  f.precision(17);
  begin(f, "scalarListList", "F");
  begin(faces, "labelListList", "globalFaceFaces");
  f << k << "\n(\n";
  faces << k << "\n(\n";
  for (size_t i = 0; i < k; ++i) {
    std::vector<size_t> seen;
    for (size_t j = 0; j < k; ++j)
      if (viewFactors[i * k + j] != 0) seen.push_back(j);
    f << seen.size() << "(";
    faces << seen.size() << "(";
    for (size_t n = 0; n < seen.size(); ++n) {
      f << (n ? " " : "") << viewFactors[i * k + seen[n]];
      faces << (n ? " " : "") << seen[n];
    }
    f << ")\n";
    faces << ")\n";
  }
  f << ")\n";
  faces << ")\n";
  // mapDistribute of one processor: construct size, subMap and constructMap (every face local, in order), no flips,
  // no transforms.
  begin(map, "mapDistribute", "mapDist");
  std::ostringstream identity;
  identity << k << "(";
  for (size_t i = 0; i < k; ++i) identity << (i ? " " : "") << i;
  identity << ")";
  map << k << "\n1(" << identity.str() << ")\n1(" << identity.str() << ")\n0 0\n0()\n0()\n";
  begin(agglom, "labelListList", "finalAgglom");
  agglom << boundary.patches.size() << "\n(\n";
  for (const OpenFoamPatch &p : boundary.patches) {
    agglom << p.faceCount << "(";
    for (long long i = 0; i < p.faceCount; ++i) agglom << (i ? " " : "") << i;
    agglom << ")\n";
  }
  agglom << ")\n";
  WriteFileAtomically((constant / "finalAgglom").string(), agglom.str(), "OpenFOAM's face agglomeration");
  WriteFileAtomically((constant / "mapDist").string(), map.str(), "OpenFOAM's map of the view-factor faces");
  WriteFileAtomically((constant / "globalFaceFaces").string(), faces.str(), "OpenFOAM's view-factor faces");
  WriteFileAtomically((constant / "F").string(), f.str(), "OpenFOAM's view factors");
}

}  // namespace rad
