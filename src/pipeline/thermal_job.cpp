#include "pipeline/thermal_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "io/radiosity_file.h"
#include "pipeline/formfactor_source.h"
#include "pipeline/outputs.h"
#include "pipeline/patch_groups.h"
#include "pipeline/thermal_properties.h"
#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"
#include "util/output_lock.h"

namespace rad {

namespace {

// Per material with patches: how many, their area, heat rate and temperatures.
struct MaterialTotals {
  long long patches = 0;
  double area = 0, heatRate = 0, areaTemperature = 0;
  double minTemperature = HUGE_VAL, maxTemperature = -HUGE_VAL;
};

std::string GroupsTable(const Scene &scene, const std::vector<MaterialTotals> &totals) {
  std::ostringstream out;
  out.precision(17);
  out << "material,patches,area_m2,heat_rate_w,mean_temperature_k,min_temperature_k,max_temperature_k\n";
  for (size_t m = 0; m < totals.size(); ++m) {
    const MaterialTotals &t = totals[m];
    if (t.patches == 0) continue;
    out << '"' << scene.materials[m].name << "\"," << t.patches << ',' << t.area << ',' << t.heatRate << ','
        << t.areaTemperature / t.area << ',' << t.minTemperature << ',' << t.maxTemperature << '\n';
  }
  return out.str();
}

}  // namespace

int RunThermalJob(ThermalJobOptions o, Execution &exec) {
  PhaseTimers &timers = exec.Timers();
  o.step.backend = exec.UsedBackend();
  std::vector<NamedPath> inputs = SceneInputPaths(o.input.files, o.input.materials);
  inputs.push_back({"--formfactors", o.formfactors});
  inputs.push_back({"--properties", o.properties});
  CheckOutputsDistinct(inputs, {{"--output", o.output}, {"--timings", o.timings}, {"--groups-csv", o.groupsCsv}});
  const OutputLocks locks(MPI_COMM_WORLD, {o.output, o.timings, o.groupsCsv});
  CheckOutputPath("--output", o.output);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);
  if (!o.groupsCsv.empty()) CheckOutputPath("--groups-csv", o.groupsCsv);

  const ThermalProperties properties = ReadThermalProperties(o.properties);
  Scene scene;
  FormFactorInput in;
  MemoryBudget memory;
  {
    ScopedPhase phase(timers, "input I/O");
    scene = LoadSceneInput(o.input);
    in = ReadFormFactorFile(o.formfactors, o.input, o.meshing, o.distribution,
                            CheckMemoryBeforeReading(o.formfactors, o.memoryLimit, o.distribution, {}, memory), true,
                            !o.distributionGiven);
  }
  // The hierarchical operator's far field as entries: the irradiation G = F J below reads rows of entries.
  if (SpreadFarLinks(in.f, o.formfactors, o.memoryLimit) > 0 && exec.Talks())
    std::fprintf(stderr, "radiosity: thermal: the hierarchical operator's far links spread into entries (%s)\n",
                 o.formfactors.c_str());
  const std::string sceneLabel = o.input.Label();
  const std::vector<int> material = MaterialOfPatches(scene, in.patches, sceneLabel);
  std::vector<bool> used(scene.materials.size(), false);
  for (int m : material) used[size_t(m)] = true;
  const std::vector<SurfaceProperties> ofMaterial = PropertiesOfMaterials(properties, scene, used);
  const long long n = in.PatchCount();

  // The net-radiation system as a radiosity system, in the first channel (the others emit nothing).
  std::vector<Patch> system = in.patches;
  bool determined = false;
  for (size_t i = 0; i < system.size(); ++i) {
    const SurfaceProperties &s = ofMaterial[size_t(material[i])];
    double e = 0, rho = 0;
    NetRadiationSystem(s, e, rho);
    system[i].emission = Vec3{e, 0, 0};
    system[i].reflectance = Vec3{rho, rho, rho};
    determined = determined || (s.condition == ThermalCondition::kTemperature && s.emissivity > 0);
  }
  if (!determined && n > 0)
    throw InputError(o.properties + ": no surface with patches has a fixed temperature and an emissivity above 0: "
                     "the radiosities are then not determined (give one surface a temperature)");
  if (exec.Talks())
    std::fprintf(stderr, "radiosity: thermal: %s (%s): %lld patches, %zu material(s), %d rank(s) x %d thread(s)\n",
                 o.formfactors.c_str(), in.layout.c_str(), n, size_t(std::count(used.begin(), used.end(), true)),
                 exec.Ranks(), exec.Threads());
  exec.AnnounceBackend();

  SolverResult result;
  try {
    result = SolveStep(o.step, system, in.f, timers, exec.Quiet());
  } catch (const SolveFailed &e) {
    if (WorldRank() == 0) std::fprintf(stderr, "radiosity: error: %s; nothing written\n", e.what());
    return kExitNotConverged;
  }

  // Irradiation G = F J from each rank's rows, then the net flux and temperature of every patch.
  const size_t count = size_t(n);
  std::vector<double> J(count), G(count, 0.0), q(count), T(count), eps(count);
  for (long long i = 0; i < n; ++i) J[size_t(i)] = result.radiance[3 * size_t(i)];
  {
    ScopedPhase phase(timers, "thermal fluxes");
    std::vector<double> mine(count, 0.0);
    for (size_t r = 0; r < in.f.rows.size(); ++r) mine[size_t(in.f.rows[r])] = in.f.RowDot(r, J.data());
    RAD_MPI(MPI_Allreduce(mine.data(), G.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  }
  std::vector<MaterialTotals> totals(scene.materials.size());
  double balance = 0, exchanged = 0;  // sum of A q, and of |A q|
  for (size_t i = 0; i < count; ++i) {
    const SurfaceProperties &s = ofMaterial[size_t(material[i])];
    q[i] = J[i] - G[i];
    T[i] = SurfaceTemperature(s, J[i], q[i]);
    eps[i] = s.emissivity;
    const double area = in.patches[i].area;
    balance += area * q[i];
    exchanged += std::fabs(area * q[i]);
    MaterialTotals &t = totals[size_t(material[i])];
    ++t.patches;
    t.area += area;
    t.heatRate += area * q[i];
    t.areaTemperature += area * T[i];
    t.minTemperature = std::min(t.minTemperature, T[i]);
    t.maxTemperature = std::max(t.maxTemperature, T[i]);
  }
  const double imbalance = exchanged > 0 ? std::fabs(balance) / exchanged : 0;

  {
    ScopedPhase phase(timers, "output I/O");
    RadiosityFileWriter writer(MPI_COMM_WORLD, o.output);
    Attributes file;
    file.strings["input"] = in.scene.empty() ? sceneLabel : in.scene;
    file.strings["formfactors"] = o.formfactors;
    file.strings["thermal_properties"] = o.properties;
    writer.WriteFileAttributes(file);
    writer.WritePatches(in.patches);
    Attributes a = SolverAttributes(o.step, result);
    a.strings["units"] = "radiosity, irradiation, heat_flux: W/m^2 (heat_flux: net radiative flux leaving the "
                         "surface); temperature: K";
    a.numbers["stefan_boltzmann"] = kStefanBoltzmann;
    a.numbers["heat_rate_sum_w"] = balance;
    a.numbers["heat_rate_abs_sum_w"] = exchanged;
    writer.WritePatchValues("thermal", {{"radiosity", J}, {"irradiation", G}, {"heat_flux", q}, {"temperature", T},
                                        {"emissivity", eps}}, a);
    writer.Commit();
  }
  if (!o.groupsCsv.empty())
    OnRankZero(MPI_COMM_WORLD, [&] { WriteFileAtomically(o.groupsCsv, GroupsTable(scene, totals), "the table of groups"); });

  if (exec.Talks()) {
    std::fprintf(stderr, "radiosity: thermal: %-24s %10s %14s %14s %12s\n", "material", "patches", "area (m^2)",
                 "heat rate (W)", "mean T (K)");
    for (size_t m = 0; m < totals.size(); ++m)
      if (totals[m].patches > 0)
        std::fprintf(stderr, "radiosity: thermal: %-24s %10lld %14.6g %14.6g %12.6g\n", scene.materials[m].name.c_str(),
                     totals[m].patches, totals[m].area, totals[m].heatRate, totals[m].areaTemperature / totals[m].area);
    std::fprintf(stderr,
                 "radiosity: thermal: energy balance: sum of A q = %.6g W, %.3g of sum |A q| = %.6g W (0 in a closed "
                 "enclosure, to the solver's tolerance and the row sums of F)\n",
                 balance, imbalance, exchanged);
  }
  timers.Add("total", Now() - exec.Start());
  char text[64];
  std::snprintf(text, sizeof text, "%d (%s)", result.iterations, SolverMethodName(o.step.solver));
  std::vector<std::pair<std::string, std::string>> extra = {{"patches", std::to_string(n)}, {"iterations", text}};
  std::snprintf(text, sizeof text, "%.6g W (%.3g relative)", balance, imbalance);
  extra.push_back({"energy balance", text});
  timers.Report(MPI_COMM_WORLD, "thermal", "total", o.timings, extra);
  return FinishSolve(result);
}

}  // namespace rad
