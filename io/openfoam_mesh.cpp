// OpenFOAM's ASCII polyMesh (points, faces, boundary) as a scene (the view-factor files of its viewFactor model
// are written by io/openfoam_view_factors.cpp). Only what those files need is parsed: FoamFile headers, lists "N ( ... )", vectors "(x y z)", faces "n(a b c)" (or a faceCompactList),
// and the boundary's dictionaries.
#include "io/openfoam_mesh.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "io/scene_readers.h"
#include "util/error.h"

namespace rad {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void Fail(const std::string &where, const std::string &problem) { ThrowInputError(where, problem); }

// The tokens of an OpenFOAM dictionary or list file: punctuation ( ) { } ; [ ] one character each, quoted strings
// whole, anything else up to the next blank or punctuation; // and /* */ comments skipped.
class FoamTokens {
 public:
  explicit FoamTokens(const std::string &path) : path_(path) {
    if (!fs::exists(path) && fs::exists(path + ".gz"))
      Fail(path + ".gz", "compressed polyMesh files are not read; gunzip the case's constant/polyMesh first");
    std::string problem;
    text_ = ReadWholeFile(path, &problem);
    if (!problem.empty()) Fail(path, problem);
    ReadHeader();
  }

  const std::string &Path() const { return path_; }
  const std::string &Class() const { return class_; }
  bool AtEnd() {
    SkipBlanks();
    return pos_ >= text_.size();
  }

  std::string Next() {
    SkipBlanks();
    if (pos_ >= text_.size()) Fail(path_, "ends too early (line " + std::to_string(line_) + ")");
    const char c = text_[pos_];
    if (IsPunctuation(c)) {
      ++pos_;
      return std::string(1, c);
    }
    const size_t start = pos_;
    if (c == '"') {
      const size_t end = text_.find('"', pos_ + 1);
      if (end == std::string::npos) Fail(path_, "a string opened on line " + std::to_string(line_) + " is not closed");
      pos_ = end + 1;
      return text_.substr(start + 1, end - start - 1);
    }
    while (pos_ < text_.size() && !IsBlank(text_[pos_]) && !IsPunctuation(text_[pos_]) && !StartsComment()) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  void Expect(const std::string &token) {
    const std::string got = Next();
    if (got != token) Fail(path_, "expected '" + token + "' but found '" + got + "' (line " + std::to_string(line_) + ")");
  }

  long long Integer() {
    const std::string token = Next();
    long long v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size())
      Fail(path_, "expected an integer but found '" + token + "' (line " + std::to_string(line_) + ")");
    return v;
  }

  double Number() {
    const std::string token = Next();
    double v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(v))
      Fail(path_, "expected a finite number but found '" + token + "' (line " + std::to_string(line_) + ")");
    return v;
  }

  // The start of a list: "N (" gives N; "(" alone gives -1 (the items then run to the closing parenthesis).
  long long ListStart() {
    SkipBlanks();
    long long count = -1;
    if (pos_ < text_.size() && text_[pos_] != '(') {
      count = Integer();
      if (count < 0) Fail(path_, "a list of negative size (line " + std::to_string(line_) + ")");
    }
    SkipBlanks();
    if (pos_ < text_.size() && text_[pos_] == '{')
      Fail(path_, "a uniform list 'N{...}' (line " + std::to_string(line_) + ") where a mesh list is expected");
    Expect("(");
    return count;
  }

  bool PeekIs(char c) {
    SkipBlanks();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  std::string Where() const { return path_ + ": line " + std::to_string(line_); }

 private:
  static bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  static bool IsPunctuation(char c) {
    return c == '(' || c == ')' || c == '{' || c == '}' || c == ';' || c == '[' || c == ']';
  }
  bool StartsComment() const {
    return text_[pos_] == '/' && pos_ + 1 < text_.size() && (text_[pos_ + 1] == '/' || text_[pos_ + 1] == '*');
  }

  void SkipBlanks() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == '\n') ++line_;
      if (IsBlank(text_[pos_])) {
        ++pos_;
      } else if (StartsComment() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (StartsComment()) {
        const size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string::npos) Fail(path_, "a comment opened on line " + std::to_string(line_) + " is not closed");
        line_ += int(std::count(text_.begin() + long(pos_), text_.begin() + long(end), '\n'));
        pos_ = end + 2;
      } else {
        return;
      }
    }
  }

  // FoamFile { version 2.0; format ascii; class vectorField; ... }
  void ReadHeader() {
    if (Next() != "FoamFile") Fail(path_, "not an OpenFOAM file (no FoamFile header)");
    Expect("{");
    std::string format;
    for (std::string key = Next(); key != "}"; key = Next()) {
      std::string value;
      for (std::string t = Next(); t != ";"; t = Next()) value += (value.empty() ? "" : " ") + t;
      if (key == "format") format = value;
      if (key == "class") class_ = value;
    }
    if (format != "ascii")
      Fail(path_, "is written in " + (format.empty() ? std::string("an unstated format") : format) +
                      "; radiosity reads ASCII polyMesh files (set writeFormat ascii in system/controlDict and run "
                      "foamFormatConvert -constant)");
  }

  std::string path_, text_, class_;
  size_t pos_ = 0;
  int line_ = 1;
};

fs::path PolyMeshDir(const std::string &caseDir) { return fs::path(caseDir) / "constant" / "polyMesh"; }

std::vector<Vec3> ReadPoints(const std::string &path) {
  FoamTokens in(path);
  const long long count = in.ListStart();
  std::vector<Vec3> points;
  if (count > 0) points.reserve(size_t(std::min(count, 1LL << 20)));  // a count is not trusted with memory
  while (!in.PeekIs(')')) {
    in.Expect("(");
    Vec3 p;
    for (int k = 0; k < 3; ++k) p[k] = in.Number();
    in.Expect(")");
    points.push_back(p);
  }
  in.Expect(")");
  if (count >= 0 && (long long)points.size() != count)
    Fail(path, "says " + std::to_string(count) + " points but lists " + std::to_string(points.size()));
  return points;
}

// The faces numbered [first, end) of constant/polyMesh/faces (a faceList, or a faceCompactList: offsets then
// labels), as lists of point labels.
std::vector<std::vector<long long>> ReadFaces(const std::string &path, long long first, long long end) {
  FoamTokens in(path);
  std::vector<std::vector<long long>> faces;
  faces.reserve(size_t(std::clamp(end - first, 0LL, 1LL << 20)));  // counts from the boundary file, not trusted
  long long index = 0;
  if (in.Class() == "faceCompactList") {
    std::vector<long long> offsets;
    in.ListStart();
    while (!in.PeekIs(')')) offsets.push_back(in.Integer());
    in.Expect(")");
    std::vector<long long> labels;
    in.ListStart();
    while (!in.PeekIs(')')) labels.push_back(in.Integer());
    in.Expect(")");
    for (size_t f = 0; f + 1 < offsets.size(); ++f, ++index) {
      if (offsets[f] < 0 || offsets[f + 1] < offsets[f] || offsets[f + 1] > (long long)labels.size())
        Fail(path, "face " + std::to_string(f) + ": offsets out of order or past the labels");
      if (index >= first && index < end)
        faces.emplace_back(labels.begin() + offsets[f], labels.begin() + offsets[f + 1]);
    }
  } else {
    in.ListStart();
    while (!in.PeekIs(')')) {
      const long long corners = in.Integer();
      in.Expect("(");
      std::vector<long long> face;
      while (!in.PeekIs(')')) face.push_back(in.Integer());
      in.Expect(")");
      if ((long long)face.size() != corners)
        Fail(in.Where(), "face " + std::to_string(index) + " says " + std::to_string(corners) + " points but lists " +
                             std::to_string(face.size()));
      if (index >= first && index < end) faces.push_back(std::move(face));
      ++index;
    }
    in.Expect(")");
  }
  if (index < end)
    Fail(path, "has " + std::to_string(index) + " faces, but the boundary's patches run to face " + std::to_string(end));
  return faces;
}

std::string CaseOf(const std::string &path) {
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path trimmed = p.filename().empty() ? p.parent_path() : p;  // "case/" as "case"
  if (trimmed.filename() == "polyMesh" && trimmed.parent_path().filename() == "constant")
    return trimmed.parent_path().parent_path().string();
  return trimmed.string();
}

}  // namespace

bool OpenFoamPatch::ViewFactorWall() const {
  return std::find(groups.begin(), groups.end(), kViewFactorGroup) != groups.end();
}

bool IsOpenFoamCase(const std::string &path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(PolyMeshDir(CaseOf(path)) / "boundary", ec);
}

std::string OpenFoamCaseDir(const std::string &path) { return CaseOf(path); }

OpenFoamBoundary ReadOpenFoamBoundary(const std::string &path) {
  OpenFoamBoundary b;
  b.caseDir = CaseOf(path);
  const std::string file = (PolyMeshDir(b.caseDir) / "boundary").string();
  FoamTokens in(file);
  in.ListStart();
  while (!in.PeekIs(')')) {
    OpenFoamPatch patch;
    patch.name = in.Next();
    in.Expect("{");
    bool haveStart = false, haveCount = false;
    for (std::string key = in.Next(); key != "}"; key = in.Next()) {
      std::vector<std::string> value;
      for (std::string t = in.Next(); t != ";"; t = in.Next()) {
        if (t == "}") Fail(in.Where(), "patch '" + patch.name + "': entry '" + key + "' has no ';'");
        value.push_back(t);
      }
      auto integer = [&](long long *out) {
        long long v = -1;
        if (value.size() != 1 || std::from_chars(value[0].data(), value[0].data() + value[0].size(), v).ec != std::errc() ||
            v < 0)
          Fail(in.Where(), "patch '" + patch.name + "': " + key + " must be a count >= 0");
        *out = v;
      };
      if (key == "type" && !value.empty()) patch.type = value[0];
      if (key == "nFaces") integer(&patch.faceCount), haveCount = true;
      if (key == "startFace") integer(&patch.startFace), haveStart = true;
      if (key == "inGroups")  // "2(viewFactorWall wall)" or "List<word> 2(...)": the words inside the parentheses
        for (size_t k = 0; k < value.size(); ++k)
          if (k > 0 && value[k] != "(" && value[k] != ")" &&
              std::find(value.begin(), value.begin() + long(k), "(") != value.begin() + long(k))
            patch.groups.push_back(value[k]);
    }
    if (!haveStart || !haveCount) Fail(file, "patch '" + patch.name + "' lacks nFaces or startFace");
    b.patches.push_back(std::move(patch));
  }
  in.Expect(")");
  if (b.patches.empty()) Fail(file, "has no patches");
  return b;
}

Scene LoadOpenFoamScene(const std::string &path, const MaterialsFile &materials) {
  const OpenFoamBoundary boundary = ReadOpenFoamBoundary(path);
  const std::string boundaryFile = (PolyMeshDir(boundary.caseDir) / "boundary").string();
  long long first = -1, end = 0;
  for (const OpenFoamPatch &p : boundary.patches)
    if (p.ViewFactorWall() && p.faceCount > 0) {
      first = first < 0 ? p.startFace : std::min(first, p.startFace);
      end = std::max(end, p.startFace + p.faceCount);
    }
  if (first < 0)
    Fail(boundaryFile, std::string("no patch with faces is in the group '") + kViewFactorGroup +
                           "', the surfaces OpenFOAM's viewFactor model exchanges radiation between (add "
                           "'inGroups (" + kViewFactorGroup + ");' to them)");
  const std::vector<Vec3> points = ReadPoints((PolyMeshDir(boundary.caseDir) / "points").string());
  const std::string facesFile = (PolyMeshDir(boundary.caseDir) / "faces").string();
  const std::vector<std::vector<long long>> faces = ReadFaces(facesFile, first, end);

  Scene scene;
  scene.path = path;
  scene.materials.push_back(Material{"default", Vec3(0.5, 0.5, 0.5), Vec3(0, 0, 0)});
  for (const OpenFoamPatch &p : boundary.patches) {
    if (!p.ViewFactorWall() || p.faceCount == 0) continue;
    const auto named = materials.byName.find(p.name);
    if (named != materials.byName.end()) materials.used.insert(p.name);
    const int material = int(scene.materials.size());
    scene.materials.push_back(named != materials.byName.end() ? named->second
                                                              : Material{p.name, Vec3(0.5, 0.5, 0.5), Vec3(0, 0, 0)});
    for (long long f = p.startFace; f < p.startFace + p.faceCount; ++f) {
      const std::vector<long long> &labels = faces[size_t(f - first)];
      const std::string where = facesFile + ": face " + std::to_string(f) + " (patch '" + p.name + "')";
      if (labels.size() < 3) Fail(where, "has fewer than 3 points");
      Face face;
      face.material = material;
      face.polygon = int(scene.faces.size());
      for (auto k = labels.rbegin(); k != labels.rend(); ++k) {  // reversed: the front faces into the domain
        if (*k < 0 || *k >= (long long)points.size())
          Fail(where, "point " + std::to_string(*k) + " is not among the " + std::to_string(points.size()) + " points");
        face.corners.push_back(points[size_t(*k)]);
      }
      scene.faces.push_back(std::move(face));
    }
  }
  return scene;
}

}  // namespace rad
