// `radiosity compare A B`: its options; the comparison is validate/compare.h. Rank 0 does the work; under
// mpirun the other ranks only wait (a comparison is small and serial).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "pipeline/outputs.h"
#include "util/agree.h"
#include "util/atomic_file.h"
#include "validate/compare.h"

namespace rad {

namespace {

int RunCompare(const CompareOptions &o) {
  if (!o.json.empty() && o.json != "-") CheckOutputPath("--json", o.json);
  if (!o.heatmap.empty()) CheckOutputPath("--heatmap", o.heatmap);
  OnRankZero(MPI_COMM_WORLD, [&] {
    std::string text;
    const nlohmann::ordered_json j = Compare(o, text);
    if (o.json == "-") {
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      if (!o.json.empty()) WriteFileAtomically(o.json, j.dump(2) + "\n", "the JSON file");
      std::fputs(text.c_str(), stdout);
    }
    std::fflush(stdout);
  });
  return 0;
}

}  // namespace

CommandRunner AddCompareCommand(CLI::App &app) {
  auto *cmd = app.add_subcommand(
      "compare",
      "Compare B with the reference A: two images (PNG/EXR: MSE, RMSE, PSNR, SSIM, heat map) or two radiosity "
      "HDF5 files of the same patches (relative RMSE of /radiosity/B)");
  auto o = std::make_shared<CompareOptions>();
  cmd->add_option("A", o->a, "Reference: PNG or EXR image, or radiosity HDF5 file with /radiosity/B")->required();
  cmd->add_option("B", o->b, "Compared with A: the same kind of file (an image with an image, PNG and EXR mix)")
      ->required();
  cmd->add_option("--json", o->json, "Write every number as JSON to this file ('-': to stdout, instead of the text)");
  cmd->add_option("--heatmap", o->heatmap,
                  "Write |Y_A - Y_B| per pixel as a PNG through the viridis colour map (images only)");
  cmd->add_option("--heatmap-max", o->heatmapMax,
                  "Difference shown as the top of the colour map (default: the largest difference)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--exposure", o->exposure,
                  "PNG vs EXR: encode the EXR as `render` writes its PNG, with this exposure (factor 2^EV)")
      ->capture_default_str()->check(CLI::Range(-64.0, 64.0));
  cmd->add_option("--range", o->range,
                  "Dynamic range L of two EXR images (default: the largest luminance of A); PNG values use 1")
      ->check(CLI::PositiveNumber);
  return [o]() { return RunCompare(*o); };
}

}  // namespace rad
