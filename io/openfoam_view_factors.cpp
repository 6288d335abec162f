// The files OpenFOAM's viewFactor radiation model reads beside a case's mesh (the layout viewFactorsGen writes,
// read by viewFactor::initialise): F, globalFaceFaces, mapDist and finalAgglom in CASE/constant.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "io/openfoam_mesh.h"
#include "util/atomic_file.h"

namespace rad {

namespace fs = std::filesystem;

namespace {

// Writes `path` (whole or not at all) from pieces of text: `next(piece)` appends the next one and returns whether
// more follow. A file of up to K^2 numbers is so never held whole in memory.
void WriteInPieces(const fs::path &path, const std::string &what, const std::function<bool(std::string &)> &next) {
  WriteAtomically(path.string(), what, [&](const std::string &partial) -> std::string {
    std::FILE *out = std::fopen(partial.c_str(), "wb");
    if (out == nullptr) return std::strerror(errno);
    std::string piece;
    for (bool more = true; more;) {
      piece.clear();
      more = next(piece);
      if (std::fwrite(piece.data(), 1, piece.size(), out) != piece.size()) {
        const std::string why = std::strerror(errno);
        std::fclose(out);
        return why;
      }
    }
    return std::fclose(out) == 0 ? "" : std::strerror(errno);
  });
}

std::string Header(const std::string &comment, const char *cls, const char *object) {
  return "/* " + comment + " */\nFoamFile\n{\n    version     2.0;\n    format      ascii;\n    class       " + cls +
         ";\n    location    \"constant\";\n    object      " + object + ";\n}\n\n";
}

// A list of K lists, row by row: `row(i, text)` appends list i as "n(a b c)".
void WriteListOfLists(const fs::path &path, const std::string &what, const std::string &header, size_t k,
                      const std::function<void(size_t, std::string &)> &row) {
  size_t next = 0;
  WriteInPieces(path, what, [&](std::string &piece) {
    if (next == 0) piece = header + std::to_string(k) + "\n(\n";
    if (next < k) {
      row(next++, piece);
      piece += "\n";
      return true;
    }
    piece += ")\n";
    return false;
  });
}

// "v" in the shortest form that reads back as the same double.
void AppendNumber(std::string &text, double v) {
  char number[32];
  const auto end = std::to_chars(number, number + sizeof number, v).ptr;
  text.append(number, end);
}

}  // namespace

void WriteOpenFoamViewFactors(const OpenFoamBoundary &boundary, const std::vector<double> &viewFactors, size_t k,
                              const std::string &header) {
  const fs::path constant = fs::path(boundary.caseDir) / "constant";
  // finalAgglom: per patch, each face its own coarse face.
  std::string agglom = Header(header, "labelListList", "finalAgglom") + std::to_string(boundary.patches.size()) +
                       "\n(\n";
  for (const OpenFoamPatch &p : boundary.patches) {
    agglom += std::to_string(p.faceCount) + "(";
    for (long long i = 0; i < p.faceCount; ++i) agglom += (i ? " " : "") + std::to_string(i);
    agglom += ")\n";
  }
  agglom += ")\n";
  WriteFileAtomically((constant / "finalAgglom").string(), agglom, "OpenFOAM's face agglomeration");
  // mapDist: a mapDistribute of one processor: construct size, subMap and constructMap (every face local, in
  // order), no flips, no transforms.
  std::string identity = std::to_string(k) + "(";
  for (size_t i = 0; i < k; ++i) identity += (i ? " " : "") + std::to_string(i);
  identity += ")";
  WriteFileAtomically((constant / "mapDist").string(),
                      Header(header, "mapDistribute", "mapDist") + std::to_string(k) + "\n1(" + identity + ")\n1(" +
                          identity + ")\n0 0\n0()\n0()\n",
                      "OpenFOAM's map of the view-factor faces");
  // globalFaceFaces and F: each face's nonzero view factors and the faces they are to, row by row.
  auto seen = [&](size_t i) {
    std::vector<size_t> columns;
    for (size_t j = 0; j < k; ++j)
      if (viewFactors[i * k + j] != 0) columns.push_back(j);
    return columns;
  };
  WriteListOfLists(constant / "globalFaceFaces", "OpenFOAM's view-factor faces",
                   Header(header, "labelListList", "globalFaceFaces"), k, [&](size_t i, std::string &text) {
                     const std::vector<size_t> columns = seen(i);
                     text += std::to_string(columns.size()) + "(";
                     for (size_t n = 0; n < columns.size(); ++n) text += (n ? " " : "") + std::to_string(columns[n]);
                     text += ")";
                   });
  WriteListOfLists(constant / "F", "OpenFOAM's view factors", Header(header, "scalarListList", "F"), k,
                   [&](size_t i, std::string &text) {
                     const std::vector<size_t> columns = seen(i);
                     text += std::to_string(columns.size()) + "(";
                     for (size_t n = 0; n < columns.size(); ++n) {
                       if (n) text += ' ';
                       AppendNumber(text, viewFactors[i * k + columns[n]]);
                     }
                     text += ")";
                   });
}

}  // namespace rad
