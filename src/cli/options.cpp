#include "cli/options.h"

#include <cmath>

namespace rad {

void AddSceneInputOptions(CLI::App &cmd, SceneInput &o, const std::string &help, bool required) {
  auto *input = cmd.add_option("--input", o.files,
                               help + ": OBJ (with its MTL), STL, PLY, OFF or glTF (.gltf, .glb), by the extension, or an "
                                      "OpenFOAM case folder (its viewFactorWall faces); several files (--input A B, or --input A --input B) make one scene");
  if (required) input->required();
  auto *materials = cmd.add_option(
      "--materials", o.materials,
      "JSON materials by name for the STL, PLY, OFF and glTF files: {\"name\": {\"Kd\": [r, g, b], "
      "\"Ke\": [r, g, b]}}; a name is an object's (STL solid, glTF node or mesh), a glTF material's or a file's; "
      "\"two_sided\": true or \"obstruction\": true give a role, to OBJ materials of that name too");
  materials->needs(input);
  cmd.add_flag("--strict", o.strict,
               "Refuse polygons that would be mended (non-planar or concave ones triangulated, zero-area or "
               "degenerate ones skipped, duplicated faces dropped) instead of mending them with a warning");
}

namespace {

// CLI11's PositiveNumber names its range up to DBL_MAX in full; this says what the option wants in words.
CLI::Validator PositiveValue(const std::string &what) {
  return CLI::Validator(
      [what](std::string &text) {
        double value = 0;
        const bool ok = CLI::detail::lexical_cast(text, value) && value > 0 && std::isfinite(value);
        return ok ? std::string() : "must be " + what + ", not '" + text + "'";
      },
      "POSITIVE");
}

}  // namespace

void RejectNonFiniteNumbers(CLI::App &app) {
  // NaN passes every range check (each comparison with it is false): `--quadrature-tolerance nan` ran forever.
  const CLI::Validator finite(
      [](std::string &text) {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && !std::isfinite(value))
          return "must be a finite number, not '" + text + "'";
        return std::string();
      },
      "");  // no word in --help: every number is finite
  for (CLI::Option *option : app.get_options())
    if (option->get_type_name().find("FLOAT") != std::string::npos || option->get_type_name().find("INT") != std::string::npos)
      option->check(finite);
  for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; })) RejectNonFiniteNumbers(*sub);
}

void AddMeshingOptions(CLI::App &cmd, Meshing &meshing, const std::string &subdivHelp) {
  CLI::Option *subdiv = cmd.add_option("--subdiv", meshing.subdiv, subdivHelp)->capture_default_str()
      ->check(CLI::Range(0, 10));
  CLI::Option *size = cmd.add_option("--max-patch-size", meshing.maxPatchSize,
                                     "Split each polygon by its own extent so that no patch edge is longer than L "
                                     "(scene units): patches of one size on a scene of mixed scales")
                          ->check(PositiveValue("a positive length"));
  CLI::Option *count = cmd.add_option("--patches", meshing.patches,
                                      "About N patches in all: the finest --max-patch-size whose total is at most N")
                           ->check(PositiveValue("a positive number of patches"));
  CLI::Option *texels = cmd.add_option("--texel-size", meshing.texelSize,
                                       "Lightmap texels of side L (scene units) as patches: every planar polygon gets "
                                       "a grid of texels in its own plane, and each texel it covers is a patch")
                            ->check(PositiveValue("a positive length"));
  CLI::Option *page = cmd.add_option("--lightmap-resolution", meshing.lightmapResolution,
                                     "Side of a lightmap page in texels (default 1024 with --texel-size); alone, the "
                                     "texel size that fills one page with every polygon's chart")
                          ->check(CLI::Range(8, 16384));
  size->excludes(subdiv)->excludes(count);
  count->excludes(subdiv);
  texels->excludes(subdiv)->excludes(size)->excludes(count);
  page->excludes(subdiv)->excludes(size)->excludes(count);
}

void AddExecutionOptions(CLI::App &cmd, ExecutionOptions &o, ExecutionFlags flags) {
  if (flags.threads)
    cmd.add_option("--threads", o.threads, "Threads per rank (default: the node's cores divided among its ranks)")
        ->check(CLI::Range(0, 4096));
  if (flags.quiet) AddQuietOption(cmd, o.quiet);
  if (flags.backend)
    cmd.add_option("--backend", o.backend,
                   "Where to compute: gpu (one CUDA device per rank), cpu (Embree and the rank's cores), or auto (the "
                   "GPU when every rank has one, else the CPU)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
}

void AddQuietOption(CLI::App &cmd, bool &quiet, const std::string &help) { cmd.add_flag("--quiet", quiet, help); }

void AddTimingsOption(CLI::App &cmd, std::string &timings) {
  cmd.add_option("--timings", timings, "Write per-phase timings (min/avg/max over ranks) as JSON");
}

void AddCheckpointOptions(CLI::App &cmd, CheckpointOptions &o) {
  cmd.add_option("--checkpoint-dir", o.dir,
                 "Save the rows of F done so far in this folder (made if missing) every --checkpoint-every minutes, "
                 "and before stopping on SIGTERM, SIGINT or SIGUSR1 (Slurm's --signal), so that the same command "
                 "with --restart continues from there, at any rank count, to the bits of a run never stopped; "
                 "removed once the outputs are complete. Every operator (the sparse ones compute each row alone, "
                 "the same bits with about twice the pairs); `run` keeps the solver's iterate too (continued on the "
                 "same ranks, else solved again), and with --refine each pass's rows in a folder of its own");
  cmd.add_option("--checkpoint-every", o.everyMinutes,
                 "Minutes between checkpoints (0: after every round of rows, about 1/256 of the work, and "
                 "every sweep of the solve)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));
  cmd.add_flag("--restart", o.restart,
               "Continue from the checkpoint in --checkpoint-dir (start from the beginning if it has none; refused "
               "if it is of another scene or other options)");
}

void AddMemoryLimitOption(CLI::App &cmd, std::string &limit) {
  cmd.add_option("--memory-limit", limit,
                 "Memory each rank may use, e.g. 512M, 8G, 1.5GiB or bytes (K/M/G/T are powers of 1024). Checked "
                 "before F is allocated; a job that does not fit stops with exit code 2, saying what would fit "
                 "(default: the node's available memory, MemAvailable or the cgroup's limit less usage, shared "
                 "among the ranks on the node)");
}


CLI::Option *AddDistributionOption(CLI::App &cmd, Distribution &distribution) {
  return AddChoice(cmd, "--distribution", distribution, {{"cyclic", Distribution::kCyclic}, {"block", Distribution::kBlock}},
            "Rows per rank: cyclic (row i on rank i % P) or block");
}

CLI::Option *AddReadDistributionOption(CLI::App &cmd, Distribution &distribution) {
  CLI::Option *option = AddDistributionOption(cmd, distribution);
  option->description(option->get_description() +
                      "; by default cyclic for dense rows, block for CSR rows (as the form-factor stage splits them)");
  return option;
}

void AddFormFactorJobOptions(CLI::App &cmd, FormFactorJobOptions &o, bool toleranceAlias) {
  AddSceneInputOptions(cmd, o.input, "Scene", true);
  AddMeshingOptions(cmd, o.meshing, "Split every polygon into 4^K patches");
  AddChoice(cmd, "--visibility", o.visibility, {{"exact", VisibilityMethod::kExact}, {"rays", VisibilityMethod::kRays}},
            "Occluded pairs: exact (shadows cut out of the receiver for every cubature point; accurate to "
            "the cubature tolerance) or rays (kernel-weighted stratified shadow rays: for previews, 10 to "
            "40 times faster on scenes with many occluded pairs, entries within about 2 %)");
  AddChoice(cmd, "--method", o.method, {{"kernel", FormFactorMethod::kKernel}, {"hemicube", FormFactorMethod::kHemicube}},
            "How entries are computed: kernel (the default: each pair's form factor integrated to "
            "--quadrature-tolerance, with --visibility) or hemicube (each row gathered by a hemicube at the patch's "
            "centroid, --hemicube pixels a side, into sparse rows: texture-space radiosity's way, for texels)");
  cmd.add_option("--hemicube", o.hemicube.resolution,
                 "--method hemicube: pixels along the top face's side (even); the sides are half as high, so 64 "
                 "means 64 x 64 x 32 and 3 x 64^2 rays a row")
      ->capture_default_str()->check(CLI::Range(2, 4096));
  cmd.add_option("--hemicube-rotation", o.hemicube.rotate,
                 "--method hemicube: turn each patch's hemicube about its normal by its own random angle "
                 "(noise instead of banding)")
      ->capture_default_str();
  cmd.add_option("--shadow-rays", o.shadowRays,
                 "Stratified shadow rays per occluded patch pair (--visibility rays, and pairs with more than 64 "
                 "occluders)")
      ->capture_default_str()->check(CLI::Range(1u, 65536u));
  cmd.add_option("--gpu-work-limit", o.gpuWorkLimit,
                 "GPU backend: work after which the device gives up an occluded entry (exact visibility) and the "
                 "rank's cores compute it, with the same bits; in integrand evaluations weighted by the occluders "
                 "each clips against; 0: no limit")
      ->capture_default_str()->check(CLI::Range(0.0, 1e12));
  cmd.add_option("--seed", o.seed, "Seed of the counter-based random numbers")->capture_default_str();
  cmd.add_option(toleranceAlias ? "--quadrature-tolerance,--tolerance" : "--quadrature-tolerance", o.tolerance,
                 "Relative tolerance of the adaptive cubature of each form factor (of an occluded pair: relative to "
                 "its unoccluded factor)")
      ->capture_default_str()->check(CLI::Range(1e-12, 1e-1));
  AddChoice(cmd, "--precision", o.precision, {{"double", Precision::kDouble}, {"float", Precision::kFloat}},
            "Stored precision of F: double or float");
  AddDistributionOption(cmd, o.distribution);
  cmd.add_flag("--normalize-rows", o.normalizeRows,
               "Scale every row to sum to 1 (the reference paper's behaviour; hides closure errors)");
  AddChoice(cmd, "--operator", o.op,
            {{"auto", FormFactorOperator::kAuto}, {"dense", FormFactorOperator::kDense},
             {"sparse", FormFactorOperator::kSparse}, {"hierarchical", FormFactorOperator::kHierarchical}},
            "How F is computed and held: auto (the default: dense while it fits in the memory a rank may use, "
            "else hierarchical for `run` and sparse for `formfactors`, said in one line); dense (every entry, "
            "N^2 memory); sparse (CSR: only the pairs with F_ij or F_ji at or above --drop-below, found without "
            "visiting the others, so the cost follows the entries kept; block rows, CPU cores); hierarchical "
            "(far links to tree nodes that carry their estimated sum wherever one is within "
            "--operator-tolerance, the other pairs exactly, so nothing is dropped; its file is read by `solve` "
            "only)");
  cmd.add_option("--operator-tolerance", o.operatorTolerance,
                 "The hierarchical operator's tolerance: pairs are carried by far links to tree nodes (an "
                 "estimate per node: its projected area and shadow rays; taken once by a whole element of a "
                 "polygon where its patches agree) where every entry's bound is below it, or where the link is "
                 "smooth: the most it can carry times 8 (larger radius of receiver and node / gap)^2 is at most it; "
                 "the other pairs exactly. A row's far error (what its links carry less its exact sum, measured by "
                 "--operator-check-rows) is 1 to 2 times it, more as N grows: the default keeps rows within 1e-4 on "
                 "cities of 2e4 patches; 1e-4 takes about two thirds of the time")
      ->capture_default_str()->check(CLI::Range(1e-15, 0.5));
  cmd.add_option("--drop-below", o.dropBelow,
                 "The sparse operator's threshold: a pair is kept when F_ij or F_ji reaches it and dropped both "
                 "ways otherwise; each row's dropped sum and sky view factor are written")
      ->capture_default_str()->check(CLI::Range(1e-15, 0.5));
  cmd.add_option("--operator-check-rows", o.checkRows,
                 "Sparse and hierarchical operators: rows, spread evenly, computed in full by the dense kernel to "
                 "measure the operator's error (what it drops or carries by far links against the exact sum; "
                 "reported and written as check_* attributes); 0: none")
      ->capture_default_str()->check(CLI::Range(0LL, 1LL << 20));
  AddMemoryLimitOption(cmd, o.memoryLimit);
}

void AddSolveStepOptions(CLI::App &cmd, SolveStepOptions &o) {
  AddChoice(cmd, "--solver", o.solver,
            {{"gauss-seidel", SolverMethod::kGaussSeidel}, {"jacobi", SolverMethod::kJacobi}, {"gmres", SolverMethod::kGmres}},
            "gauss-seidel (rank-local Gauss-Seidel sweeps, Jacobi between ranks), jacobi, or gmres (PETSc's Krylov "
            "solvers, for reflectances near 1; on the CPU)");
  cmd.add_option("--petsc-options", o.petscOptions,
                 "With --solver gmres: PETSc's options, e.g. \"-ksp_type bcgs -pc_type none -ksp_monitor -log_view\" "
                 "(the PETSC_OPTIONS environment variable works too)");
  cmd.add_option("--tolerance", o.tolerance, "Stop when max|E - (I - rho F) B| / max|E| is below this")
      ->capture_default_str()->check(CLI::Range(1e-15, 1.0));
  AddChoice(cmd, "--exchange", o.exchange,
            {{"auto", SweepExchange::kAuto}, {"read", SweepExchange::kRead}, {"all", SweepExchange::kAll}},
            "What ranks exchange between sweeps over CSR rows (sparse and hierarchical operators; on the CPU): "
            "read (each rank receives only the values and node sums its rows read), all (every rank's new values "
            "to every rank), or auto (the default: whichever moves fewer values in all); the same results");
  cmd.add_option("--max-iterations", o.maxIterations, "Give up (exit code 3) after this many iterations")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
}

void AddCameraOptions(CLI::App &cmd, CameraOptions &o) {
  auto *camera = cmd.add_option("--camera", o.camera, "Camera JSON file (CONTRACTS.md)")->check(CLI::ExistingFile);
  auto *position = cmd.add_option("--camera-position", o.position, "Camera position x y z")->expected(3);
  auto *target = cmd.add_option("--camera-target", o.target, "Point the camera looks at, x y z")->expected(3);
  cmd.add_option("--camera-up", o.up, "Up direction x y z (default 0 1 0)")->expected(3)->needs(position);
  position->needs(target);
  target->needs(position);
  position->excludes(camera);
  cmd.add_option("--fov-y", o.fovY, "Full vertical field of view in degrees (default: the camera's, or 40)")
      ->check(CLI::Validator(
          [](std::string &text) {
            double value = 0;
            const bool ok = CLI::detail::lexical_cast(text, value) && value > 0 && value < 180;
            return ok ? std::string() : "must be an angle above 0 and below 180 degrees, not '" + text + "'";
          },
          "(0, 180)"));
  cmd.add_option("--width", o.width, "Image width in pixels (default: the camera's, or 512)")->check(CLI::Range(1, 16384));
  cmd.add_option("--height", o.height, "Image height in pixels (default: the camera's, or 512)")->check(CLI::Range(1, 16384));
}

void AddRenderStepOptions(CLI::App &cmd, RenderStepOptions &o) {
  AddCameraOptions(cmd, o);
  cmd.add_option("--spp", o.samplesPerPixel, "Jittered samples per pixel (antialiasing)")->capture_default_str()
      ->check(CLI::Range(1, 4096));
  AddChoice(cmd, "--shading", o.shading,
            {{"smooth", Shading::kSmooth}, {"flat", Shading::kFlat}, {"lightmap", Shading::kLightmap}},
            "smooth: radiosity interpolated from patch corners (never across creases); flat: each patch's B; "
            "lightmap: the baked lightmap, bilinear (patches that are texels: --texel-size, --lightmap-resolution)");
  cmd.add_option("--exposure", o.exposure, "PNG only: scale radiance by 2^exposure before sRGB encoding")
      ->capture_default_str();
}

}  // namespace rad
