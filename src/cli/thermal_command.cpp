// `radiosity thermal`: gray-body radiative exchange on a form-factor file: emissivities and temperatures or heat
// fluxes per material -> radiosity, irradiation, net heat flux and temperature per patch, heat rate per material.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/thermal_job.h"

namespace rad {

CommandRunner AddThermalCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "thermal", "Radiative heat transfer between gray diffuse surfaces (net-radiation method) with F distributed "
                 "over the ranks: per material an emissivity and a temperature, a net heat flux or none");
  auto o = std::make_shared<ThermalJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  o->step.tolerance = 1e-10;  // heat rates are differences of radiosities: solve them well
  cmd->add_option("--formfactors", o->formfactors,
                  "Form factors: an HDF5 file of `formfactors` (dense or sparse operator) or `export --format csr`, "
                  "or a raw, MatrixMarket or PETSc binary matrix (format found from the file's content)")
      ->required();
  AddSceneInputOptions(*cmd, o->input, "Scene F was computed for: its materials name the surfaces", true);
  AddMeshingOptions(*cmd, o->meshing, "Subdivision F was computed with (for files that hold no patches)");
  cmd->add_option("--properties", o->properties,
                  "JSON file of thermal properties by material, SI units: {\"materials\": {\"name\": {\"emissivity\": "
                  "e, \"temperature\": K | \"heat_flux\": W/m^2 | \"adiabatic\": true}, ...}}")
      ->required();
  cmd->add_option("--output", o->output,
                  "HDF5 file to write: /patches and /thermal (radiosity, irradiation, heat_flux, temperature, "
                  "emissivity per patch)")
      ->required();
  cmd->add_option("--groups-csv", o->groupsCsv,
                  "CSV file of the materials' patches, area, heat rate (W) and temperatures");
  AddSolveStepOptions(*cmd, o->step);
  CLI::Option *distribution = AddReadDistributionOption(*cmd, o->distribution);
  AddExecutionOptions(*cmd, *execution);
  AddTimingsOption(*cmd, o->timings);
  AddMemoryLimitOption(*cmd, o->memoryLimit);
  return [o, execution, distribution]() {
    o->distributionGiven = distribution->count() > 0;
    Execution exec(*execution);
    return RunThermalJob(*o, exec);
  };
}

}  // namespace rad
