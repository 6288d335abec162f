#include "pipeline/render_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "lightmap/lightmap_pages.h"
#include "pipeline/outputs.h"
#include "io/formfactor_input.h"
#include "util/output_lock.h"
#include "io/radiosity_file_reader.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

#include "pipeline/outputs.h"

namespace rad {

namespace {

// Collective: the lightmap of a file written by `run` on texels (/lightmap), baked from `radiance` as `run` bakes it.
std::unique_ptr<LightmapShading> ReadLightmap(const std::string &path, const std::vector<Patch> &patches,
                                              const std::vector<double> &radiance) {
  std::vector<double> texel, uv;
  double side = 0;
  OnRankZero(MPI_COMM_WORLD, [&] {
    RadiosityFileReader file(path);
    if (!file.Has("/lightmap/uv"))
      throw InputError(path + ": no /lightmap/uv: --shading lightmap needs a file of `run` on lightmap texels "
                              "(--texel-size or --lightmap-resolution)");
    texel = file.ReadDoubles("/lightmap/texel");
    uv = file.ReadDoubles("/lightmap/uv");
    for (const auto &[name, value] : file.DatasetAttributes("/lightmap"))
      if (name == "resolution") side = std::stod(value);
    if (texel.size() != 3 * patches.size() || uv.size() != 8 * patches.size() || !(side >= 1))
      throw InputError(path + ": /lightmap does not hold a texel and 4 corners' coordinates for each of the " +
                       std::to_string(patches.size()) + " patches, with its resolution");
  });
  texel.resize(3 * patches.size());
  uv.resize(8 * patches.size());
  RAD_MPI(MPI_Bcast(texel.data(), int(texel.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  RAD_MPI(MPI_Bcast(uv.data(), int(uv.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  RAD_MPI(MPI_Bcast(&side, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  std::vector<int32_t> pageColumnRow(texel.begin(), texel.end());
  int pages = 0;
  for (size_t i = 0; i < patches.size(); ++i) {
    pages = std::max(pages, pageColumnRow[3 * i] + 1);
    for (int k = 0; k < 3; ++k)
      if (pageColumnRow[3 * i + size_t(k)] < 0 || (k > 0 && pageColumnRow[3 * i + size_t(k)] >= int(side)))
        throw InputError(path + ": /lightmap/texel of patch " + std::to_string(i) + " lies outside its page");
  }
  return std::make_unique<LightmapShading>(MakeLightmapShading(int(side), pages, patches, pageColumnRow,
                                                               std::vector<float>(uv.begin(), uv.end()), radiance));
}

}  // namespace

int RunRenderJob(RenderJobOptions o, Execution &exec) {
  PhaseTimers &timers = exec.Timers();
  o.step.backend = exec.UsedBackend();
  CheckOutputsDistinct({{"--radiosity", o.radiosity}}, {{"--output", o.step.png}, {"--exr", o.step.exr},
                                                        {"--ply", o.step.ply}, {"--timings", o.timings}});
  const OutputLocks locks(MPI_COMM_WORLD, {o.step.png, o.step.exr, o.step.ply, o.timings});
  CheckRenderOutputs(o.step);
  if (!o.timings.empty()) CheckOutputPath("--timings", o.timings);

  std::vector<Patch> patches;
  std::vector<double> radiance;
  std::string scene;
  {
    ScopedPhase phase(timers, "input I/O");
    OnRankZero(MPI_COMM_WORLD, [&] {
      RadiosityFileReader file(o.radiosity);
      if (!file.Complete()) throw InputError(o.radiosity + ": incomplete file (complete != 1): the writer did not finish");
      if (!file.Has("/radiosity/B")) throw InputError(o.radiosity + ": no /radiosity/B (run `radiosity solve` first)");
      patches = file.ReadPatches();
      radiance = file.ReadDoubles("/radiosity/B");
      for (size_t k = 0; k < radiance.size(); ++k)
        if (!(radiance[k] >= 0) || !std::isfinite(radiance[k]))
          throw InputError(o.radiosity + ": /radiosity/B of patch " + std::to_string(k / 3) +
                           " is not a finite number >= 0");
      if (radiance.size() != 3 * patches.size())
        throw InputError(o.radiosity + ": /radiosity/B has " + std::to_string(radiance.size()) + " values for " +
                         std::to_string(patches.size()) + " patches");
      scene = file.RootString("input");
    });
    BroadcastPatches(MPI_COMM_WORLD, patches);
    radiance.resize(3 * patches.size());
    RAD_MPI(MPI_Bcast(radiance.data(), int(radiance.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
    BroadcastString(MPI_COMM_WORLD, scene);
  }
  std::unique_ptr<LightmapShading> lightmap;
  if (o.step.shading == Shading::kLightmap) {
    ScopedPhase phase(timers, "input I/O");
    lightmap = ReadLightmap(o.radiosity, patches, radiance);
  }
  exec.AnnounceBackend();
  RenderStep(o.step, patches, radiance, scene, timers, exec.Quiet(), lightmap.get());
  timers.Add("total", Now() - exec.Start());
  if (!exec.Quiet() || !o.timings.empty())
    timers.Report(MPI_COMM_WORLD, "render", "total", o.timings, {{"patches", std::to_string(patches.size())}});
  return 0;
}


}  // namespace rad
