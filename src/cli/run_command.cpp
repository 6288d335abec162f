// `radiosity run`: the whole pipeline in one job, the form-factor matrix staying in memory (each rank its own
// rows): scene -> F -> distributed solve -> image. Writes radiosity.h5, image.png, image.exr, timings.json and
// summary.txt into the output folder.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "pipeline/run_job.h"

namespace rad {

CommandRunner AddRunCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "run", "The whole job: form factors (kept in memory), distributed solve and image, into one output folder");
  auto o = std::make_shared<RunJobOptions>();
  auto execution = std::make_shared<ExecutionOptions>();
  o->formFactors.meshing.subdiv = 3;  // a job that ends in an image needs patches smaller than the polygons
  AddFormFactorJobOptions(*cmd, o->formFactors, false);
  AddCheckpointOptions(*cmd, o->formFactors.checkpoint);
  cmd->add_option("--output-dir", o->outputDir,
                  "Folder for radiosity.h5, image.png, image.exr, timings.json, summary.txt (created if missing)")
      ->required();
  cmd->add_flag("--save-formfactors", o->saveFormFactors,
                "Also store F in radiosity.h5 (/formfactors/F, or CSR with the sparse operator, and far links with "
                "the hierarchical one)");
  cmd->add_flag("--raw", o->raw, "Also write F as the reference paper's raw file `formfactors` in the folder");
  cmd->add_flag("--ply", o->ply, "Also write radiosity.ply: the patch mesh with per-vertex radiance");
  auto *refine = cmd->add_option("--refine", o->refine.passes,
                  "Passes of adaptive refinement: after the solve, split in four the patches whose B differs from a "
                  "neighbour's (touching, coplanar, same material) by more than --refine-contrast, and compute F and "
                  "B again on them (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 12));
  refine->excludes("--texel-size")->excludes("--lightmap-resolution");  // texels are a lightmap's grid: split, they would no longer be one
  cmd->add_option("--refine-contrast", o->refine.contrast,
                  "The step in B between neighbours that splits them, as a share of the scene's mean reflected B "
                  "(area-weighted, channel by channel)")
      ->capture_default_str()->check(CLI::Range(1e-6, 1e6));
  cmd->add_option("--refine-min-size", o->refine.minSize,
                  "Split no patch into ones whose longest edge is below this length (0: no limit but --refine)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e30));
  AddChoice(*cmd, "--hemicube-mode", o->formFactors.hemicubeGather, {{"rows", false}, {"gather", true}},
            "--method hemicube: rows (build the sparse rows once and iterate them: the fast way) or gather (no F: "
            "every iteration traces every hemicube again, Jacobi; memory O(patches), for scenes that change)");
  AddSolveStepOptions(*cmd, o->solve);
  AddRenderStepOptions(*cmd, o->render);
  AddExecutionOptions(*cmd, *execution);
  cmd->get_option("--hemicube-mode")->excludes("--save-formfactors");  // gathering keeps no F
  return [o, execution]() {
    Execution exec(*execution);
    return RunWholeJob(*o, exec);
  };
}

}  // namespace rad
