#include "pipeline/run_job.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "lightmap/lightmap_pages.h"
#include "pipeline/lightmap_stage.h"
#include "pipeline/outputs.h"
#include "pipeline/solve_checkpoint.h"
#include "util/output_lock.h"
#include "util/agree.h"
#include "util/error.h"

namespace rad {

namespace {


std::string In(const std::string &dir, const char *name) { return (std::filesystem::path(dir) / name).string(); }

// The checkpoint folder of refinement pass `pass` > 0 (pass 0's is the folder itself, as without --refine).
std::string RefinePassFolder(const std::string &dir, int pass) {
  return (std::filesystem::path(dir) / ("refine-pass-" + std::to_string(pass))).string();
}

// Collective: removes the folder `dir` if it is empty (the checkpoints in it removed).
void RemoveEmptyFolder(const std::string &dir) {
  OnRankZero(MPI_COMM_WORLD, [&] {
    std::error_code ignored;
    if (std::filesystem::is_empty(dir, ignored)) std::filesystem::remove(dir, ignored);
  });
}

// A short text summary for people (the JSON timings are for scripts).
void WriteSummary(const std::string &path, const FormFactorJob &job, const Execution &exec,
                  const SolverResult &result, const RunJobOptions &o, const std::vector<PhaseTimers::Summary> &phases,
                  const std::string &refinement) {
  std::ofstream out(path);
  out << "radiosity run " << RAD_VERSION << "\n";
  out << "input: " << o.formFactors.input.Label() << " (" << job.UsedMeshing().Describe() << ")\n";
  out << "patches: " << job.PatchCount() << "\n";
  if (!refinement.empty()) out << "refinement: " << refinement << "\n";
  out << "ranks x threads: " << exec.Ranks() << " x " << exec.Threads() << "\n";
  const ClosureStats c = job.Closure();
  out << "row sums of F: min " << c.minRowSum << " mean " << c.meanRowSum << " max " << c.maxRowSum << "\n";
  out << "solver: " << SolverMethodName(o.solve.solver) << ", " << result.iterations << " iterations, relative residual "
      << result.finalResidual << (result.status == SolverStatus::kConverged ? " (converged)" : " (NOT converged)")
      << "\n";
  out << "phases (seconds, slowest rank):\n";
  for (const auto &p : phases) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-22s %10.3f  %5.1f%%\n", p.phase.c_str(), p.max, 100 * p.share);
    out << line;
  }
  if (!out) throw InputError(path + ": cannot write the summary");
}

}  // namespace

int RunWholeJob(RunJobOptions o, Execution &exec) {
  const bool texels = o.formFactors.meshing.texelSize > 0 || o.formFactors.meshing.lightmapResolution > 0;
  if (o.render.shading == Shading::kLightmap && !texels)
    throw InputError("--shading lightmap needs patches that are lightmap texels (--texel-size or --lightmap-resolution)");
  const OutputFolder folder(o.outputDir);  // removed again, if made here, when the job stops before writing
  const OutputLocks locks(MPI_COMM_WORLD, {In(o.outputDir, "radiosity.h5")});  // one run per folder
  // A later pass's checkpoint without --restart is refused now, not once the passes before it are computed.
  for (int pass = 1; pass <= o.refine.passes && o.formFactors.checkpoint.On(); ++pass) {
    CheckpointOptions later = o.formFactors.checkpoint;
    later.dir = RefinePassFolder(later.dir, pass);
    RowCheckpoint::RefuseUnlessRestarting(MPI_COMM_WORLD, later);
  }
  o.formFactors.timings = In(o.outputDir, "timings.json");
  if (o.raw) o.formFactors.raw = In(o.outputDir, "formfactors");
  o.render.png = In(o.outputDir, "image.png");
  o.render.exr = In(o.outputDir, "image.exr");
  if (o.ply) o.render.ply = In(o.outputDir, "radiosity.ply");
  const std::string radiosityPath = In(o.outputDir, "radiosity.h5");
  const bool quiet = exec.Quiet();

  // Beyond dense, `run` takes the far links: nothing dropped.
  o.formFactors.beyondDense = FormFactorOperator::kHierarchical;
  std::unique_ptr<FormFactorJob> job;
  SolverResult result;
  std::vector<RefinementPass> passes;
  // With --refine, each pass's F (on its own patches) is checkpointed in a folder of its own, and kept until the
  // outputs are complete: a restart computes nothing again, the passes before the one stopped read their rows
  // back and solve again (cheap beside F) to the same B, and so to the same refined patches.
  const std::string checkpointDir = o.formFactors.checkpoint.dir;
  std::vector<FormFactorJob::HeldCheckpoint> passCheckpoints;  // each locked until it is removed
  for (int pass = 0;; ++pass) {
    if (pass > 0 && o.formFactors.checkpoint.On()) o.formFactors.checkpoint.dir = RefinePassFolder(checkpointDir, pass);
    job.reset();  // the last pass's rows go before the next pass's are checked against the memory
    job = std::make_unique<FormFactorJob>(o.formFactors, exec);
    try {
      if (o.formFactors.hemicubeGather) {
        result = job->RunGathering(o.solve.tolerance, o.solve.maxIterations);
        o.solve.backend = o.render.backend = exec.UsedBackend();
        if (result.status == SolverStatus::kDiverged) throw SolveFailed(result.message);
        if (WorldRank() == 0 && !quiet) std::fprintf(stderr, "radiosity: gathering: %s\n", result.message.c_str());
      } else {
        job->Run();
        o.solve.backend = o.render.backend = exec.UsedBackend();  // --backend: one choice for the whole job
        // With the rows' checkpoint, the solver's iterate. PETSc's Krylov solve keeps none: no keeper, so that a
        // signal during it is not held until it ends.
        std::unique_ptr<SolveCheckpoint> kept;
        if (job->Checkpoint() != nullptr && o.solve.solver != SolverMethod::kGmres)
          kept = std::make_unique<SolveCheckpoint>(MPI_COMM_WORLD, *job->Checkpoint(), o.formFactors.checkpoint,
                                                   SolverOptionsFor(o.solve, quiet), job->Rows().rows, exec.Talks());
        result = SolveStep(o.solve, job->Geometry().patches, job->Rows(), exec.Timers(), quiet, kept.get());
        if (kept) kept->Finish();
      }
    } catch (const SolveFailed &e) {
      if (WorldRank() == 0) std::fprintf(stderr, "radiosity: error: %s; nothing written\n", e.what());
      return kExitNotConverged;
    }
    if (pass == o.refine.passes) break;
    RefinementPass done;
    std::vector<Patch> refined;
    {
      ScopedPhase phase(exec.Timers(), "refinement");
      refined = RefineWhereRadianceVaries(job->Geometry().patches, result.radiance, o.refine, done);
    }
    passes.push_back(done);
    if (WorldRank() == 0 && !quiet) {
      const std::string stopped =
          done.tooSmall > 0 ? ", " + std::to_string(done.tooSmall) + " more at --refine-min-size" : "";
      std::fprintf(stderr,
                   "radiosity: refinement pass %d of %d: %lld of %lld patches split where B steps by more than %g "
                   "of its mean (largest step %.3g%s); %zu patches\n",
                   pass + 1, o.refine.passes, done.split, done.patches, o.refine.contrast, done.largestStep,
                   stopped.c_str(), refined.size());
    }
    if (done.split == 0) break;  // nothing varies enough: this solve is the answer
    passCheckpoints.push_back(job->ReleaseCheckpoint());
    o.formFactors.meshing = job->UsedMeshing();  // --patches resolved once, for the first pass
    o.formFactors.meshing.refined = std::make_shared<const std::vector<Patch>>(std::move(refined));
    o.formFactors.meshing.refinePasses = pass + 1;
  }
  const std::vector<Patch> &patches = job->Geometry().patches;
  const std::string refinement = passes.empty() ? "" : DescribeRefinement(passes, (long long)patches.size());

  // On texels, the lightmap they make.
  std::unique_ptr<LightmapLayout> lightmap;
  if (job->UsedMeshing().texelSize > 0)
    lightmap = std::make_unique<LightmapLayout>(job->LoadedScene(), job->UsedMeshing(), patches.size());
  std::string written = "radiosity.h5,radiosity.xmf,image.png,image.exr,timings.json,summary.txt";
  {
    ScopedPhase phase(exec.Timers(), "output I/O");
    RadiosityFileWriter writer(MPI_COMM_WORLD, radiosityPath);
    Attributes file;
    file.strings["input"] = o.formFactors.input.Attribute();
    if (!o.formFactors.input.materials.empty()) file.strings["materials"] = o.formFactors.input.materials;
    if (o.refine.passes == 0) job->AddSceneStamp(file);  // refined patches are not the meshing's: no stamp
    if (o.refine.passes > 0) {  // the patches are the refined ones: how they were made
      file.numbers["refine_passes"] = double(passes.size());
      file.numbers["refine_contrast"] = o.refine.contrast;
      file.numbers["refine_min_size"] = o.refine.minSize;
    }
    writer.WriteFileAttributes(file);
    writer.WritePatches(patches);
    if (lightmap) WriteLightmapTexels(writer, *lightmap);
    if (o.saveFormFactors) job->WriteFormFactors(writer);
    writer.WriteRadiosity(result.radiance, result.residuals, SolverAttributes(o.solve, result));
    writer.Commit();
    if (o.raw) job->WriteRaw(o.formFactors.raw);
    if (lightmap)
      OnRankZero(MPI_COMM_WORLD, [&] {
        for (const std::string &name : WriteLightmapFiles(o.outputDir, job->LoadedScene(), *lightmap, patches,
                                                          result.radiance, o.render.exposure))
          written += "," + name;
      });
  }
  std::unique_ptr<LightmapShading> shading;  // --shading lightmap: the image drawn from the baked lightmap
  if (lightmap && o.render.shading == Shading::kLightmap)
    shading = std::make_unique<LightmapShading>(MakeLightmapShading(lightmap->atlas.pageSize, lightmap->atlas.pageCount,
                                                                    patches, lightmap->pageColumnRow, lightmap->uv,
                                                                    result.radiance));
  RenderStep(o.render, patches, result.radiance, o.formFactors.input.Attribute(), exec.Timers(), quiet, shading.get());

  char text[64];
  std::snprintf(text, sizeof text, "%d (%s), residual %.3e", result.iterations, SolverMethodName(o.solve.solver),
                result.finalResidual);
  std::vector<std::pair<std::string, std::string>> extra = {{"solver iterations", text}};
  if (!refinement.empty()) extra.emplace_back("refinement", refinement);
  job->Report("run", extra);
  const std::vector<PhaseTimers::Summary> phases = exec.Timers().Reduce(MPI_COMM_WORLD, "total");
  OnRankZero(MPI_COMM_WORLD, [&] { WriteSummary(In(o.outputDir, "summary.txt"), *job, exec, result, o, phases, refinement); });
  if (WorldRank() == 0 && !quiet) std::fprintf(stderr, "radiosity: wrote %s/{%s}\n", o.outputDir.c_str(), written.c_str());
  // Every pass's checkpoint, the last pass's first: a folder holding a later pass's checkpoint then always holds
  // the first pass's, which refuses a run without --restart before it computes anything.
  passCheckpoints.push_back(job->ReleaseCheckpoint());
  for (size_t pass = passCheckpoints.size(); pass-- > 0;) {
    if (passCheckpoints[pass].rows) passCheckpoints[pass].rows->Remove();
    passCheckpoints[pass].lock.reset();  // a file in the pass's folder
    if (pass > 0) RemoveEmptyFolder(RefinePassFolder(checkpointDir, int(pass)));
  }
  return FinishSolve(result);
}


}  // namespace rad
