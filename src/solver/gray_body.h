// Radiative exchange between gray diffuse surfaces by the net-radiation method (Hottel; Siegel and Howell,
// "Thermal Radiation Heat Transfer", ch. 6; Incropera, sec. 13.3). Each patch i has an emissivity eps_i and one
// boundary condition, and its radiosity J_i (W/m^2, all it leaves: emitted plus reflected) satisfies
//   J_i = eps_i sigma T_i^4 + (1 - eps_i) G_i,   G_i = sum_j F_ij J_j   (irradiation, W/m^2)
// with the net flux it loses by radiation q_i = J_i - G_i (W/m^2; positive: heat must be supplied to it).
//  - fixed temperature T:  J = eps sigma T^4 + (1 - eps) F J   ->  E = eps sigma T^4, rho = 1 - eps
//  - fixed net flux q:     J = q + F J                          ->  E = q,             rho = 1
//  - adiabatic (q = 0, re-radiating): J = F J                   ->  E = 0,             rho = 1
// so J is the solution of the radiosity system B = E + rho F B that the solvers already solve; no iteration on
// T^4 is needed: with these conditions the system is linear in J and sigma T^4. A surface of fixed flux then
// has sigma T^4 = J + (1 - eps) / eps q (from both equations), and an adiabatic one sigma T^4 = J = G.
#pragma once

#include <cmath>

namespace rad {

// W m^-2 K^-4 (CODATA 2018; exact in the SI since 2019, being made of h, c and k).
constexpr double kStefanBoltzmann = 5.670374419e-8;

enum class ThermalCondition { kTemperature, kHeatFlux, kAdiabatic };

struct SurfaceProperties {
  double emissivity = 1;  // hemispherical, gray: in [0, 1] (above 0 for a fixed flux other than 0)
  ThermalCondition condition = ThermalCondition::kTemperature;
  double temperature = 0;  // K, for kTemperature
  double heatFlux = 0;     // W/m^2 leaving by radiation, for kHeatFlux
};

// The patch's row of the radiosity system: B = E + rho F B with B = J.
inline void NetRadiationSystem(const SurfaceProperties &s, double &emission, double &reflectance) {
  switch (s.condition) {
    case ThermalCondition::kTemperature:
      emission = s.emissivity * kStefanBoltzmann * std::pow(s.temperature, 4);
      reflectance = 1 - s.emissivity;
      return;
    case ThermalCondition::kHeatFlux:
      emission = s.heatFlux;
      reflectance = 1;
      return;
    case ThermalCondition::kAdiabatic:
      emission = 0;
      reflectance = 1;
      return;
  }
}

// The surface's temperature (K) from its radiosity J and net flux q: the given one for a fixed temperature.
inline double SurfaceTemperature(const SurfaceProperties &s, double radiosity, double netFlux) {
  switch (s.condition) {
    case ThermalCondition::kTemperature:
      return s.temperature;
    case ThermalCondition::kHeatFlux:
      if (s.emissivity > 0)
        return std::pow((radiosity + (1 - s.emissivity) / s.emissivity * netFlux) / kStefanBoltzmann, 0.25);
      return std::pow(radiosity / kStefanBoltzmann, 0.25);  // a perfect reflector of flux 0: as adiabatic
    case ThermalCondition::kAdiabatic:
      return std::pow(radiosity / kStefanBoltzmann, 0.25);
  }
  return NAN;
}

}  // namespace rad
