// OBJ + MTL reading. tinyobjloader does the parsing; this file adds what it lacks for a physics input:
// line numbers in messages, errors where it only warns or silently substitutes values, and geometric
// validation of every polygon. Our own scan of the text runs alongside tinyobjloader and the two are
// cross-checked (counts, indices, values), so that a disagreement can never slip through as wrong data.
#include <tiny_obj_loader.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "io/scene_readers.h"
#include "scene/scene.h"
#include "util/error.h"
#include "util/vec3.h"

namespace rad {
namespace {

// All tolerances are relative so that the unit of the model (mm, m) does not matter.
constexpr double kParseAgreement = 1e-9;        // tinyobjloader's number parser is not correctly rounded
constexpr size_t kMaxCorners = 255;             // tinyobjloader stores corner counts as unsigned char


std::string FileAndLine(const std::string &file, int line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

[[noreturn]] void Fail(const std::string &file, int line, const std::string &problem) {
  ThrowInputError(FileAndLine(file, line), problem);
}


std::string Format(Vec3 v) {
  std::ostringstream out;
  out << v.x << " " << v.y << " " << v.z;
  return out.str();
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::string ReadWholeFile(const std::string &path, std::string *problem) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    *problem = "cannot open file (" + (ec ? ec.message() : std::string("No such file or directory")) + ")";
    return {};
  }
  if (!std::filesystem::is_regular_file(status)) {
    *problem = "cannot open file (not a regular file)";
    return {};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *problem = std::string("cannot open file (") + std::strerror(errno) + ")";
    return {};
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    *problem = "cannot read file";
    return {};
  }
  problem->clear();
  return content.str();
}

namespace {

// Splits lines the way tinyobjloader does (\n, \r\n and a lone \r each end one) so that line numbers agree,
// and removes what neither parser should see: a UTF-8 byte order mark (it would hide the first statement),
// `#` comments (tinyobjloader rejects `f 1 2 3 # floor` and reads `newmtl red # x` as a name with spaces)
// and trailing blanks. A `#` glued to a word is kept, since names may contain it. A line ending in a backslash
// continues on the next (the OBJ spec's continuation, which tinyobjloader does not read): the statement is
// joined at its first line and the lines it took are left empty, so that every other line keeps its number.
std::vector<std::string> CleanLines(const std::string &content) {
  std::vector<std::string> lines;
  long continued = -1;  // the line a trailing backslash continues, or -1
  size_t pos = content.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (pos < content.size()) {
    size_t end = pos;
    while (end < content.size() && content[end] != '\n' && content[end] != '\r') ++end;
    std::string line = content.substr(pos, end - pos);
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '#' && (i == 0 || IsBlank(line[i - 1]))) {
        line.erase(i);
        break;
      }
    }
    while (!line.empty() && IsBlank(line.back())) line.pop_back();
    const long target = continued >= 0 ? continued : long(lines.size());
    if (continued >= 0) {
      lines[size_t(continued)] += " " + line;
      lines.emplace_back();
    } else {
      lines.push_back(line);
    }
    std::string &statement = lines[size_t(target)];
    continued = !statement.empty() && statement.back() == '\\' ? target : -1;
    if (continued >= 0) {
      statement.pop_back();
      while (!statement.empty() && IsBlank(statement.back())) statement.pop_back();
    }
    if (end < content.size() && content[end] == '\r' && end + 1 < content.size() && content[end + 1] == '\n') ++end;
    pos = end + 1;
  }
  return lines;
}

std::string JoinLines(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines) text += line + "\n";
  return text;
}

std::vector<std::string> SplitBlanks(const std::string &line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && IsBlank(line[pos])) ++pos;
    size_t end = pos;
    while (end < line.size() && !IsBlank(line[end])) ++end;
    if (end > pos) words.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

// What tinyobjloader takes as the argument of `mtllib`/`newmtl`: everything after the keyword and exactly
// one blank. Mirrored exactly so that our names are its names.
std::string RestAfterKeyword(const std::string &line, size_t keywordLength) {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || start + keywordLength + 1 > line.size()) return {};
  return line.substr(start + keywordLength + 1);
}

// tinyobjloader's SplitString(' ', '\\'): blank-separated, backslash escapes; the last piece is always kept.
std::vector<std::string> SplitLibraryNames(const std::string &rest) {
  std::vector<std::string> names;
  std::string name;
  bool escaping = false;
  for (char c : rest) {
    if (escaping) {
      escaping = false;
    } else if (c == '\\') {
      escaping = true;
      continue;
    } else if (c == ' ') {
      if (!name.empty()) names.push_back(name);
      name.clear();
      continue;
    }
    name += c;
  }
  names.push_back(name);
  return names;
}

enum class NumberKind { kFinite, kNonFinite, kMalformed };

// Locale-independent and strict (the whole word must be a number), unlike tinyobjloader, which reads
// `1,5` as 1 and `nan`/`inf` as 0 without a word. long double so that 1e999 is seen as too large rather than
// as a parse failure.
NumberKind ParseNumber(const std::string &word, double *value) {
  const char *begin = word.data();
  const char *end = begin + word.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && (*begin == '+' || *begin == '-')) return NumberKind::kMalformed;
  }
  long double wide = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, wide);
  if (begin == end || ptr != end) return NumberKind::kMalformed;
  if (ec == std::errc::result_out_of_range) return NumberKind::kNonFinite;
  if (ec != std::errc()) return NumberKind::kMalformed;
  if (!std::isfinite(wide) || std::fabs(wide) > static_cast<long double>(DBL_MAX)) return NumberKind::kNonFinite;
  *value = static_cast<double>(wide);
  return NumberKind::kFinite;
}

bool ParseInteger(const std::string &text, long *value) {
  const char *begin = text.data();
  const char *end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || *begin == '+') return false;
  const auto [ptr, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && ptr == end;
}

bool Agrees(double ours, double theirs) {
  return std::fabs(ours - theirs) <= kParseAgreement * std::max(std::fabs(ours), std::fabs(theirs)) + 1e-300;
}

// ---- Our own scan of the OBJ text ----------------------------------------------------------------------

struct LibStatement {
  int line = 0;
  std::vector<std::string> names;  // as written (after unescaping)
};

struct UseStatement {
  int line = 0;
  std::string name;
  size_t libsBefore = 0;  // how many `mtllib` statements precede it: materials become known in file order
};

struct ScannedFace {
  int line = 0;
  std::vector<long> rawIndices;  // as written: 1-based, or negative = relative to verticesBefore
  int verticesBefore = 0;
  std::vector<int> corners;      // resolved 0-based vertex indices
  int use = -1;                  // index into ObjText::uses of the `usemtl` in force, -1 = none
};

struct ObjText {
  std::vector<std::string> lines;
  std::vector<Vec3> vertices;  // our own, strictly parsed, values
  std::vector<int> vertexLines;
  std::vector<ScannedFace> faces;
  std::vector<LibStatement> libs;
  std::vector<UseStatement> uses;
  std::vector<std::string> warnings;  // for Scene::warnings
};

void ScanVertex(const std::string &file, int line, const std::vector<std::string> &words, ObjText *obj) {
  if (words.size() < 4) Fail(file, line, "vertex needs 3 coordinates (x y z)");
  Vec3 position;
  for (int k = 0; k < 3; ++k) {
    const std::string &word = words[static_cast<size_t>(k) + 1];
    switch (ParseNumber(word, &position[k])) {
      case NumberKind::kFinite: break;
      case NumberKind::kNonFinite: Fail(file, line, "non-finite vertex coordinate " + Quote(word));
      case NumberKind::kMalformed: Fail(file, line, "malformed vertex coordinate " + Quote(word));
    }
  }
  obj->vertices.push_back(position);
  obj->vertexLines.push_back(line);
}

// Accepts `v`, `v/vt`, `v//vn`, `v/vt/vn` as tinyobjloader does; it fails the whole file on a zero or
// non-numeric texture/normal index, so those are reported here with the line.
long ParseCornerReference(const std::string &file, int line, const std::string &word) {
  std::vector<std::string> parts(1);
  for (char c : word) {
    if (c == '/') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  long vertex = 0;
  bool ok = parts.size() <= 3 && ParseInteger(parts[0], &vertex);
  for (size_t k = 1; ok && k < parts.size(); ++k) {
    long other = 0;
    const bool emptyTexcoord = k == 1 && parts.size() == 3 && parts[1].empty();
    ok = emptyTexcoord || (ParseInteger(parts[k], &other) && other != 0);
  }
  if (!ok) Fail(file, line, "malformed face vertex reference " + Quote(word));
  return vertex;
}

void ScanFace(const std::string &file, int line, const std::vector<std::string> &words, ObjText *obj) {
  const size_t count = words.size() - 1;
  if (count < 3) {
    Fail(file, line, "face has " + std::to_string(count) + " vertices, fewer than 3");
  }
  if (count > kMaxCorners) {
    Fail(file, line, "face has " + std::to_string(count) + " vertices, more than the supported " +
                         std::to_string(kMaxCorners));
  }
  ScannedFace face;
  face.line = line;
  face.verticesBefore = static_cast<int>(obj->vertices.size());
  face.use = obj->uses.empty() ? -1 : static_cast<int>(obj->uses.size()) - 1;
  for (size_t k = 1; k < words.size(); ++k) face.rawIndices.push_back(ParseCornerReference(file, line, words[k]));
  obj->faces.push_back(face);
}

// The file `mtllib name` stands for: `name` relative to the OBJ's folder; when that does not exist, the file of
// the same name next to the OBJ (published scenes often name a folder of their author's machine). `moved`
// tells which was taken.
std::string LibraryPath(const std::string &objDir, const std::string &name, bool *moved) {
  const std::string path = std::filesystem::path(name).is_absolute() ? name : objDir + name;
  *moved = false;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  const std::string beside = objDir + std::filesystem::path(name).filename().string();
  if (beside != path && std::filesystem::is_regular_file(beside, ec)) {
    *moved = true;
    return beside;
  }
  return path;
}

void ScanLibrary(const std::string &file, int line, const std::string &text, const std::string &objDir,
                 ObjText *obj) {
  LibStatement lib;
  lib.line = line;
  lib.names = SplitLibraryNames(RestAfterKeyword(text, 6));
  for (const std::string &name : lib.names) {
    if (name.empty()) Fail(file, line, "mtllib names an empty material file name");
    bool moved = false;
    const std::string path = LibraryPath(objDir, name, &moved);
    std::string problem;
    ReadWholeFile(path, &problem);
    if (!problem.empty()) Fail(file, line, "material library " + Quote(path) + ": " + problem);
    if (moved)
      obj->warnings.push_back(file + ":" + std::to_string(line) + ": material library " + Quote(name) +
                              " not found; read " + Quote(path) + " next to the OBJ file instead");
  }
  obj->libs.push_back(lib);
}

// Statements are recognised exactly as tinyobjloader recognises them (keyword followed by a blank), except
// that a bare keyword without arguments, which it silently skips, is an error here.
ObjText ScanObj(const std::string &file, const std::string &objDir, std::vector<std::string> lines) {
  ObjText obj;
  obj.lines = std::move(lines);
  for (size_t i = 0; i < obj.lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    const std::string &text = obj.lines[i];
    const std::vector<std::string> words = SplitBlanks(text);
    if (words.empty()) continue;
    const std::string &keyword = words[0];
    if (keyword == "v") {
      ScanVertex(file, line, words, &obj);
    } else if (keyword == "f") {
      ScanFace(file, line, words, &obj);
    } else if (keyword == "mtllib") {
      if (words.size() < 2) Fail(file, line, "mtllib without a file name");
      ScanLibrary(file, line, text, objDir, &obj);
    } else if (keyword.compare(0, 6, "usemtl") == 0) {
      // tinyobjloader takes `usemtlX` as `usemtl X`; better to refuse it than to guess.
      if (keyword != "usemtl") Fail(file, line, "unknown statement " + Quote(keyword));
      if (words.size() < 2) Fail(file, line, "usemtl without a material name");
      obj.uses.push_back({line, words[1], obj.libs.size()});
    }
  }
  return obj;
}

void ResolveCorners(const std::string &file, ObjText *obj) {
  const long total = static_cast<long>(obj->vertices.size());
  for (ScannedFace &face : obj->faces) {
    for (long raw : face.rawIndices) {
      long index = -1;
      std::string range;
      if (raw > 0) {
        index = raw - 1;
        range = "the file has " + std::to_string(total) + " vertices";
      } else if (raw < 0) {
        index = face.verticesBefore + raw;
        range = "relative to the " + std::to_string(face.verticesBefore) + " vertices before this line";
      } else {
        range = "OBJ indices start at 1";
      }
      if (index < 0 || index >= total) {
        Fail(file, face.line, "vertex index " + std::to_string(raw) + " out of range (" + range + ")");
      }
      face.corners.push_back(static_cast<int>(index));
    }
  }
}

// ---- MTL files, read through tinyobjloader's MaterialReader hook ---------------------------------------

struct MtlBlock {  // one `newmtl` section as our own scan saw it
  std::string name;
  int line = 0;
  int kdLine = 0;  // 0: no Kd given
  int keLine = 0;
  std::vector<std::string> kd, ke;  // words after the keyword; the last occurrence wins, as in tinyobjloader
};

struct MaterialOrigin {  // where tinyobjloader's material k came from
  std::string path;
  MtlBlock block;
};

std::vector<MtlBlock> ScanMtl(const std::vector<std::string> &lines) {
  std::vector<MtlBlock> blocks;
  MtlBlock beforeFirst;  // statements before any `newmtl`: tinyobjloader drops them once a newmtl follows
  for (size_t i = 0; i < lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    const std::vector<std::string> words = SplitBlanks(lines[i]);
    if (words.empty()) continue;
    MtlBlock &current = blocks.empty() ? beforeFirst : blocks.back();
    if (words[0] == "newmtl" && words.size() > 1) {
      MtlBlock block;
      block.name = RestAfterKeyword(lines[i], 6);
      block.line = line;
      blocks.push_back(block);
    } else if (words[0] == "Kd") {
      current.kd.assign(words.begin() + 1, words.end());
      current.kdLine = line;
    } else if (words[0] == "Ke") {
      current.ke.assign(words.begin() + 1, words.end());
      current.keLine = line;
    }
  }
  return blocks;
}

// tinyobjloader asks for one file per `mtllib` line (the first not yet loaded) and stops there, although a
// line may name several. This reader loads every file of that line, and records for each material which
// file and line it came from, so that material errors can point into the MTL.
class SceneMaterialReader final : public tinyobj::MaterialReader {
 public:
  SceneMaterialReader(std::string objDir, const std::vector<LibStatement> &libs)
      : objDir_(std::move(objDir)), libs_(libs) {}

  bool operator()(const std::string &matId, std::vector<tinyobj::material_t> *materials,
                  std::map<std::string, int> *matMap, std::string *warn, std::string *err) override {
    // Mirror tinyobjloader's set of names it considers loaded to find the `mtllib` line it is processing.
    const LibStatement *current = nullptr;
    for (; nextLib_ < libs_.size() && current == nullptr; ++nextLib_) {
      for (const std::string &name : libs_[nextLib_].names) {
        if (reported_.count(name) == 0) {
          if (name == matId) current = &libs_[nextLib_];
          break;
        }
      }
    }
    reported_.insert(matId);
    bool ok = true;
    if (current == nullptr) {
      ok = LoadFile(matId, materials, matMap, warn, err);
    } else {
      for (const std::string &name : current->names) ok = LoadFile(name, materials, matMap, warn, err) && ok;
    }
    return ok;
  }

  const std::vector<MaterialOrigin> &Origins() const { return origins_; }
  // Material names defined by each library, keyed by the name used in `mtllib`.
  const std::map<std::string, std::vector<std::string>> &NamesByLibrary() const { return namesByLibrary_; }
  // Exceptions must not cross tinyobjloader's frames, so problems wait here until it returns.
  const std::string &Problem() const { return problem_; }

 private:
  bool LoadFile(const std::string &name, std::vector<tinyobj::material_t> *materials,
                std::map<std::string, int> *matMap, std::string *warn, std::string *err) {
    if (namesByLibrary_.count(name) != 0) return true;
    bool moved = false;  // ScanLibrary has said so
    const std::string path = LibraryPath(objDir_, name, &moved);
    std::string problem;
    const std::string content = ReadWholeFile(path, &problem);
    if (!problem.empty()) {
      SetProblem(path, 0, problem);
      return false;
    }
    const std::vector<std::string> lines = CleanLines(content);
    const std::vector<MtlBlock> blocks = ScanMtl(lines);
    const size_t before = materials->size();
    std::istringstream in(JoinLines(lines));
    std::string mtlWarn;
    tinyobj::LoadMtl(matMap, materials, &in, &mtlWarn, err);
    if (warn != nullptr) *warn += mtlWarn;
    // Without any `newmtl` tinyobjloader still adds one nameless material; it is unusable and left out later.
    const size_t expected = blocks.empty() ? 1 : blocks.size();
    if (materials->size() - before != expected) {
      SetProblem(path, 0, "cannot parse material file (tinyobjloader read " +
                              std::to_string(materials->size() - before) + " materials, expected " +
                              std::to_string(expected) + ")");
      return false;
    }
    std::vector<std::string> &names = namesByLibrary_[name];
    for (size_t k = 0; k < expected; ++k) {
      const MtlBlock block = blocks.empty() ? MtlBlock{} : blocks[k];
      if ((*materials)[before + k].name != block.name) {
        SetProblem(path, block.line, "cannot parse material " + Quote(block.name));
        return false;
      }
      if (!block.name.empty()) names.push_back(block.name);
      origins_.push_back({path, block});
    }
    return true;
  }

  void SetProblem(const std::string &file, int line, const std::string &problem) {
    if (!problem_.empty()) return;  // the first one is the one to report
    problem_ = file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem;
  }

  std::string objDir_;
  const std::vector<LibStatement> &libs_;
  size_t nextLib_ = 0;
  std::set<std::string> reported_;
  std::map<std::string, std::vector<std::string>> namesByLibrary_;
  std::vector<MaterialOrigin> origins_;
  std::string problem_;
};

// Kd or Ke: three numbers, or one standing for all three (MTL spec; tinyobjloader would read 0 for g and b).
Vec3 MaterialColor(const std::string &path, int line, const char *keyword, const std::string &material,
                   const std::vector<std::string> &words, const tinyobj::real_t theirs[3]) {
  if (words.size() != 1 && words.size() != 3) {
    Fail(path, line, std::string(keyword) + " needs 3 numbers (r g b) in material " + Quote(material));
  }
  Vec3 color;
  for (size_t k = 0; k < words.size(); ++k) {
    double value = 0;
    switch (ParseNumber(words[k], &value)) {
      case NumberKind::kFinite: break;
      case NumberKind::kNonFinite:
        Fail(path, line, "non-finite " + std::string(keyword) + " value " + Quote(words[k]) + " in material " +
                             Quote(material));
      case NumberKind::kMalformed:
        Fail(path, line, "malformed " + std::string(keyword) + " value " + Quote(words[k]) + " in material " +
                             Quote(material));
    }
    if (words.size() == 3 && !Agrees(value, static_cast<double>(theirs[k]))) {
      Fail(path, line, std::string(keyword) + " value " + Quote(words[k]) + " not understood in material " +
                           Quote(material));
    }
    color[static_cast<int>(k)] = value;
  }
  if (words.size() == 1) color = Vec3(color.x, color.x, color.x);
  return color;
}

// Builds Scene::materials: index 0 is always the built-in default (for faces before any `usemtl`), then
// every named material in load order. Returns tinyobjloader's material index -> ours (-1: left out).
std::vector<int> BuildMaterials(const std::vector<tinyobj::material_t> &materials,
                                const std::vector<MaterialOrigin> &origins, std::vector<Material> *out,
                                std::vector<std::string> *warnings) {
  out->clear();
  out->push_back(Material{"default", Vec3(0.5, 0.5, 0.5), Vec3(0, 0, 0)});
  std::vector<int> sceneIndex(materials.size(), -1);
  std::map<std::string, size_t> firstByName;
  for (size_t i = 0; i < materials.size(); ++i) {
    const MtlBlock &block = origins[i].block;
    const std::string &path = origins[i].path;
    if (block.name.empty()) continue;
    // tinyobjloader keeps the first of two equal names, other tools the last: refuse to guess.
    const auto [first, isNew] = firstByName.emplace(block.name, i);
    if (!isNew) {
      const MaterialOrigin &other = origins[first->second];
      Fail(path, block.line, "duplicate material " + Quote(block.name) + " (also defined at " + other.path + ":" +
                                 std::to_string(other.block.line) + ")");
    }
    Material material;
    material.name = block.name;
    if (block.kdLine > 0) {
      material.reflectance = MaterialColor(path, block.kdLine, "Kd", block.name, block.kd, materials[i].diffuse);
    }
    if (block.keLine > 0) {
      material.emission = MaterialColor(path, block.keLine, "Ke", block.name, block.ke, materials[i].emission);
    }
    // Kd 1 is in most loaders' test models; it reflects everything, so a closed scene of such surfaces has no
    // finite radiosity, which the solver reports: a warning here.
    bool absorbsNothing = false;
    for (int k = 0; k < 3; ++k) {
      if (!(material.reflectance[k] >= 0 && material.reflectance[k] <= 1)) {
        Fail(path, block.kdLine, "reflectance Kd " + Format(material.reflectance) + " outside [0,1] in material " +
                                     Quote(block.name));
      }
      absorbsNothing = absorbsNothing || material.reflectance[k] == 1;
      if (!(material.emission[k] >= 0)) {
        Fail(path, block.keLine, "negative emission Ke " + Format(material.emission) + " in material " +
                                     Quote(block.name));
      }
    }
    if (absorbsNothing)
      warnings->push_back(path + ":" + std::to_string(block.kdLine) + ": material " + Quote(block.name) +
                          " has reflectance Kd " + Format(material.reflectance) +
                          ": a channel of 1 absorbs nothing (a closed scene of it has no finite radiosity)");
    sceneIndex[i] = static_cast<int>(out->size());
    out->push_back(material);
  }
  return sceneIndex;
}

// ---- Checks after tinyobjloader has run ----------------------------------------------------------------

int FirstUseLine(const ObjText &obj, const std::string &name) {
  for (const UseStatement &use : obj.uses) {
    if (use.name == name) return use.line;
  }
  return 0;
}

// Materials become usable at the `mtllib` that loads them, as in tinyobjloader, which silently falls back to
// "no material" for an unknown name.
void CheckUsesKnown(const std::string &file, const ObjText &obj,
                    const std::map<std::string, std::vector<std::string>> &namesByLibrary) {
  std::set<std::string> known;
  size_t libsSeen = 0;
  for (const UseStatement &use : obj.uses) {
    for (; libsSeen < use.libsBefore; ++libsSeen) {
      for (const std::string &library : obj.libs[libsSeen].names) {
        const auto it = namesByLibrary.find(library);
        if (it != namesByLibrary.end()) known.insert(it->second.begin(), it->second.end());
      }
    }
    if (known.count(use.name) == 0) {
      Fail(file, use.line, "unknown material " + Quote(use.name) +
                               (use.libsBefore == 0 ? " (no mtllib before this line)"
                                                    : " (not defined in the MTL files loaded before this line)"));
    }
  }
}

// tinyobjloader reports several real problems only as warnings. Our scan has already reported them with a
// line number; this is the backstop. Its other warnings are harmless here: both `d` and `Tr` given, empty
// group names, normal or texture-coordinate indices out of range (neither is used).
void CheckWarnings(const std::string &file, const ObjText &obj, const std::string &warn) {
  const size_t unknown = warn.find("material [ '");
  if (unknown != std::string::npos) {
    const size_t start = unknown + std::strlen("material [ '");
    const size_t end = warn.find("' ]", start);
    const std::string name = warn.substr(start, end == std::string::npos ? std::string::npos : end - start);
    Fail(file, FirstUseLine(obj, name), "unknown material " + Quote(name));
  }
  if (warn.find("Material file [") != std::string::npos || warn.find("Failed to load material") != std::string::npos) {
    Fail(file, 0, "cannot load a material library named by mtllib");
  }
  if (warn.find("Vertex indices out of bounds") != std::string::npos ||
      warn.find("Face with invalid vertex index") != std::string::npos) {
    Fail(file, 0, "vertex index out of range");
  }
  if (warn.find("Degenerated face") != std::string::npos) Fail(file, 0, "face has fewer than 3 vertices");
}

void CheckVertices(const std::string &file, const ObjText &obj, const tinyobj::attrib_t &attrib) {
  if (attrib.vertices.size() != 3 * obj.vertices.size()) {
    Fail(file, 0, "cannot parse vertices (tinyobjloader read " + std::to_string(attrib.vertices.size() / 3) +
                      ", the file has " + std::to_string(obj.vertices.size()) + ")");
  }
  for (size_t i = 0; i < obj.vertices.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      if (!Agrees(obj.vertices[i][k], static_cast<double>(attrib.vertices[3 * i + static_cast<size_t>(k)]))) {
        Fail(file, obj.vertexLines[i], "vertex coordinate not understood (tinyobjloader disagrees)");
      }
    }
  }
}

// Faces come out of tinyobjloader's shapes in file order; our scan gives the k-th face its line.
std::vector<Face> BuildFaces(const std::string &file, const ObjText &obj, const std::vector<tinyobj::shape_t> &shapes,
                             const tinyobj::attrib_t &attrib, const std::vector<tinyobj::material_t> &materials,
                             const std::vector<int> &sceneIndex) {
  std::vector<Face> faces;
  size_t total = 0;
  for (const tinyobj::shape_t &shape : shapes) total += shape.mesh.num_face_vertices.size();
  if (total != obj.faces.size()) {
    Fail(file, 0, "cannot match faces to lines (tinyobjloader read " + std::to_string(total) + " faces, the file has " +
                      std::to_string(obj.faces.size()) + " `f` lines)");
  }
  const size_t vertexCount = attrib.vertices.size() / 3;
  for (const tinyobj::shape_t &shape : shapes) {
    size_t offset = 0;
    for (size_t f = 0; f < shape.mesh.num_face_vertices.size(); ++f) {
      const ScannedFace &scanned = obj.faces[faces.size()];
      const size_t count = shape.mesh.num_face_vertices[f];
      if (count != scanned.corners.size() || offset + count > shape.mesh.indices.size()) {
        Fail(file, scanned.line, "cannot parse face (tinyobjloader read " + std::to_string(count) + " vertices)");
      }
      Face face;
      face.line = scanned.line;
      face.polygon = static_cast<int>(faces.size());
      for (size_t k = 0; k < count; ++k) {
        const int index = shape.mesh.indices[offset + k].vertex_index;
        if (index != scanned.corners[k] || index < 0 || static_cast<size_t>(index) >= vertexCount) {
          Fail(file, scanned.line, "vertex index out of range");
        }
        const size_t base = 3 * static_cast<size_t>(index);
        face.corners.emplace_back(attrib.vertices[base], attrib.vertices[base + 1], attrib.vertices[base + 2]);
      }
      offset += count;
      const int id = shape.mesh.material_ids[f];
      const std::string expected = scanned.use < 0 ? std::string() : obj.uses[static_cast<size_t>(scanned.use)].name;
      // tinyobjloader turns an unknown name into "no material"; make sure that never passes for the default.
      const bool agrees = id < 0 ? scanned.use < 0
                                 : scanned.use >= 0 && static_cast<size_t>(id) < materials.size() &&
                                       materials[static_cast<size_t>(id)].name == expected;
      face.material = id < 0 ? 0 : (agrees ? sceneIndex[static_cast<size_t>(id)] : -1);
      if (!agrees || face.material < 0) Fail(file, scanned.line, "unknown material " + Quote(expected));
      faces.push_back(face);
    }
  }
  return faces;
}

std::string DirectoryOf(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

}  // namespace

Scene LoadObjScene(const std::string &objPath) {
  std::string problem;
  const std::string content = ReadWholeFile(objPath, &problem);
  if (!problem.empty()) Fail(objPath, 0, problem);
  const std::string objDir = DirectoryOf(objPath);
  ObjText obj = ScanObj(objPath, objDir, CleanLines(content));
  ResolveCorners(objPath, &obj);

  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> materials;
  std::string warn, err;
  SceneMaterialReader reader(objDir, obj.libs);
  // Fed from our cleaned text, not the file, so that both see the same statements on the same lines.
  std::istringstream in(JoinLines(obj.lines));
  const bool ok = tinyobj::LoadObj(&attrib, &shapes, &materials, &warn, &err, &in, &reader, /*triangulate=*/false);
  if (!reader.Problem().empty()) throw InputError(reader.Problem());
  if (!ok || !err.empty()) {
    // Its messages end with "line N.)"; pull the number out so the message has our usual shape.
    int line = 0;
    const size_t at = err.rfind("line ");
    if (at != std::string::npos) line = std::atoi(err.c_str() + at + 5);
    std::string text = err.substr(0, err.find('\n'));
    Fail(objPath, line, "cannot parse: " + text);
  }
  CheckUsesKnown(objPath, obj, reader.NamesByLibrary());
  CheckWarnings(objPath, obj, warn);
  CheckVertices(objPath, obj, attrib);

  Scene scene;
  scene.path = objPath;
  scene.warnings = obj.warnings;
  const std::vector<int> sceneIndex = BuildMaterials(materials, reader.Origins(), &scene.materials, &scene.warnings);
  scene.faces = BuildFaces(objPath, obj, shapes, attrib, materials, sceneIndex);
  if (scene.faces.empty()) Fail(objPath, 0, "no faces (empty scene)");
  return scene;
}

}  // namespace rad
