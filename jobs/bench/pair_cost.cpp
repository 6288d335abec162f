// How the cost of one form-factor entry is spread over the pairs of a scene, on one CPU thread, with the code
// every backend runs (FormFactorPair, formfactor/pair.h). The GPU backend gives each entry one thread, so a
// launch lasts as long as its slowest entry: the tail (largest entry over mean) says how far a scene is from
// filling the GPU. Prints the entries' total, mean, largest and the share of the total in the costliest 1 %,
// then, for several work limits on occluded entries (PairSettings::occludedWorkLimit), what each leaves to the host.
// Usage: radiosity_bench_pair_cost SCENE SUBDIV [exact|rays]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "formfactor/geometry.h"
#include "formfactor/geometry_view.h"
#include "formfactor/pair.h"
#include "scene/scene.h"

using namespace rad;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SCENE SUBDIV [exact|rays]\n", argv[0]);
    return 2;
  }
  char *end = nullptr;
  const long subdiv = std::strtol(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0' || subdiv < 0 || subdiv > 10) {
    std::fprintf(stderr, "%s: error: SUBDIV must be a whole number from 0 to 10, not '%s'\n", argv[0], argv[2]);
    return 2;
  }
  Scene scene;
  try {  // a scene that does not load: said, exit 2
    scene = LoadScene(argv[1]);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what());
    return 2;
  }
  const FormFactorGeometry g = BuildFormFactorGeometry(scene, int(subdiv));
  PairSettings settings;
  settings.visibility = argc > 3 && std::string(argv[3]) == "rays" ? VisibilityMethod::kRays : VisibilityMethod::kExact;
  const GeometryView view = ViewOf(g);
  const int n = int(g.patches.size());
  struct Cost {
    double seconds;
    int i, j;
    bool occluded;
    int evaluations;
  };
  std::vector<Cost> costs;
  costs.reserve(size_t(n) * size_t(n));
  double total = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const auto start = std::chrono::steady_clock::now();
      const PairResult r = FormFactorPair(view, i, j, settings);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      costs.push_back({s, i, j, r.occluded, r.evaluations});
      total += s;
    }
  std::sort(costs.begin(), costs.end(), [](const Cost &a, const Cost &b) { return a.seconds > b.seconds; });
  double top = 0;
  const size_t percent = std::max<size_t>(1, costs.size() / 100);
  for (size_t k = 0; k < percent; ++k) top += costs[k].seconds;
  std::printf("%s subdiv %s (%s): %d patches, %zu entries, total %.3f s, mean %.3g ms, largest %.3g ms "
              "(entry %d,%d%s), largest/mean %.0f, costliest 1 %% of entries: %.0f %% of the total\n",
              argv[1], argv[2], settings.visibility == VisibilityMethod::kExact ? "exact" : "rays", n, costs.size(),
              total, 1e3 * total / double(costs.size()), 1e3 * costs[0].seconds, costs[0].i, costs[0].j,
              costs[0].occluded ? ", occluded" : "", costs[0].seconds * double(costs.size()) / total,
              100 * top / total);
  for (size_t k = 1; k < std::min<size_t>(6, costs.size()); ++k)
    std::printf("  next: %.3g ms (entry %d,%d%s), %d evaluations\n", 1e3 * costs[k].seconds, costs[k].i, costs[k].j,
                costs[k].occluded ? ", occluded" : "", costs[k].evaluations);
  // The GPU's work limit on occluded entries (PairSettings::occludedWorkLimit): for each limit, the entries it
  // leaves to the host, their share of the time, and the slowest entry the device keeps (what bounds a launch).
  for (double limit : {50.0, 200.0, 1e3, 5e3, 2e4, 1e5}) {
    PairSettings limited = settings;
    limited.occludedWorkLimit = limit;
    size_t deferred = 0;
    double seconds = 0, slowestKept = 0;
    for (const Cost &c : costs)
      if (FormFactorPair(view, c.i, c.j, limited).deferred) ++deferred, seconds += c.seconds;
      else slowestKept = std::max(slowestKept, c.seconds);
    std::printf("  work limit %6.0f: %zu entries left to the host (%.2g %%, %.0f %% of the time); slowest kept: %.3g ms\n",
                limit, deferred, 100.0 * double(deferred) / double(costs.size()), 100 * seconds / total, 1e3 * slowestKept);
  }
  return 0;
}
