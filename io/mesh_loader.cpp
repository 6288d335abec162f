// STL (ASCII and binary), PLY (ASCII and binary), OFF and glTF 2.0 (.gltf, .glb) through Assimp, behind the
// same Scene as the OBJ reader. Assimp runs without any post-processing step (no triangulation, no joining of
// vertices, nothing that moves a position or changes a polygon): every face comes through with its corners in
// the file's order, so a box written as STL, PLY or OFF gives the polygons of the same box in OBJ, bit for bit
// (Assimp keeps positions as float: ai_real). glTF's node transforms are taken from the file's own JSON and
// composed and applied in double precision (Assimp's are float), and its materials (base colour, emission and
// its strength, which Assimp 5.2 does not read) come from there too. Every face then passes the OBJ reader's
// geometric checks.
#include <assimp/DefaultLogger.hpp>
#include <assimp/Importer.hpp>
#include <assimp/LogStream.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/scene_readers.h"
#include "scene/scene.h"
#include "util/error.h"
#include "util/vec3.h"

namespace rad {
namespace {

constexpr size_t kMaxCorners = 255;  // as in OBJ files

// One line, whatever the names and Assimp's messages carry.
[[noreturn]] void Fail(const std::string &where, const std::string &problem) { ThrowInputError(where, problem); }

// A library's message on one short line: blanks and line ends as single blanks, at most 120 characters (Assimp's
// parsers quote the rest of the file).
std::string Shorten(const std::string &text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > 120) out = out.substr(0, 120) + "...";
  return out;
}

std::string FaceWhere(const std::string &path, size_t face) { return path + ": face " + std::to_string(face); }

const char *FormatName(const std::string &extension) {
  if (extension == ".stl") return "STL";
  if (extension == ".ply") return "PLY";
  if (extension == ".off") return "OFF";
  return "glTF";
}

// The messages of ReadWholeFile, without reading a large mesh twice.
void CheckReadable(const std::string &path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    Fail(path, "cannot open file (" + (ec ? ec.message() : std::string("No such file or directory")) + ")");
  if (!std::filesystem::is_regular_file(status)) Fail(path, "cannot open file (not a regular file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, std::string("cannot open file (") + std::strerror(errno) + ")");
  if (std::filesystem::file_size(path, ec) == 0 && !ec) Fail(path, "empty file");
}

// Some of Assimp's importers log an error and go on with a substitute (Assimp 5.2's OFF reader takes a vertex index
// out of range for the last vertex, and leaves out faces of more than 9 corners): while a file is read, every
// error Assimp logs is kept, and the first one fails the file.
class AssimpErrors {
 public:
  AssimpErrors() {
    Assimp::DefaultLogger::create(nullptr, Assimp::Logger::NORMAL, 0);  // no file, no debugger stream
    Assimp::DefaultLogger::get()->attachStream(new Stream(&errors_), Assimp::Logger::Err);  // the logger owns it
  }
  ~AssimpErrors() { Assimp::DefaultLogger::kill(); }
  AssimpErrors(const AssimpErrors &) = delete;
  AssimpErrors &operator=(const AssimpErrors &) = delete;

  // The first error without the logger's "Error, T0: " and line end; empty if none.
  std::string First() const {
    if (errors_.empty()) return {};
    std::string text = errors_.front();
    const size_t colon = text.find(": ");
    if (text.compare(0, 5, "Error") == 0 && colon != std::string::npos) text.erase(0, colon + 2);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
  }

 private:
  class Stream final : public Assimp::LogStream {
   public:
    explicit Stream(std::vector<std::string> *errors) : errors_(errors) {}
    void write(const char *message) override { errors_->push_back(message); }

   private:
    std::vector<std::string> *errors_;
  };
  std::vector<std::string> errors_;
};

// Assimp 5.2's PLY reader loops for ever, or crashes, on a header without its `end_header` line, and it does not
// notice a file cut short: a text file's missing faces come out as copies of the last one read, a binary file's
// as whatever follows in memory. So the file's structure is checked here first: the header, then every element
// the header declares, present and whole (in a text file, one line of numbers each with as many numbers as the
// properties and list counts call for; in a binary file, the bytes they take). Values are Assimp's to read.
struct PlyProperty {
  bool list = false;
  int countBytes = 0, itemBytes = 0;  // a list's count and items; a scalar's size in itemBytes
  bool countSigned = false;
};

struct PlyElement {
  std::string name;
  unsigned long long count = 0;
  std::vector<PlyProperty> properties;
};

int PlyTypeBytes(const std::string &type, bool *isSigned) {
  static const std::map<std::string, std::pair<int, bool>> kTypes = {
      {"char", {1, true}},   {"int8", {1, true}},    {"uchar", {1, false}},  {"uint8", {1, false}},
      {"short", {2, true}},  {"int16", {2, true}},   {"ushort", {2, false}}, {"uint16", {2, false}},
      {"int", {4, true}},    {"int32", {4, true}},   {"uint", {4, false}},   {"uint32", {4, false}},
      {"float", {4, true}},  {"float32", {4, true}}, {"double", {8, true}},  {"float64", {8, true}}};
  const auto it = kTypes.find(type);
  if (it == kTypes.end()) return 0;
  if (isSigned != nullptr) *isSigned = it->second.second;
  return it->second.first;
}

std::vector<std::string> Words(const std::string &line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Returns the number of faces the header declares (-1: no face element).
long long CheckPly(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string line, format;
  size_t number = 0, bytes = 0;
  std::vector<PlyElement> elements;
  bool ended = false;
  while (!ended && std::getline(in, line)) {
    if (in.eof()) break;  // a header line ends with a line end: the file stops inside the header
    ++number;
    bytes += line.size() + 1;
    const std::string where = path + ":" + std::to_string(number);
    const std::vector<std::string> words = Words(line);
    if (number == 1 && (words.size() != 1 || words[0] != "ply"))
      Fail(path, "not a PLY file (the first line is not 'ply')");
    if (words.empty() || number == 1 || words[0] == "comment" || words[0] == "obj_info") continue;
    if (words[0] == "end_header" && words.size() == 1) {
      ended = true;
    } else if (words[0] == "format") {
      if (words.size() != 3 || words[2] != "1.0" ||
          (words[1] != "ascii" && words[1] != "binary_little_endian" && words[1] != "binary_big_endian"))
        Fail(where, "unknown PLY format " + Quote(line));
      format = words[1];
    } else if (words[0] == "element") {
      PlyElement element;
      char *end = nullptr;
      element.count = words.size() == 3 ? std::strtoull(words[2].c_str(), &end, 10) : 0;
      if (words.size() != 3 || end == nullptr || *end != '\0' || words[2][0] == '-')
        Fail(where, "malformed PLY element " + Quote(line));
      element.name = words[1];
      elements.push_back(element);
    } else if (words[0] == "property") {
      if (elements.empty()) Fail(where, "PLY property before any element");
      PlyProperty property;
      const bool list = words.size() == 5 && words[1] == "list";
      property.list = list;
      if (list) {
        property.countBytes = PlyTypeBytes(words[2], &property.countSigned);
        property.itemBytes = PlyTypeBytes(words[3], nullptr);
      } else if (words.size() == 3) {
        property.itemBytes = PlyTypeBytes(words[1], nullptr);
      }
      if (property.itemBytes == 0 || (list && property.countBytes == 0))
        Fail(where, "malformed PLY property " + Quote(line));
      elements.back().properties.push_back(property);
    } else {
      Fail(where, "unknown PLY header line " + Quote(line) + " (before end_header)");
    }
    if (bytes > (size_t(1) << 20)) break;  // no header is that long: binary data without an end_header line
  }
  if (!ended) Fail(path, "PLY header without its end_header line (the file is cut short or not a PLY file)");
  if (format.empty()) Fail(path, "PLY header without a format line");

  long long faces = -1;
  for (const PlyElement &e : elements)
    if (e.name == "face") faces = static_cast<long long>(std::min<unsigned long long>(e.count, LLONG_MAX));
  auto cut = [&](const PlyElement &e, unsigned long long i) {
    Fail(path, "the PLY file is cut short: " + e.name + " " + std::to_string(i) + " of the " +
                   std::to_string(e.count) + " its header declares is missing or incomplete");
  };
  if (format == "ascii") {
    for (const PlyElement &e : elements) {
      for (unsigned long long i = 0; i < e.count; ++i) {
        std::vector<std::string> words;
        while (words.empty()) {
          if (!std::getline(in, line)) cut(e, i);
          ++number;
          words = Words(line);
        }
        size_t next = 0;
        for (const PlyProperty &property : e.properties) {
          size_t count = 1;
          if (property.list) {
            char *end = nullptr;
            const unsigned long long n = next < words.size() ? std::strtoull(words[next].c_str(), &end, 10) : 0;
            if (next >= words.size() || end == nullptr || *end != '\0' || words[next][0] == '-')
              Fail(path + ":" + std::to_string(number), "malformed PLY " + e.name + " " + std::to_string(i));
            ++next;
            count = size_t(std::min<unsigned long long>(n, words.size()));
            if (n > words.size()) count = words.size() + 1;  // more than the line holds
          }
          next += count;
        }
        if (next != words.size())
          Fail(path + ":" + std::to_string(number), "PLY " + e.name + " " + std::to_string(i) + " has " +
                                                         std::to_string(words.size()) + " numbers, its properties " +
                                                         (next > words.size() ? "need more" : "fewer"));
        for (const std::string &word : words) {
          char *end = nullptr;
          std::strtod(word.c_str(), &end);
          if (end == word.c_str() || *end != '\0')
            Fail(path + ":" + std::to_string(number), "malformed number " + Quote(word) + " in PLY " + e.name + " " +
                                                           std::to_string(i));
        }
      }
    }
    return faces;
  }
  const bool big = format == "binary_big_endian";
  std::error_code ec;
  const unsigned long long size = std::filesystem::file_size(path, ec);
  unsigned long long at = bytes;  // the body starts after the header's last line end
  in.clear();
  for (const PlyElement &e : elements) {
    bool fixed = true;
    unsigned long long each = 0;
    for (const PlyProperty &p : e.properties) {
      fixed = fixed && !p.list;
      each += p.list ? 0 : unsigned(p.itemBytes);
    }
    if (fixed) {  // no list: its size without reading it
      if (each != 0 && e.count > (size - std::min(at, size)) / each) cut(e, (size - std::min(at, size)) / each);
      at += e.count * each;
      continue;
    }
    in.seekg(std::streamoff(at));
    for (unsigned long long i = 0; i < e.count; ++i) {
      for (const PlyProperty &p : e.properties) {
        if (!p.list) {
          at += unsigned(p.itemBytes);
          continue;
        }
        unsigned char raw[4] = {};
        in.seekg(std::streamoff(at));
        if (at + unsigned(p.countBytes) > size || !in.read(reinterpret_cast<char *>(raw), p.countBytes)) cut(e, i);
        unsigned long long n = 0;
        for (int k = 0; k < p.countBytes; ++k) n |= static_cast<unsigned long long>(raw[big ? p.countBytes - 1 - k : k]) << (8 * k);
        if (p.countSigned && (raw[big ? 0 : p.countBytes - 1] & 0x80) != 0)
          Fail(path, "negative list length in PLY " + e.name + " " + std::to_string(i));
        at += unsigned(p.countBytes) + n * unsigned(p.itemBytes);
      }
      if (at > size) cut(e, i);
    }
  }
  if (at > size) cut(elements.back(), elements.back().count);
  return faces;
}

// Assimp 5.2's OFF reader reads what is not a number as 0, a comment line among the vertices as a vertex, and a
// file cut short as if it were whole (missing vertices stay at the origin): the vertex and face lines are checked
// here first, one line each as Assimp reads them: a vertex with at least 3 numbers, a face with its corner
// count (1 to 9; fewer than 3 is a point or a line, left out later) and that many vertex indices in range (what follows, a colour, is allowed). The header's
// variants with more or fewer coordinates (nOFF, 4OFF) are left to Assimp.
void CheckOff(const std::string &path) {
  std::string problem;
  const std::string text = ReadWholeFile(path, &problem);
  if (!problem.empty()) Fail(path, problem);
  std::vector<std::pair<size_t, std::string>> lines;  // (line number, text) of the lines with something on them
  size_t number = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string::npos) end = text.size();
    ++number;
    if (end > pos) lines.emplace_back(number, text.substr(pos, end - pos));
    pos = end + (end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n' ? 2 : 1);
  }
  auto words = [](const std::string &line) {
    std::vector<std::string> w = Words(line.substr(0, line.find('#')));
    return w;
  };
  auto integer = [](const std::string &word, unsigned long long *value) {
    char *end = nullptr;
    *value = std::strtoull(word.c_str(), &end, 10);
    return !word.empty() && word[0] != '-' && end != nullptr && *end == '\0';
  };
  size_t at = 0;
  std::vector<std::string> header;
  while (at < lines.size() && (header = words(lines[at].second)).empty()) ++at;
  if (header.empty()) return;  // Assimp says
  if (header[0].size() >= 3 && header[0].compare(header[0].size() - 3, 3, "OFF") == 0) {
    if (header[0].find_first_of("n4") != std::string::npos) return;
    header.erase(header.begin());
    while (header.empty() && ++at < lines.size()) header = words(lines[at].second);
  }
  unsigned long long vertices = 0, faces = 0;
  if (header.size() < 2 || !integer(header[0], &vertices) || !integer(header[1], &faces))
    Fail(path, "malformed OFF header: the vertex and face counts must follow OFF");
  ++at;
  for (unsigned long long i = 0; i < vertices + faces; ++i, ++at) {
    const bool vertex = i < vertices;
    const std::string what = vertex ? "vertex " + std::to_string(i) : "face " + std::to_string(i - vertices);
    if (at >= lines.size())
      Fail(path, "the OFF file is cut short: " + what + " of the " + std::to_string(vertex ? vertices : faces) +
                     " its header declares is missing");
    const std::string where = path + ":" + std::to_string(lines[at].first);
    const std::string &line = lines[at].second;
    if (line.size() >= 4095) Fail(where, "line longer than Assimp's OFF reader takes (4095 characters)");
    const std::vector<std::string> w = Words(line);
    if (w.empty() || w[0][0] == '#')
      Fail(where, "blank or comment line where OFF " + what + " should be (Assimp's OFF reader would read it as one)");
    if (vertex) {
      if (w.size() < 3) Fail(where, "OFF vertex " + std::to_string(i) + " needs 3 coordinates");
      for (size_t k = 0; k < 3; ++k) {
        char *end = nullptr;
        std::strtod(w[k].c_str(), &end);
        if (end == w[k].c_str() || *end != '\0') Fail(where, "malformed coordinate " + Quote(w[k]) + " of OFF " + what);
      }
      continue;
    }
    unsigned long long corners = 0;
    if (!integer(w[0], &corners)) Fail(where, "malformed corner count " + Quote(w[0]) + " of OFF " + what);
    if (corners == 0 || corners > 9)
      Fail(where, "OFF " + what + " has " + std::to_string(corners) +
                      " corners; Assimp's OFF reader takes faces of 1 to 9 corners");
    if (w.size() < corners + 1) Fail(where, "OFF " + what + " lists fewer vertex indices than its corner count");
    for (size_t k = 1; k <= corners; ++k) {
      unsigned long long index = 0;
      if (!integer(w[k], &index)) Fail(where, "malformed vertex index " + Quote(w[k]) + " of OFF " + what);
      if (index >= vertices)
        Fail(where, "vertex index " + w[k] + " of OFF " + what + " out of range (the file has " +
                        std::to_string(vertices) + " vertices)");
    }
  }
}

// A binary STL is 84 bytes and 50 per triangle. Assimp takes a file of any other size for ASCII and reports only
// that it cannot tell what it is; a file that does not start with "solid" is binary, and its size is checked
// here. (Some binary files do start with "solid": Assimp tells them by their size.)
void CheckBinaryStlSize(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[84] = {};
  in.read(reinterpret_cast<char *>(head), sizeof head);
  const std::streamsize got = in.gcount();
  if (got >= 5 && std::memcmp(head, "solid", 5) == 0) return;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return;  // Assimp will say
  if (got < 84)
    Fail(path, "binary STL of " + std::to_string(size) + " bytes, shorter than its 84-byte header (cut short?)");
  const uint64_t triangles = uint64_t(head[80]) | uint64_t(head[81]) << 8 | uint64_t(head[82]) << 16 |
                             uint64_t(head[83]) << 24;
  if (size != 84 + 50 * triangles)
    Fail(path, "binary STL of " + std::to_string(triangles) + " triangles should have " +
                   std::to_string(84 + 50 * triangles) + " bytes, the file has " + std::to_string(size) +
                   " (cut short?)");
}

// ---- glTF's own JSON ------------------------------------------------------------------------------------

// Rows of a 3 x 4 affine map, x' = m x + t, in double precision.
struct Affine {
  double m[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  bool identity = true;  // exactly: then positions are kept untouched (no -0 turned into +0)
};

Affine Compose(const Affine &a, const Affine &b) {  // a after b
  if (a.identity) return b;
  if (b.identity) return a;
  Affine c;
  c.identity = false;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 4; ++k) {
      double sum = k == 3 ? a.m[r][3] : 0.0;
      for (int j = 0; j < 3; ++j) sum += a.m[r][j] * b.m[j][k];
      c.m[r][k] = sum;
    }
  }
  return c;
}

double Determinant(const Affine &a) {
  const auto &m = a.m;
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

Vec3 Apply(const Affine &a, Vec3 p) {
  if (a.identity) return p;
  Vec3 q;
  for (int r = 0; r < 3; ++r) q[r] = a.m[r][0] * p.x + a.m[r][1] * p.y + a.m[r][2] * p.z + a.m[r][3];
  return q;
}

struct GltfNode {
  std::string name;
  Affine local;
  int mesh = -1;
  std::vector<int> children;
};

struct GltfMaterial {
  Material material;
  bool named = false;
};

struct GltfDocument {
  std::vector<GltfNode> nodes;
  std::vector<int> roots;  // the nodes of the scene Assimp imports
  std::vector<std::string> meshNames;
  std::vector<size_t> primitiveCounts;
  std::vector<GltfMaterial> materials;
  std::vector<std::string> warnings;
};

// The JSON text of a .gltf file, or the JSON chunk of a .glb (12-byte header, then chunk 0: length, "JSON").
std::string GltfJson(const std::string &path, bool binary) {
  std::string problem;
  if (!binary) {
    std::string text = ReadWholeFile(path, &problem);
    if (!problem.empty()) Fail(path, problem);
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  unsigned char head[20] = {};
  if (!in.read(reinterpret_cast<char *>(head), sizeof head)) Fail(path, "glTF: binary file too short for its header");
  auto word = [&](int at) {
    return uint32_t(head[at]) | uint32_t(head[at + 1]) << 8 | uint32_t(head[at + 2]) << 16 | uint32_t(head[at + 3]) << 24;
  };
  if (std::memcmp(head, "glTF", 4) != 0 || std::memcmp(head + 16, "JSON", 4) != 0)
    Fail(path, "glTF: not a binary glTF file (no 'glTF' magic and JSON chunk)");
  const uint32_t length = word(12);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || uint64_t(length) + 20 > size) Fail(path, "glTF: JSON chunk longer than the file");
  std::string text(length, '\0');
  if (!in.read(text.data(), std::streamsize(length))) Fail(path, "glTF: cannot read the JSON chunk");
  return text;
}

std::vector<double> Numbers(const nlohmann::json &value, size_t count, const std::string &path,
                            const std::string &what) {
  if (!value.is_array() || value.size() != count ||
      !std::all_of(value.begin(), value.end(), [](const nlohmann::json &e) { return e.is_number(); }))
    Fail(path, "glTF: " + what + " must be " + std::to_string(count) + " numbers");
  std::vector<double> numbers;
  for (const auto &e : value) {
    numbers.push_back(e.get<double>());
    if (!std::isfinite(numbers.back())) Fail(path, "glTF: non-finite number in " + what);
  }
  return numbers;
}

// A node's own transform: its matrix (column-major), or translation * rotation * scale.
Affine NodeTransform(const nlohmann::json &node, const std::string &path, const std::string &what) {
  Affine a;
  if (node.contains("matrix")) {
    const std::vector<double> m = Numbers(node["matrix"], 16, path, what + " matrix");
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) a.m[r][c] = m[size_t(4 * c + r)];
    if (m[3] != 0 || m[7] != 0 || m[11] != 0 || m[15] != 1)
      Fail(path, "glTF: " + what + " matrix is not affine (its last row must be 0 0 0 1)");
  } else {
    std::vector<double> t = {0, 0, 0}, q = {0, 0, 0, 1}, s = {1, 1, 1};
    if (node.contains("translation")) t = Numbers(node["translation"], 3, path, what + " translation");
    if (node.contains("rotation")) q = Numbers(node["rotation"], 4, path, what + " rotation");
    if (node.contains("scale")) s = Numbers(node["scale"], 3, path, what + " scale");
    const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(norm > 0)) Fail(path, "glTF: " + what + " rotation is not a unit quaternion");
    if (norm != 1)
      for (double &c : q) c /= norm;  // stored in float, a unit quaternion is rarely exactly one long
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                            {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                            {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) a.m[i][j] = r[i][j] * s[size_t(j)];
      a.m[i][3] = t[size_t(i)];
    }
  }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) a.identity = a.identity && a.m[r][c] == (r == c ? 1.0 : 0.0);
  return a;
}

GltfMaterial ReadGltfMaterial(const nlohmann::json &m, size_t index, const std::string &path,
                              std::vector<std::string> *warnings) {
  GltfMaterial out;
  out.named = m.contains("name") && m["name"].is_string() && !m["name"].get<std::string>().empty();
  out.material.name = out.named ? m["name"].get<std::string>() : "material " + std::to_string(index);
  const std::string what = "material " + Quote(out.material.name);
  const nlohmann::json pbr = m.value("pbrMetallicRoughness", nlohmann::json::object());
  if (pbr.contains("baseColorFactor")) {
    const std::vector<double> c = Numbers(pbr["baseColorFactor"], 4, path, what + " baseColorFactor");
    out.material.reflectance = Vec3(c[0], c[1], c[2]);
  }
  if (m.contains("emissiveFactor")) {
    const std::vector<double> e = Numbers(m["emissiveFactor"], 3, path, what + " emissiveFactor");
    out.material.emission = Vec3(e[0], e[1], e[2]);
  }
  const nlohmann::json extensions = m.value("extensions", nlohmann::json::object());
  if (extensions.contains("KHR_materials_emissive_strength")) {
    const nlohmann::json &strength = extensions["KHR_materials_emissive_strength"];
    if (strength.contains("emissiveStrength")) {
      const nlohmann::json &s = strength["emissiveStrength"];
      if (!s.is_number()) Fail(path, "glTF: " + what + " emissiveStrength must be a number");
      out.material.emission = out.material.emission * s.get<double>();
    }
  }
  if (pbr.contains("baseColorTexture") || m.contains("emissiveTexture"))
    warnings->push_back(path + ": " + what + " has textures; radiosity reads only its factors (a patch has one "
                        "colour)");
  CheckMaterialValues(path, out.material, warnings);
  return out;
}

GltfDocument ReadGltfDocument(const std::string &path, bool binary) {
  GltfDocument doc;
  try {
    const nlohmann::json j = nlohmann::json::parse(GltfJson(path, binary));
    const nlohmann::json none = nlohmann::json::array();
    const nlohmann::json &nodes = j.contains("nodes") ? j["nodes"] : none;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const nlohmann::json &n = nodes[i];
      GltfNode node;
      node.name = n.contains("name") && n["name"].is_string() ? n["name"].get<std::string>() : std::string();
      node.local = NodeTransform(n, path, "node " + std::to_string(i));
      node.mesh = n.contains("mesh") ? n["mesh"].get<int>() : -1;
      if (n.contains("children"))
        for (const auto &c : n["children"]) node.children.push_back(c.get<int>());
      doc.nodes.push_back(node);
    }
    const nlohmann::json &meshes = j.contains("meshes") ? j["meshes"] : none;
    for (const auto &m : meshes) {
      doc.meshNames.push_back(m.contains("name") && m["name"].is_string() ? m["name"].get<std::string>() : "");
      doc.primitiveCounts.push_back(m.contains("primitives") ? m["primitives"].size() : 0);
    }
    const nlohmann::json &materials = j.contains("materials") ? j["materials"] : none;
    for (size_t i = 0; i < materials.size(); ++i)
      doc.materials.push_back(ReadGltfMaterial(materials[i], i, path, &doc.warnings));
    // The scene Assimp imports: `scene`, else the first.
    const nlohmann::json &scenes = j.contains("scenes") ? j["scenes"] : none;
    const size_t scene = j.contains("scene") ? j["scene"].get<size_t>() : 0;
    if (scene < scenes.size() && scenes[scene].contains("nodes"))
      for (const auto &r : scenes[scene]["nodes"]) doc.roots.push_back(r.get<int>());
  } catch (const nlohmann::json::exception &e) {
    Fail(path, std::string("glTF: ") + e.what());
  }
  return doc;
}

// ---- Faces ----------------------------------------------------------------------------------------------

class MeshReader {
 public:
  MeshReader(std::string path, std::string extension, const MaterialsFile &materials)
      : path_(std::move(path)), extension_(std::move(extension)), materials_(materials) {
    scene_.path = path_;
    scene_.sources = {path_};
    scene_.materials.push_back(Material{"default", Vec3(0.5, 0.5, 0.5), Vec3(0, 0, 0)});
    const std::filesystem::path file(path_);
    fileNames_ = {path_, file.filename().string(), file.stem().string()};
  }

  Scene Read() {
    CheckReadable(path_);
    const long long plyFaces = extension_ == ".ply" ? CheckPly(path_) : -1;
    if (extension_ == ".stl") CheckBinaryStlSize(path_);
    if (extension_ == ".off") CheckOff(path_);
    const bool gltf = extension_ == ".gltf" || extension_ == ".glb";
    const AssimpErrors errors;  // declared first, so that the logger outlives the importer
    Assimp::Importer importer;
    // No post-processing but the validation of what the importer built (indices in range and the like).
    const aiScene *ai = importer.ReadFile(path_, aiProcess_ValidateDataStructure);
    const std::string cannot = std::string("cannot read the ") + FormatName(extension_) + " file: ";
    // The first error logged is the cause; the failure Assimp returns may be only what followed from it. (The
    // logger replaces a message of more than 1 KiB, such as a parser's quote of the rest of the file.)
    std::string reason = errors.First();
    if (reason.compare(0, 6, "<fixme") == 0) reason.clear();
    if (reason.empty() && ai == nullptr) reason = importer.GetErrorString();
    if (reason.empty() && !errors.First().empty()) reason = "an error whose message Assimp's log discarded";
    if (!reason.empty()) Fail(path_, cannot + Shorten(reason));
    if (plyFaces >= 0) {
      unsigned long long read = 0;
      for (unsigned i = 0; i < ai->mNumMeshes; ++i) read += ai->mMeshes[i]->mNumFaces;
      if (read != static_cast<unsigned long long>(plyFaces))
        Fail(path_, "the PLY header declares " + std::to_string(plyFaces) + " faces, the file holds " +
                        std::to_string(read) + " (cut short or malformed?)");
    }
    if (ai->mRootNode == nullptr) Fail(path_, "no faces (empty scene)");
    if (gltf) {
      doc_ = ReadGltfDocument(path_, extension_ == ".glb");
      scene_.warnings = doc_.warnings;
      gltfMaterial_.assign(doc_.materials.size(), -1);
      for (size_t i = 0; i < doc_.materials.size() && i < ai->mNumMaterials; ++i) {
        aiString name;
        ai->mMaterials[i]->Get(AI_MATKEY_NAME, name);
        if (doc_.materials[i].named && doc_.materials[i].material.name != name.C_Str()) Mismatch("materials");
      }
      ReadGltfNodes(ai);
    } else {
      // No scene graph: the meshes in the file's order (several solids of an ASCII STL are several meshes).
      for (unsigned i = 0; i < ai->mNumMeshes; ++i) {
        const aiMesh *mesh = ai->mMeshes[i];
        std::vector<std::string> names;
        if (extension_ == ".stl" && mesh->mName.length > 0) names.push_back(mesh->mName.C_Str());
        AddMesh(mesh, Affine{}, MaterialFor(names, -1));
      }
    }
    if (skippedPrimitives_ > 0)
      scene_.warnings.push_back(path_ + ": " + std::to_string(skippedPrimitives_) +
                                " point(s) or line segment(s) left out (only polygons are surfaces)");
    if (normalsAgainstWinding_ > 0)
      scene_.warnings.push_back(path_ + ": " + std::to_string(normalsAgainstWinding_) + " of " +
                                std::to_string(scene_.faces.size()) +
                                " facets have a stored normal pointing against their winding; the winding decides "
                                "the front (counter-clockwise seen from the front)");
    if (scene_.faces.empty())
      Fail(path_, skippedPrimitives_ > 0 ? "no faces (empty scene): only points or lines" : "no faces (empty scene)");
    return std::move(scene_);  // mended or refused (--strict) by LoadScene, as every format's polygons
  }

 private:
  [[noreturn]] void Mismatch(const char *what) const {
    Fail(path_, std::string("glTF: cannot match the ") + what + " Assimp read to the file's");
  }

  // Assimp's node tree mirrors the scene's nodes (one root node is Assimp's root; several hang under a root
  // of its own). Transforms and names are taken from the file, the faces from Assimp.
  void ReadGltfNodes(const aiScene *ai) {
    const aiNode *root = ai->mRootNode;
    if (doc_.roots.size() == 1) {
      Node(ai, root, doc_.roots.front(), Affine{}, {});
      return;
    }
    if (root->mNumChildren != doc_.roots.size() || root->mNumMeshes != 0) Mismatch("nodes");
    for (size_t i = 0; i < doc_.roots.size(); ++i) Node(ai, root->mChildren[i], doc_.roots[i], Affine{}, {});
  }

  void Node(const aiScene *ai, const aiNode *node, int index, const Affine &parent, std::vector<std::string> names) {
    if (index < 0 || size_t(index) >= doc_.nodes.size() || ++visited_ > doc_.nodes.size() + 1) Mismatch("nodes");
    const GltfNode &g = doc_.nodes[size_t(index)];
    if (node->mNumChildren != g.children.size() || (!g.name.empty() && g.name != node->mName.C_Str()))
      Mismatch("nodes");
    const Affine transform = Compose(parent, g.local);
    if (!g.name.empty()) names.insert(names.begin(), g.name);  // nearest first
    if (g.mesh >= 0) {
      if (size_t(g.mesh) >= doc_.primitiveCounts.size() || node->mNumMeshes != doc_.primitiveCounts[size_t(g.mesh)])
        Mismatch("meshes");
      std::vector<std::string> own = names;
      if (!doc_.meshNames[size_t(g.mesh)].empty()) own.push_back(doc_.meshNames[size_t(g.mesh)]);
      for (unsigned k = 0; k < node->mNumMeshes; ++k) {
        if (node->mMeshes[k] >= ai->mNumMeshes) Mismatch("meshes");
        const aiMesh *mesh = ai->mMeshes[node->mMeshes[k]];
        const int material = mesh->mMaterialIndex < doc_.materials.size() ? int(mesh->mMaterialIndex) : -1;
        AddMesh(mesh, transform, MaterialFor(own, material));
      }
    } else if (node->mNumMeshes != 0) {
      Mismatch("meshes");
    }
    for (size_t c = 0; c < g.children.size(); ++c) Node(ai, node->mChildren[c], g.children[c], transform, names);
  }

  // The scene material of a mesh: the materials file's entry for the first of its names (object names, then
  // the glTF material's, then the file's) that it has, else the glTF material, else the default.
  int MaterialFor(std::vector<std::string> names, int gltfMaterial) {
    if (gltfMaterial >= 0) names.push_back(doc_.materials[size_t(gltfMaterial)].material.name);
    names.insert(names.end(), fileNames_.begin(), fileNames_.end());
    for (const std::string &name : names) {
      const auto it = materials_.byName.find(name);
      if (it == materials_.byName.end()) continue;
      materials_.used.insert(name);
      auto [cached, isNew] = fromFile_.emplace(name, int(scene_.materials.size()));
      if (isNew) scene_.materials.push_back(it->second);
      return cached->second;
    }
    if (gltfMaterial < 0) return 0;
    int &cached = gltfMaterial_[size_t(gltfMaterial)];
    if (cached < 0) {
      cached = int(scene_.materials.size());
      scene_.materials.push_back(doc_.materials[size_t(gltfMaterial)].material);
    }
    return cached;
  }

  void AddMesh(const aiMesh *mesh, const Affine &transform, int material) {
    // A transform that mirrors turns counter-clockwise into clockwise: the corners are reversed to keep the
    // front (glTF: the determinant's sign gives the winding).
    const bool mirrored = !transform.identity && Determinant(transform) < 0;
    const bool stl = extension_ == ".stl";
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
      const aiFace &in = mesh->mFaces[f];
      if (in.mNumIndices < 3) {
        ++skippedPrimitives_;
        continue;
      }
      const size_t number = scene_.faces.size();
      if (in.mNumIndices > kMaxCorners)
        Fail(FaceWhere(path_, number), "face has " + std::to_string(in.mNumIndices) +
                                           " vertices, more than the supported " + std::to_string(kMaxCorners));
      Face face;
      face.material = material;
      face.polygon = int(number);
      for (unsigned k = 0; k < in.mNumIndices; ++k) {
        const unsigned index = in.mIndices[k];
        if (index >= mesh->mNumVertices) Fail(FaceWhere(path_, number), "vertex index out of range");
        const aiVector3D &v = mesh->mVertices[index];
        const Vec3 p(double(v.x), double(v.y), double(v.z));
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
          Fail(FaceWhere(path_, number), "non-finite vertex coordinate");
        face.corners.push_back(Apply(transform, p));
      }
      if (mirrored) std::reverse(face.corners.begin() + 1, face.corners.end());
      if (stl && mesh->HasNormals() && in.mNumIndices == 3) {
        const aiVector3D &n = mesh->mNormals[in.mIndices[0]];
        const Vec3 stored(double(n.x), double(n.y), double(n.z));
        const Vec3 winding = Cross(face.corners[1] - face.corners[0], face.corners[2] - face.corners[0]);
        if (Dot(stored, winding) < 0) ++normalsAgainstWinding_;
      }
      scene_.faces.push_back(std::move(face));
    }
  }

  std::string path_, extension_;
  const MaterialsFile &materials_;
  std::vector<std::string> fileNames_;  // the file's path as given, its name, its name without extension
  GltfDocument doc_;
  std::vector<int> gltfMaterial_;     // glTF material -> scene material (-1: not used yet)
  std::map<std::string, int> fromFile_;  // materials-file name -> scene material
  size_t visited_ = 0;
  long long skippedPrimitives_ = 0, normalsAgainstWinding_ = 0;
  Scene scene_;
};

}  // namespace

Scene LoadMeshScene(const std::string &path, const std::string &extension, const MaterialsFile &materials) {
  return MeshReader(path, extension, materials).Read();
}

}  // namespace rad
