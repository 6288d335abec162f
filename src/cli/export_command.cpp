// `radiosity export`: the form-factor matrix in formats other solvers read: MatrixMarket (scipy, Matlab, Julia),
// PETSc's binary format (MatLoad), the reference paper's raw file, or CSR inside the project's HDF5 file. Every
// rank reads its own contiguous block of rows and writes its part of the output at offsets found with
// MPI_Exscan, one row block at a time. `--drop-below X` leaves out entries with |F_ij| < X and reports the
// energy that removes from each row (never renormalising what is left).
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/export_job.h"

namespace rad {

CommandRunner AddExportCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "export", "Write the form-factor matrix as MatrixMarket, PETSc binary, raw, or CSR in HDF5, for other solvers; or "
      "view factors between groups (CSV, EnergyPlus) or an OpenFOAM case's faces");
  auto o = std::make_shared<ExportJobOptions>();
  cmd->add_option("--formfactors", o->formfactors,
                  "Form factors to export: any file `solve` reads (HDF5 dense or CSR; raw, MatrixMarket or PETSc "
                  "with --input and --subdiv)")
      ->required();
  cmd->add_option("--format", o->format,
                  "mtx (MatrixMarket coordinate), petsc (PETSc binary for MatLoad), raw (the paper's int32 N + N*N "
                  "float64), csr (HDF5: /formfactors/indptr, indices, data); or the view factors between groups of "
                  "patches (--groups): groups (a CSV matrix), energyplus (ZoneProperty:UserViewFactors:"
                  "BySurfaceName for --zone); or openfoam: the view factors between the viewFactorWall faces of the OpenFOAM "
                  "case --input, written into --output's constant/ (F, globalFaceFaces, mapDist, finalAgglom) for "
                  "its viewFactor radiation model")
      ->required()->check(CLI::IsMember({"mtx", "petsc", "raw", "csr", "groups", "energyplus", "openfoam"}));
  cmd->add_option("--groups", o->groups,
                  "groups and energyplus: the patches of each input polygon ('polygon', named \"polygon K\") or of "
                  "each material ('material', with --input; name a material after each EnergyPlus surface)")
      ->capture_default_str()->check(CLI::IsMember({"polygon", "material"}));
  cmd->add_option("--zone", o->zone, "energyplus: the Zone or ZoneList name the view factors are for");
  cmd->add_option("--output", o->output, "File to write (written as OUTPUT.partial, renamed when complete); "
                  "openfoam: the case folder")
      ->required();
  cmd->add_option("--drop-below", o->dropBelow,
                  "Leave out entries with |F_ij| below this (0 in raw); report the energy dropped per row")
      ->capture_default_str();
  cmd->add_option("--precision", o->precision, "csr only: stored precision of data, double or float "
                  "(default: that of the source)")
      ->check(CLI::IsMember({"double", "float"}));
  AddSceneInputOptions(*cmd, o->input, "Scene of a raw, MatrixMarket or PETSc source (its patches)", false);
  AddMeshingOptions(*cmd, o->meshing, "Subdivision of such a source");
  AddQuietOption(*cmd, o->quiet, "No progress lines (the summary still goes to stdout)");
  AddMemoryLimitOption(*cmd, o->memoryLimit);
  return [o]() { return RunExportJob(*o); };
}

}  // namespace rad
