#include "pipeline/thermal_properties.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>

#include "util/error.h"

namespace rad {

namespace {

[[noreturn]] void Fail(const std::string &path, const std::string &problem) { throw InputError(path + ": " + problem); }

double Number(const std::string &path, const std::string &name, const nlohmann::json &entry, const char *field) {
  const nlohmann::json &value = entry.at(field);
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    Fail(path, "material \"" + name + "\": \"" + field + "\" must be a finite number");
  return value.get<double>();
}

}  // namespace

const SurfaceProperties *ThermalProperties::Find(const std::string &name) const {
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return &surfaces[k];
  return nullptr;
}

ThermalProperties ReadThermalProperties(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "cannot open the thermal properties (missing or unreadable)");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    Fail(path, std::string("malformed JSON (") + e.what() + ")");
  }
  const char *shape =
      "thermal properties are {\"materials\": {\"name\": {\"emissivity\": e, \"temperature\": K | \"heat_flux\": "
      "W/m^2 | \"adiabatic\": true}, ...}}";
  if (!j.is_object() || !j.contains("materials") || !j["materials"].is_object()) Fail(path, shape);
  for (const auto &[key, value] : j.items())
    if (key != "materials") Fail(path, "unknown key \"" + key + "\" (" + shape + ")");
  ThermalProperties p;
  p.path = path;
  for (const auto &[name, entry] : j["materials"].items()) {
    const std::string where = "material \"" + name + "\"";
    if (!entry.is_object()) Fail(path, where + " must be an object (" + shape + ")");
    for (const auto &[key, value] : entry.items())
      if (key != "emissivity" && key != "temperature" && key != "heat_flux" && key != "adiabatic")
        Fail(path, where + ": unknown key \"" + key + "\" (emissivity, temperature, heat_flux, adiabatic)");
    SurfaceProperties s;
    if (!entry.contains("emissivity")) Fail(path, where + ": \"emissivity\" is missing");
    s.emissivity = Number(path, name, entry, "emissivity");
    if (!(s.emissivity >= 0 && s.emissivity <= 1)) Fail(path, where + ": \"emissivity\" must be in [0, 1]");
    const int given = int(entry.contains("temperature")) + int(entry.contains("heat_flux")) +
                      int(entry.contains("adiabatic"));
    if (given != 1)
      Fail(path, where + ": give exactly one of \"temperature\" (K), \"heat_flux\" (W/m^2) and \"adiabatic\": true");
    if (entry.contains("temperature")) {
      s.condition = ThermalCondition::kTemperature;
      s.temperature = Number(path, name, entry, "temperature");
      if (!(s.temperature >= 0)) Fail(path, where + ": \"temperature\" is in kelvin and must be 0 or more");
    } else if (entry.contains("heat_flux")) {
      s.condition = ThermalCondition::kHeatFlux;
      s.heatFlux = Number(path, name, entry, "heat_flux");
      if (s.emissivity == 0 && s.heatFlux != 0)
        Fail(path, where + ": a surface of emissivity 0 reflects all it receives: its net flux can only be 0");
    } else {
      if (entry["adiabatic"] != true) Fail(path, where + ": \"adiabatic\" can only be true");
      s.condition = ThermalCondition::kAdiabatic;
    }
    p.names.push_back(name);
    p.surfaces.push_back(s);
  }
  return p;
}

std::vector<SurfaceProperties> PropertiesOfMaterials(const ThermalProperties &properties, const Scene &scene,
                                                     const std::vector<bool> &used) {
  std::vector<SurfaceProperties> out(scene.materials.size());
  std::string missing;
  for (size_t m = 0; m < scene.materials.size(); ++m) {
    if (!used[m]) continue;
    const std::string &name = scene.materials[m].name;
    if (const SurfaceProperties *s = properties.Find(name)) out[m] = *s;
    else missing += (missing.empty() ? "\"" : ", \"") + name + "\"";
  }
  if (!missing.empty())
    Fail(properties.path, "no thermal properties for the scene's material(s) " + missing +
                              " (every material with patches needs an emissivity and a condition)");
  return out;
}

}  // namespace rad
