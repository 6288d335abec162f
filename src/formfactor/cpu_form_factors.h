// Rows of F on the CPU cores of one rank: every entry's factor first (exact visibility included, pair.h), then
// shadow rays with Embree for the pairs left to them (--visibility rays, or too many occluders). A pair whose
// two rows are both here is computed once, from the row ComputesPair picks, which writes both entries; the
// bits are those of computing each entry on its own, so neither the thread count nor the rank count shows.
// No floating-point reduction crosses threads.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "formfactor/embree_scene.h"
#include "formfactor/geometry.h"
#include "formfactor/pair_exchange.h"
#include "formfactor/pair_result.h"
#include "util/timers.h"

namespace rad {

struct FormFactorOptions {
  uint32_t shadowRays = 32;
  uint64_t seed = 1;
  PairSettings pair;  // cubature tolerance and visibility method
  bool normalizeRows = false;  // the reference paper's behaviour: scale each row to sum to 1
  double deviceWorkLimit = kDeviceOccludedWork;  // the GPU backend's (pair_result.h); 0: none
};

struct FormFactorCounters {
  long long pairsExchanging = 0;  // pairs with a non-zero factor
  long long pairsRayTraced = 0;   // of those, pairs whose visible fraction came from shadow rays
  long long pairsOccluded = 0;    // pairs integrated exactly over the visible part of the receiver
  long long pairsOverCapacity = 0;  // pairs with too many occluders for the exact kernel (left to rays)
  long long pairsAtDepthLimit = 0;  // pairs whose cubature stopped at its depth limit
  long long rays = 0;              // shadow rays traced (once per unordered pair computed)
  long long evaluations = 0;      // point-to-polygon contour evaluations (once per unordered pair computed)
  long long nodePairs = 0;        // point-to-point kernel evaluations of the node-pair rules (likewise)
  long long pairsDeferred = 0;    // entries past the GPU's work limit, finished on the host (pair_result.h)
  long long pairsHidden = 0;      // entries proved hidden by one occluder: 0 without shadow rays
  long long farLinkRays = 0;      // of `rays`, those of the far links' visibility (sparse operators' walks)
  long long smoothLinkRays = 0;   // of those, the smooth links' (their count grows with what they carry)
  long long farLinksProvedHidden = 0;  // far links found hidden whole by one occluder, the rest of their rays saved

  // Counts entry (i, j) of a computed pair, and its work.
  void Add(const PairResult &p) {
    evaluations += p.evaluations;
    nodePairs += p.nodePairs;
    AddEntry(p, p.value);
  }
  // Counts the shadow rays of a far link's visibility (a row's or an element's, `smooth` or not).
  void AddFarLinkRays(uint32_t traced, bool smooth) {
    rays += traced;
    farLinkRays += traced;
    if (smooth) smoothLinkRays += traced;
  }
  // Counts entry (j, i) of a pair computed from row i: the same pair, no work of its own.
  void AddReverse(const PairResult &p) { AddEntry(p, p.reverse); }
  void AddEntry(const PairResult &p, double value) {
    if (value > 0) ++pairsExchanging;
    if (p.occluded) ++pairsOccluded;
    if (p.hidden) ++pairsHidden;
    if (p.overCapacity) ++pairsOverCapacity;
    if (p.hitDepthLimit) ++pairsAtDepthLimit;
  }
  void Add(const FormFactorCounters &c) {
    const auto to = Fields();
    const auto from = c.Fields();
    for (int k = 0; k < kFieldCount; ++k) *to[size_t(k)] += *from[size_t(k)];
  }

  // Every count in one order, with its name in files (checkpoints): for code that treats them all alike (sums
  // over the ranks, checkpoints).
  static constexpr int kFieldCount = 13;
  static constexpr const char *kFieldNames[kFieldCount] = {
      "pairs_exchanging", "pairs_ray_traced", "pairs_occluded", "pairs_over_capacity",
      "pairs_at_depth_limit", "rays", "evaluations", "node_pairs",
      "pairs_deferred", "pairs_hidden", "far_link_rays", "smooth_link_rays",
      "far_links_proved_hidden"};
  std::array<long long *, kFieldCount> Fields() {
    return {&pairsExchanging,   &pairsRayTraced, &pairsOccluded, &pairsOverCapacity,
            &pairsAtDepthLimit, &rays,           &evaluations,   &nodePairs,
            &pairsDeferred,     &pairsHidden,    &farLinkRays,   &smoothLinkRays,
            &farLinksProvedHidden};
  }
  std::array<const long long *, kFieldCount> Fields() const {
    const auto fields = const_cast<FormFactorCounters *>(this)->Fields();
    std::array<const long long *, kFieldCount> out{};
    for (int k = 0; k < kFieldCount; ++k) out[size_t(k)] = fields[size_t(k)];
    return out;
  }
};

// Rows computed in rounds, so that a run can checkpoint between them (pipeline/row_checkpoint.h): round k takes
// the k-th of `count` equal shares of every rank's rows, computes their pairs (kernel, then shadow rays) and
// sends the entries of rows held elsewhere to their owners, so that after it every entry of every pair
// computed so far is in its owner's rows. Rounds change when entries are made, never their bits.
struct RowRounds {
  int count = 1;  // the same on every rank
  // Per patch, non-zero where the row's pairs were computed by an earlier run: not computed again, and their
  // entries (in this rank's rows and in its pairs' other rows) put into `out` by `restore`. Empty: none.
  std::vector<uint8_t> done;
  // Collective, once `out` is allocated (zeros): writes the done pairs' entries of this rank's rows into it.
  std::function<void()> restore;
  // Collective, after each round's exchange: `done` (per patch) marks every rank's rows whose pairs are all in
  // their owners' rows now, `counters` are this rank's counts of the pairs this run computed so far.
  std::function<void(const std::vector<uint8_t> &done, const FormFactorCounters &counters)> after;
};

// Fills `out` (rows.size() x N, row-major) with F for the given rows (ascending). Phases go to `timers` as
// "form-factor kernel", "visibility rays" and "pair exchange". With `owners`, the other rows are held by the
// other ranks of owners->comm, each calling this collectively with its own rows, and pairs across two ranks
// are computed once (pair_exchange.h); without, the given rows are all there is. Every entry is computed in
// double; float rows hold each entry rounded once, when it is final (before --normalize-rows, which then scales
// the float values), so that they are the double rows rounded to float. With `owners`, a failed allocation of
// the rows or the exchange's buffer is an InputError on every rank. With `rounds` (and `owners`), in rounds.
void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<double> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners = nullptr,
                    const RowRounds *rounds = nullptr);
void ComputeRowsCpu(const FormFactorGeometry &g, const EmbreeScene &embree, const std::vector<long long> &rows,
                    const FormFactorOptions &options, std::vector<float> &out, PhaseTimers &timers,
                    FormFactorCounters &counters, bool showProgress, const RowOwners *owners = nullptr,
                    const RowRounds *rounds = nullptr);

}  // namespace rad
