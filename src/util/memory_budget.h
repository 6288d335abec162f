// Memory checked before it is used. A command that holds F in memory (formfactors, run, validate, solve, export)
// says what each rank will hold as a function of the patch count N and the rank's rows (MemoryModel), and checks
// that against what the rank may use (CheckMemory) before it allocates anything large or creates any output
// file: --memory-limit, or by default the node's available memory (MemAvailable from /proc/meminfo, or the
// memory cgroup's limit less its usage where that is smaller) shared among the ranks on the node. A job that
// does not fit stops on every rank together, with one line: the bytes needed and available per rank, and what
// would fit (more ranks, float32 F, fewer patches).
#pragma once

#include <mpi.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rad {

// A size as written on command lines: "4096" (bytes), "512M", "8G", "1.5GiB", "64k", "2TB". K, M, G, T and P,
// with or without "B" or "iB" and in any case, are powers of 1024 (as Slurm's --mem); "B" alone is bytes.
// Fractions take a unit and are rounded down to whole bytes. InputError naming `option` for anything else,
// for 0, and for sizes of 2^63 bytes or more.
unsigned long long ParseMemorySize(const std::string &text, const std::string &option = "--memory-limit");

// "12 bytes", "3.0 KiB", "512.0 MiB", "1.5 GiB", "2.0 TiB".
std::string FormatBytes(double bytes);

// The kernel's memory files, parsed (exposed for tests). MemAvailable of /proc/meminfo in bytes.
std::optional<double> MemAvailableBytes(const std::string &meminfo);
// What a memory cgroup leaves: limit less usage, where usage does not count the inactive page cache (which the
// kernel reclaims before failing an allocation). v2: memory.max ("max": no limit), memory.current, memory.stat
// ("inactive_file"); v1: memory.limit_in_bytes (2^62 and above: no limit), memory.usage_in_bytes, memory.stat
// ("total_inactive_file"). Nothing when there is no limit or a file is unreadable.
std::optional<double> CgroupRoomBytes(const std::string &limit, const std::string &usage, const std::string &stat,
                                      bool v2);
// The memory cgroup of this process from /proc/self/cgroup: the v1 "memory" controller's path if there is one
// (v1 and hybrid systems), else the v2 path ("0::PATH"); `v2` says which. Empty when neither is listed.
std::string MemoryCgroupPath(const std::string &procSelfCgroup, bool &v2);

struct NodeMemory {
  double bytes = 0;
  std::string source;  // in words, e.g. "MemAvailable" or "the memory cgroup's limit less its usage"
};
// The memory this node's processes may still take: MemAvailable, or what the cgroup (and each cgroup above it)
// leaves where that is less. `root` prefixes /proc and /sys (tests give a folder laid out like them).
NodeMemory ReadNodeMemory(const std::string &root = "");

// Hands the pages of freed heap memory back to the kernel (glibc's malloc_trim; nothing elsewhere). Freed
// memory otherwise stays resident until the allocator reuses it, and the many small arrays that a phase frees
// (a block of rows' far links, the entries handed to them) leave holes that the next allocations do not fit:
// on an 8 x 8 city split to N = 93968 (float rows, default tolerance) the rows' peak resident memory was
// 2.03 GiB, 1.52 GiB with the pages handed back after each block of rows. Call where a phase has freed much.
void ReturnFreedMemory();

// What one rank holds at its peak, in bytes, as a function of N and its number of rows.
struct MemoryModel {
  int bytesPerEntry = 8;       // F in memory: 8 (float64) or 4 (float32)
  double entryOverhead = 0;    // further bytes per entry of the rank's rows (e.g. float32 rows widened to write)
  // The CPU backend's pair exchange (formfactor/pair_exchange.h) over several ranks: for each of the rank's
  // rows about half of the entries in the other ranks' rows, once more, plus one received chunk.
  bool pairExchange = false;
  long long exchangeChunkEntries = 0;
  double bytesPerPatch = 0;    // on every rank, whatever its rows (patches, geometry, the solver's vectors)
  double fixedBytes = 0;       // buffers of bounded size (I/O blocks, staging areas)

  double MatrixBytes(long long n, long long rows) const { return double(rows) * double(n) * bytesPerEntry; }
  // The entries a rank with `rows` rows computes for the other ranks' rows (an upper estimate), 0 on one rank.
  static double ExchangeEntries(long long n, long long rows, int ranks);
  double RankBytes(long long n, long long rows, int ranks) const;
  // RankBytes of the rank with the most rows, ceil(N / ranks).
  double WorstRankBytes(long long n, int ranks) const;
};

// What the check is asked.
struct MemoryRequest {
  std::string what;        // the file the message names: the scene, or the matrix file
  MemoryModel model;
  long long patches = 0;   // N
  long long rows = 0;      // this rank's rows
  // How to get float32 F, for the message ("--precision float"); empty when F already is float32 or cannot be.
  std::string floatHint;
  double floatExtraBytes = 0;  // what float32 F adds to model.fixedBytes (the GPU's staging of float rows)
  // N at --subdiv 0, 1, ..., up to the one asked (patchesBySubdiv[subdiv] == patches); empty when F comes from a
  // file, whose coarser size is then given as a patch count.
  std::vector<long long> patchesBySubdiv;
  int subdiv = -1;
  // Without patchesBySubdiv: the option that asks for a patch count (`--patches` when meshing by size), so that
  // the message suggests it with the count that fits; empty: "a matrix of at most N patches".
  std::string patchCountOption;
};

// What would fit instead of a request that does not, with the same memory per rank.
struct MemoryAlternatives {
  long long ranks = 0;        // fewest ranks that fit; 0 when no number of ranks does (N ranks of one row each)
  double floatBytes = 0;      // per rank with float32 F (when the request has a floatHint)
  bool floatFits = false;
  int subdiv = -1;            // the finest coarser --subdiv that fits, -1 if none (with patchesBySubdiv)
  long long patches = 0;      // patches at that --subdiv; without patchesBySubdiv, the most patches that fit (0: none)
};
MemoryAlternatives FindAlternatives(const MemoryRequest &request, int ranks, double available);

// The one line of a request that does not fit (the worst rank's need and available memory).
std::string NotEnoughMemoryMessage(const MemoryRequest &request, int ranks, double need, double available,
                                   const std::string &source);

// The outcome of a check that passed, for the progress lines.
struct MemoryBudget {
  double needBytes = 0;    // this rank's
  double limitBytes = 0;   // this rank's
  std::string source;      // where the limit comes from, in words
  // "limit 512.0 MiB from --memory-limit"
  std::string Describe() const;
};

// Collective over `comm`: this rank's limit, the explicit `limitOption` (parsed; empty: the node's available
// memory divided among its ranks, MPI_COMM_TYPE_SHARED).
MemoryBudget RankMemoryLimit(MPI_Comm comm, const std::string &limitOption);

// Collective over `comm`: every rank's need against its limit. When any rank's is over, every rank throws the
// same InputError (the rank furthest over: its need and limit, and the alternatives).
MemoryBudget CheckMemory(MPI_Comm comm, const MemoryRequest &request, const std::string &limitOption);

// Collective over `comm`: this rank's `needBytes` against its limit (as CheckMemory, for needs that are not a
// MemoryModel). When any rank's is over, every rank throws InputError(message(need, limit, source)) with the
// figures of the rank furthest over.
MemoryBudget CheckMemoryNeed(MPI_Comm comm, double needBytes, const std::string &limitOption,
                             const std::function<std::string(double, double, const std::string &)> &message);

// Collective over `comm`: runs `allocate` on every rank; when it throws std::bad_alloc (or an InputError of its
// own, such as a GPU without room) on any, every rank throws one InputError naming `what` or carrying that
// error, the lowest failing rank's (so that no rank is left waiting in a collective).
void AllocateOnEveryRank(MPI_Comm comm, const std::string &what, const std::function<void()> &allocate);

// main()'s last resort for an allocation that failed on this rank outside AllocateOnEveryRank: one line on
// stderr, then MPI_Abort with exit code 2 (the other ranks may be waiting in a collective).
[[noreturn]] void AbortOutOfMemory();

}  // namespace rad
