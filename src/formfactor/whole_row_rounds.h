// Rows computed whole, each on its own (the GPU's rows, and their host stand-in's: kernel_form_factors.h), in
// rounds for checkpoints (RowRounds, cpu_form_factors.h). No pair is shared between two rows, so a round's rows
// are done when it ends, and rows a checkpoint holds are not computed again. The CPU's own rows compute each pair
// once for two rows and go in rounds inside ComputeRowsCpu.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "util/memory_budget.h"
#include "util/mpi_check.h"

namespace rad {

// Collective over `comm` (the rows' owners, each with the same rounds.count). Fills `out` (rows.size() x n) with
// `computeRows(rows, part, counters)`, which fills `part` (rows.size() x n) with the listed rows, whole: called
// once a round with the round's rows not done before, and its rows copied into place. rounds.restore runs once
// `out` is allocated; rounds.after after each round, with every rank's rows done so far and this run's counts.
template <typename T, typename ComputeRows>
void ComputeWholeRowsInRounds(MPI_Comm comm, long long n, const std::vector<long long> &rows, const RowRounds &rounds,
                              std::vector<T> &out, FormFactorCounters &counters, ComputeRows &&computeRows) {
  const size_t width = size_t(n), local = rows.size();
  const int roundCount = std::max(1, rounds.count);
  AllocateOnEveryRank(comm, "the rank's rows of F", [&] { out.assign(local * width, T(0)); });
  if (rounds.restore) rounds.restore();
  auto doneBefore = [&](size_t r) { return !rounds.done.empty() && rounds.done[size_t(rows[r])] != 0; };
  std::vector<uint8_t> doneNow = rounds.done.empty() ? std::vector<uint8_t>(width, 0) : rounds.done;
  FormFactorCounters mine;  // this run's work
  for (int k = 0; k < roundCount; ++k) {
    const size_t begin = local * size_t(k) / size_t(roundCount), end = local * size_t(k + 1) / size_t(roundCount);
    std::vector<long long> pick;
    std::vector<size_t> at;  // where each picked row goes in `out`
    for (size_t r = begin; r < end; ++r)
      if (!doneBefore(r)) pick.push_back(rows[r]), at.push_back(r);
    std::vector<T> part;
    // No MPI inside: a failed allocation on one rank is agreed on afterwards, so that all stop together.
    AllocateOnEveryRank(comm, "the rank's rows of F", [&] { computeRows(pick, part, mine); });
    for (size_t q = 0; q < pick.size(); ++q)
      std::copy_n(part.begin() + long(q * width), width, out.begin() + long(at[q] * width));
    for (size_t r = begin; r < end; ++r) doneNow[size_t(rows[r])] = 1;
    RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, doneNow.data(), int(width), MPI_UNSIGNED_CHAR, MPI_MAX, comm));
    if (rounds.after) rounds.after(doneNow, mine);
  }
  counters.Add(mine);
}

}  // namespace rad
