// Solver benchmark: seconds per iteration and the effective bandwidth of reading F, against plain memory loops
// over the same bytes measured in the same run (a copy into a second buffer, STREAM-style counting read +
// write, and a plain sum that only reads). F is synthetic (rows summing to 0.9, any values do: the time of a
// sweep does not depend on them), distributed cyclically as in the real runs.
//   mpirun -n P radiosity_bench_solver N [SWEEPS] [double|float]
#include <mpi.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jobs/bench/bench_inputs.h"
#include "pipeline/execution.h"
#include "solver/radiosity_solver.h"
#include "util/decomposition.h"
#include "util/rng.h"
#include "util/thread_limit.h"
#include "util/timers.h"

namespace {

// Seconds of the slowest rank for `work`, all ranks starting together.
template <typename Work>
double Timed(Work &&work) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = rad::Now();
  work();
  double mine = rad::Now() - start, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

template <typename T>
void Bench(long long n, int sweeps, const char *precision) {
  const int rank = rad::WorldRank(), size = rad::WorldSize();
  const int threads = rad::DefaultThreadsPerRank(0);
  rad::ThreadLimit limit(threads);
  rad::FormFactorRows rows;
  const rad::LocalSystem s = bench::SyntheticSystem<T>(n, rank, size, rows);
  const std::vector<T> &f = bench::Entries<T>(rows);
  const size_t m = rows.rows.size(), count = f.size();
  std::vector<T> copy(count);

  const double bytes = double(n) * double(n) * sizeof(T);  // all ranks together
  const double copySeconds = Timed([&] {
    for (int k = 0; k < sweeps; ++k)
      tbb::parallel_for(tbb::blocked_range<size_t>(0, m), [&](const tbb::blocked_range<size_t> &rg) {
        std::memcpy(copy.data() + rg.begin() * size_t(n), f.data() + rg.begin() * size_t(n),
                    (rg.end() - rg.begin()) * size_t(n) * sizeof(T));
      });
  }) / sweeps;
  volatile double sink = 0;
  const double readSeconds = Timed([&] {
    for (int k = 0; k < sweeps; ++k)
      sink = sink + tbb::parallel_reduce(
          tbb::blocked_range<size_t>(0, count), 0.0,
          [&](const tbb::blocked_range<size_t> &rg, double acc) {
            double a[4] = {0, 0, 0, 0};
            size_t i = rg.begin();
            for (; i + 4 <= rg.end(); i += 4)
              for (int l = 0; l < 4; ++l) a[l] += double(f[i + size_t(l)]);
            for (; i < rg.end(); ++i) a[0] += double(f[i]);
            return acc + a[0] + a[1] + a[2] + a[3];
          },
          [](double a, double b) { return a + b; });
  }) / sweeps;

  if (rank == 0) {
    std::printf("N %lld, F %s (%.1f MiB in all), %d rank(s) x %d thread(s), %d sweeps\n", n, precision,
                bytes / (1 << 20), size, threads, sweeps);
    std::printf("  %-34s %10.2f ms  %8.2f GB/s\n", "memcpy (read + write counted)", 1e3 * copySeconds,
                2 * bytes / copySeconds / 1e9);
    std::printf("  %-34s %10.2f ms  %8.2f GB/s\n", "plain sum (read)", 1e3 * readSeconds, bytes / readSeconds / 1e9);
  }
  // Per iteration in steady state (tolerance 0: never converges, exactly `sweeps` passes), then a whole solve
  // to 1e-10, whose average per pass includes Gauss-Seidel's closing passes that also measure the residual of
  // the iterate (a second product over the columns already updated).
  for (rad::SolverMethod method : {rad::SolverMethod::kJacobi, rad::SolverMethod::kGaussSeidel}) {
    for (double tolerance : {0.0, 1e-10}) {
      rad::SolverOptions options;
      options.method = method;
      options.tolerance = tolerance;
      options.maxIterations = tolerance == 0 ? sweeps - 1 : 1000;
      rad::PhaseTimers timers;
      rad::SolverResult result;
      const double seconds = Timed([&] { result = rad::SolveRadiosity(MPI_COMM_WORLD, s, options, timers); });
      double sweepSeconds = timers.Get("solve sweeps") + timers.Get("solve exchange"), slowest = 0;
      MPI_Allreduce(&sweepSeconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double perIteration = slowest / result.sweeps;
      if (rank == 0) {
        char label[96];
        if (tolerance == 0)
          std::snprintf(label, sizeof label, "solver %s (per iteration)", rad::SolverMethodName(method));
        else
          std::snprintf(label, sizeof label, "  whole solve to 1e-10, %d passes", result.sweeps);
        std::printf("  %-34s %10.2f ms  %8.2f GB/s  = %3.0f %% of memcpy, %3.0f %% of plain sum  (whole call %.2f s)\n",
                    label, 1e3 * perIteration, bytes / perIteration / 1e9,
                    100 * (bytes / perIteration) / (2 * bytes / copySeconds), 100 * readSeconds / perIteration,
                    seconds);
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    if (rad::WorldRank() == 0) std::fprintf(stderr, "usage: radiosity_bench_solver N [SWEEPS] [double|float]\n");
    MPI_Finalize();
    return 2;
  }
  const long long n = std::atoll(argv[1]);
  const int sweeps = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::string precision = argc > 3 ? argv[3] : "double";
  if (precision == "float") Bench<float>(n, sweeps, "float32");
  else Bench<double>(n, sweeps, "float64");
  MPI_Finalize();
  return 0;
}
