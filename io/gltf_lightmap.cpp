#include "io/gltf_lightmap.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"

namespace rad {

namespace {

using nlohmann::json;

// glTF's constants: component types, buffer targets, primitive mode, sampler filters and wrap.
constexpr int kFloat = 5126;
constexpr int kArrayBuffer = 34962;
constexpr int kTriangles = 4;
constexpr int kLinear = 9729;
constexpr int kClampToEdge = 33071;

// What one page's primitive holds, vertex by vertex.
struct PageMesh {
  std::vector<float> position, normal, chartUv, lightmapUv;
  void Add(Vec3 x, Vec3 n, double u, double v, double s, double t) {
    for (int c = 0; c < 3; ++c) position.push_back(float(x[c])), normal.push_back(float(n[c]));
    chartUv.push_back(float(u)), chartUv.push_back(float(v));
    lightmapUv.push_back(float(s)), lightmapUv.push_back(float(t));
  }
};

class GlbBuilder {
 public:
  // Appends `bytes` as a buffer view (4-byte aligned) and returns its index.
  int View(const void *bytes, size_t size, int target = 0) {
    while (bin_.size() % 4) bin_.push_back(0);
    json view = {{"buffer", 0}, {"byteOffset", bin_.size()}, {"byteLength", size}};
    if (target) view["target"] = target;
    bin_.insert(bin_.end(), static_cast<const uint8_t *>(bytes), static_cast<const uint8_t *>(bytes) + size);
    views_.push_back(view);
    return int(views_.size()) - 1;
  }
  // A float accessor of `width` components per vertex; POSITION needs its bounds.
  int Accessor(const std::vector<float> &data, int width, const char *type, bool bounds = false) {
    json a = {{"bufferView", View(data.data(), data.size() * sizeof(float), kArrayBuffer)},
              {"componentType", kFloat},
              {"count", data.size() / size_t(width)},
              {"type", type}};
    if (bounds) {
      std::vector<float> lo(size_t(width), std::numeric_limits<float>::max()), hi(size_t(width), -std::numeric_limits<float>::max());
      for (size_t k = 0; k < data.size(); ++k) {
        lo[k % size_t(width)] = std::min(lo[k % size_t(width)], data[k]);
        hi[k % size_t(width)] = std::max(hi[k % size_t(width)], data[k]);
      }
      a["min"] = lo, a["max"] = hi;
    }
    accessors_.push_back(a);
    return int(accessors_.size()) - 1;
  }
  std::string Bytes(json document) const {
    document["accessors"] = accessors_;
    document["bufferViews"] = views_;
    document["buffers"] = json::array({{{"byteLength", bin_.size()}}});
    std::string text = document.dump();
    while (text.size() % 4) text.push_back(' ');
    std::vector<uint8_t> bin = bin_;
    while (bin.size() % 4) bin.push_back(0);
    std::string out;
    auto word = [&](uint32_t w) { out.append(reinterpret_cast<const char *>(&w), 4); };  // little-endian hosts
    word(0x46546C67);  // "glTF"
    word(2);
    word(uint32_t(12 + 8 + text.size() + 8 + bin.size()));
    word(uint32_t(text.size()));
    word(0x4E4F534A);  // "JSON"
    out += text;
    word(uint32_t(bin.size()));
    word(0x004E4942);  // "BIN\0"
    out.append(reinterpret_cast<const char *>(bin.data()), bin.size());
    return out;
  }

 private:
  std::vector<uint8_t> bin_;
  json views_ = json::array(), accessors_ = json::array();
};

}  // namespace

void WriteLightmappedGlb(const std::string &path, const Scene &scene, const std::vector<TexelChart> &charts,
                         const LightmapAtlas &atlas, const std::vector<std::vector<uint8_t>> &pagePngs) {
  std::vector<PageMesh> meshes(size_t(atlas.pageCount));
  const double side = atlas.pageSize;
  for (size_t c = 0; c < charts.size(); ++c) {
    const TexelChart &chart = charts[c];
    const LightmapAtlas::Placement &at = atlas.placed[c];
    PageMesh &mesh = meshes[size_t(at.page)];
    const Vec3 n = Cross(chart.axisU, chart.axisV);
    for (int f : chart.faces) {
      const std::vector<Vec3> &corners = scene.faces[size_t(f)].corners;
      auto add = [&](const Vec3 &x) {
        const double u = Dot(x - chart.origin, chart.axisU), v = Dot(x - chart.origin, chart.axisV);
        double s, t;
        atlas.PageCoordinates(int32_t(c), chart, x, s, t);
        mesh.Add(x, n, u, v, s / side, t / side);
      };
      for (size_t k = 1; k + 1 < corners.size(); ++k) add(corners[0]), add(corners[k]), add(corners[k + 1]);
    }
  }
  GlbBuilder glb;
  json document = {{"asset", {{"version", "2.0"}, {"generator", std::string("radiosity ") + RAD_VERSION}}},
                   {"extensionsUsed", {"KHR_materials_unlit"}},
                   {"scene", 0},
                   {"samplers", json::array({{{"magFilter", kLinear}, {"minFilter", kLinear},
                                              {"wrapS", kClampToEdge}, {"wrapT", kClampToEdge}}})}};
  json primitives = json::array(), images = json::array(), textures = json::array(), materials = json::array();
  for (size_t p = 0; p < meshes.size(); ++p) {
    images.push_back({{"bufferView", glb.View(pagePngs[p].data(), pagePngs[p].size())}, {"mimeType", "image/png"},
                      {"name", "lightmap_" + std::to_string(p)}});
    textures.push_back({{"sampler", 0}, {"source", p}});
    materials.push_back({{"name", "lightmap_" + std::to_string(p)},
                         {"pbrMetallicRoughness",
                          {{"baseColorTexture", {{"index", p}, {"texCoord", 1}}}, {"metallicFactor", 0.0},
                           {"roughnessFactor", 1.0}}},
                         {"doubleSided", false},
                         {"extensions", {{"KHR_materials_unlit", json::object()}}}});
    const PageMesh &mesh = meshes[p];
    if (mesh.position.empty()) continue;
    primitives.push_back({{"attributes",
                           {{"POSITION", glb.Accessor(mesh.position, 3, "VEC3", true)},
                            {"NORMAL", glb.Accessor(mesh.normal, 3, "VEC3")},
                            {"TEXCOORD_0", glb.Accessor(mesh.chartUv, 2, "VEC2")},
                            {"TEXCOORD_1", glb.Accessor(mesh.lightmapUv, 2, "VEC2")}}},
                          {"material", p},
                          {"mode", kTriangles}});
  }
  document["images"] = images;
  document["textures"] = textures;
  document["materials"] = materials;
  document["meshes"] = json::array({{{"name", "scene"}, {"primitives", primitives}}});
  document["nodes"] = json::array({{{"name", "scene"}, {"mesh", 0}}});
  document["scenes"] = json::array({{{"nodes", {0}}}});
  WriteFileAtomically(path, glb.Bytes(document), "the glTF scene");
}

}  // namespace rad
