// The thermal properties of `radiosity thermal --properties FILE`: per material of the scene, an emissivity and
// one boundary condition, as a JSON object (units SI):
//   {"materials": {
//      "hot":  {"emissivity": 0.8, "temperature": 1000},   fixed temperature, K
//      "wall": {"emissivity": 0.5, "heat_flux": 250},     fixed net radiative flux leaving it, W/m^2
//      "fin":  {"emissivity": 0.9, "adiabatic": true}}}   re-radiating: no net flux
// Every material that has patches must be given; a fixed temperature needs one at least (else J is not
// determined: the system is singular).
#pragma once

#include <string>
#include <vector>

#include "scene/scene.h"
#include "solver/gray_body.h"

namespace rad {

struct ThermalProperties {
  std::string path;
  std::vector<std::string> names;            // as in the file
  std::vector<SurfaceProperties> surfaces;   // in the order of `names`
  // The entry for the material named `name`, or nullptr.
  const SurfaceProperties *Find(const std::string &name) const;
};

// Reads and checks the file: InputError "<path>: <problem>" naming the material and the field.
ThermalProperties ReadThermalProperties(const std::string &path);

// Per material of `scene`, its properties (InputError naming the file and the materials it lacks among those
// in `used`, which flags the scene's materials that have patches).
std::vector<SurfaceProperties> PropertiesOfMaterials(const ThermalProperties &properties, const Scene &scene,
                                                     const std::vector<bool> &used);

}  // namespace rad
