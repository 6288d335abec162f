// LoadScene: the reader by the file's extension, several files as one scene, and the `--materials` file.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/openfoam_mesh.h"
#include "io/scene_readers.h"
#include "scene/scene.h"
#include "util/error.h"

namespace rad {

const char *const kSceneFormats = ".obj, .stl, .ply, .off, .gltf, .glb";

namespace {

[[noreturn]] void Fail(const std::string &file, const std::string &problem) { ThrowInputError(file, problem); }

std::string LowerExtension(const std::string &path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char &c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

Scene ReadOne(const std::string &path, const MaterialsFile &materials) {
  if (IsOpenFoamCase(path)) return LoadOpenFoamScene(path, materials);
  const std::string extension = LowerExtension(path);
  if (extension == ".obj") return LoadObjScene(path);
  if (extension == ".stl" || extension == ".ply" || extension == ".off" || extension == ".gltf" ||
      extension == ".glb")
    return LoadMeshScene(path, extension, materials);
  Fail(path, "unknown scene format " + (extension.empty() ? std::string("(no extension)") : Quote(extension)) +
                 "; radiosity reads " + kSceneFormats + " (by the extension, in any case) and OpenFOAM cases (a folder with constant/polyMesh)");
}

// One file read and its polygons mended (or refused with --strict), whatever its format.
Scene LoadOne(const std::string &path, const MaterialsFile &materials, bool strict) {
  Scene scene = ReadOne(path, materials);
  scene.polygonCount = int(scene.faces.size());
  scene.repairs = RepairPolygons(&scene, strict);
  for (const std::string &line : scene.repairs.Summary(path)) scene.warnings.push_back(line);
  if (scene.faces.empty())
    Fail(path, "no usable faces (every one of its " + std::to_string(scene.polygonCount) +
                   " polygons is zero-area or degenerate)");
  return scene;
}

// The roles a materials file gives by name, to the materials of any format (an OBJ's MTL has no word for them).
void ApplyRoles(const MaterialsFile &file, Scene *scene) {
  for (Material &m : scene->materials) {
    const auto it = file.byName.find(m.name);
    if (it == file.byName.end()) continue;
    m.twoSided = m.twoSided || it->second.twoSided;
    m.obstruction = m.obstruction || it->second.obstruction;
    if (it->second.twoSided || it->second.obstruction) file.used.insert(m.name);
  }
  for (const Material &m : scene->materials)
    if (m.twoSided && m.obstruction)
      Fail(file.path, "material " + Quote(m.name) + " is both two_sided and an obstruction");
}

bool SameMaterial(const Material &a, const Material &b) {
  for (int k = 0; k < 3; ++k) {
    if (a.reflectance[k] != b.reflectance[k] || a.emission[k] != b.emission[k]) return false;
  }
  return a.name == b.name && a.twoSided == b.twoSided && a.obstruction == b.obstruction;
}

std::string FormatColor(Vec3 v) {
  std::ostringstream out;
  out << v.x << " " << v.y << " " << v.z;
  return out.str();
}

// "Kd": [r, g, b] or one number for all three (as an MTL file may give it).
Vec3 ReadColor(const std::string &path, const std::string &name, const char *field, const nlohmann::json &value) {
  Vec3 color;
  if (value.is_number()) {
    const double v = value.get<double>();
    color = Vec3(v, v, v);
  } else if (value.is_array() && value.size() == 3 &&
             std::all_of(value.begin(), value.end(), [](const nlohmann::json &e) { return e.is_number(); })) {
    for (int k = 0; k < 3; ++k) color[k] = value[size_t(k)].get<double>();
  } else {
    Fail(path, "material " + Quote(name) + ": " + field + " must be [r, g, b] (or one number for all three), not " +
                   value.dump());
  }
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(color[k])) Fail(path, "material " + Quote(name) + ": non-finite " + field);
  }
  return color;
}

}  // namespace

void CheckMaterialValues(const std::string &where, const Material &material, std::vector<std::string> *warnings) {
  bool absorbsNothing = false;
  for (int k = 0; k < 3; ++k) {
    if (!(material.reflectance[k] >= 0 && material.reflectance[k] <= 1))
      Fail(where, "reflectance Kd " + FormatColor(material.reflectance) + " outside [0,1] in material " +
                      Quote(material.name));
    if (!(material.emission[k] >= 0) || !std::isfinite(material.emission[k]))
      Fail(where, (material.emission[k] < 0 ? "negative emission Ke " : "non-finite emission Ke ") +
                      FormatColor(material.emission) + " in material " + Quote(material.name));
    absorbsNothing = absorbsNothing || material.reflectance[k] == 1;
  }
  if (absorbsNothing && warnings != nullptr)
    warnings->push_back(where + ": material " + Quote(material.name) + " has reflectance Kd " +
                        FormatColor(material.reflectance) +
                        ": a channel of 1 absorbs nothing (a closed scene of it has no finite radiosity)");
}

MaterialsFile ReadMaterialsFile(const std::string &path) {
  std::string problem;
  const std::string text = ReadWholeFile(path, &problem);
  if (!problem.empty()) Fail(path, problem);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    Fail(path, std::string("malformed JSON (") + e.what() + ")");
  }
  if (!j.is_object())
    Fail(path, "a materials file is a JSON object of materials by name: {\"name\": {\"Kd\": [r, g, b], \"Ke\": "
               "[r, g, b]}, ...}");
  MaterialsFile file;
  file.path = path;
  for (const auto &[name, entry] : j.items()) {
    if (name.empty()) Fail(path, "a material with an empty name");
    if (!entry.is_object())
      Fail(path, "material " + Quote(name) + " must be an object such as {\"Kd\": [r, g, b], \"Ke\": [r, g, b]}");
    Material material;
    material.name = name;
    for (const auto &[field, value] : entry.items()) {
      if (field == "Kd") {
        material.reflectance = ReadColor(path, name, "Kd", value);
      } else if (field == "Ke") {
        material.emission = ReadColor(path, name, "Ke", value);
      } else if (field == "two_sided" || field == "obstruction") {
        if (!value.is_boolean())
          Fail(path, "material " + Quote(name) + ": " + field + " must be true or false, not " + value.dump());
        (field == "two_sided" ? material.twoSided : material.obstruction) = value.get<bool>();
      } else {
        Fail(path, "material " + Quote(name) + ": unknown field " + Quote(field) +
                       " (a material has Kd, Ke, two_sided and obstruction)");
      }
    }
    CheckMaterialValues(path, material, &file.warnings);
    file.byName[name] = material;
  }
  return file;
}

Scene LoadScene(const std::string &path, const SceneLoadOptions &options) {
  if (!options.materialsFile.empty()) return LoadScene(std::vector<std::string>{path}, options);
  Scene scene = LoadOne(path, MaterialsFile{}, options.strict);
  scene.sources = {path};
  AddSurfaceRoles(&scene);
  return scene;
}

Scene LoadScene(const std::vector<std::string> &paths, const SceneLoadOptions &options) {
  if (paths.empty()) throw InputError("no scene file given (--input)");
  if (paths.size() == 1 && options.materialsFile.empty()) return LoadScene(paths.front(), options);
  const MaterialsFile materials =
      options.materialsFile.empty() ? MaterialsFile{} : ReadMaterialsFile(options.materialsFile);
  Scene scene;
  scene.warnings = materials.warnings;
  scene.materials.push_back(Material{"default", Vec3(0.5, 0.5, 0.5), Vec3(0, 0, 0)});
  for (const std::string &path : paths) {
    Scene part = LoadOne(path, materials, options.strict);
    ApplyRoles(materials, &part);
    // Materials merged: the same name with the same values is one material.
    std::vector<int> index(part.materials.size());
    for (size_t m = 0; m < part.materials.size(); ++m) {
      const auto same = std::find_if(scene.materials.begin(), scene.materials.end(),
                                     [&](const Material &other) { return SameMaterial(other, part.materials[m]); });
      index[m] = int(same - scene.materials.begin());
      if (same == scene.materials.end()) scene.materials.push_back(part.materials[m]);
    }
    const int source = int(scene.sources.size());
    scene.sources.push_back(path);
    for (Face &face : part.faces) {
      face.material = index[size_t(face.material)];
      face.source = source;
      face.polygon += scene.polygonCount;  // input polygons are numbered across the files
      scene.faces.push_back(std::move(face));
    }
    scene.polygonCount += part.polygonCount;
    scene.repairs.Merge(part.repairs);
    scene.warnings.insert(scene.warnings.end(), part.warnings.begin(), part.warnings.end());
    scene.path += (scene.path.empty() ? "" : ", ") + path;
  }
  for (const auto &[name, material] : materials.byName) {
    if (materials.used.count(name) == 0)
      scene.warnings.push_back(materials.path + ": material " + Quote(name) +
                               " names no object, material or file of the scene's STL, PLY, OFF or glTF files, "
                               "nor an OBJ material it could give a role");
  }
  AddSurfaceRoles(&scene);
  return scene;
}

std::string FaceOrigin(const Scene &scene, size_t index) {
  const Face &face = scene.faces[index];
  const bool several = scene.sources.size() > 1 && face.source >= 0 && size_t(face.source) < scene.sources.size();
  const std::string file = several ? scene.sources[size_t(face.source)] : std::string();
  if (face.line > 0) return several ? file + ":" + std::to_string(face.line) : "line " + std::to_string(face.line);
  size_t first = index;  // the faces of one file follow each other
  while (first > 0 && scene.faces[first - 1].source == face.source) --first;
  return (several ? file + " " : std::string()) + "face " + std::to_string(index - first);
}

}  // namespace rad
