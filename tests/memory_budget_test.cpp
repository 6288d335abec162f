// Memory checked before it is used (util/memory_budget.h): sizes as users write them, the kernel's memory files,
// the per-rank model against the pair exchange's real buffer, what would fit, and the collective check.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "formfactor/pair_exchange.h"
#include "util/error.h"
#include "util/memory_budget.h"

namespace rad {
namespace {

constexpr unsigned long long kKiB = 1ULL << 10, kMiB = 1ULL << 20, kGiB = 1ULL << 30, kTiB = 1ULL << 40;

TEST(MemoryBudget, ParsesSizesAsWrittenOnCommandLines) {
  EXPECT_EQ(ParseMemorySize("4096"), 4096u);
  EXPECT_EQ(ParseMemorySize("100B"), 100u);
  EXPECT_EQ(ParseMemorySize("512M"), 512 * kMiB);
  EXPECT_EQ(ParseMemorySize("512m"), 512 * kMiB);
  EXPECT_EQ(ParseMemorySize("8G"), 8 * kGiB);
  EXPECT_EQ(ParseMemorySize("8GB"), 8 * kGiB);
  EXPECT_EQ(ParseMemorySize("1.5GiB"), 3 * kGiB / 2);
  EXPECT_EQ(ParseMemorySize("1.5gib"), 3 * kGiB / 2);
  EXPECT_EQ(ParseMemorySize("64k"), 64 * kKiB);
  EXPECT_EQ(ParseMemorySize("2TB"), 2 * kTiB);
  EXPECT_EQ(ParseMemorySize(" 8 G "), 8 * kGiB);
  EXPECT_EQ(ParseMemorySize(".5K"), 512u);
  EXPECT_EQ(ParseMemorySize("1P"), 1ULL << 50);
  // Fractions are rounded down to whole bytes: 0.1 KiB = 102.4 bytes.
  EXPECT_EQ(ParseMemorySize("0.1K"), 102u);
  // Integers beyond double's 53 bits stay exact.
  EXPECT_EQ(ParseMemorySize("9007199254740993"), 9007199254740993ULL);
}

TEST(MemoryBudget, RefusesWhatIsNotASize) {
  for (const char *text : {"", "   ", "abc", "-1", "-1G", "1.5", "0", "0M", "0.0001B", "12X", "1e9", "1..5G", "8 GX",
                           "10000000P", "9223372036854775808", "G"}) {
    SCOPED_TRACE(text);
    try {
      ParseMemorySize(text);
      ADD_FAILURE() << "accepted";
    } catch (const InputError &e) {
      // One line naming the option and the text.
      const std::string what = e.what();
      EXPECT_NE(what.find("--memory-limit '" + std::string(text) + "'"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(ParseMemorySize("9223372036854775807"), 9223372036854775807ULL);
}

TEST(MemoryBudget, FormatsBytesForPeople) {
  EXPECT_EQ(FormatBytes(12), "12 bytes");
  EXPECT_EQ(FormatBytes(3 * 1024), "3.0 KiB");
  EXPECT_EQ(FormatBytes(512.0 * kMiB), "512.0 MiB");
  EXPECT_EQ(FormatBytes(1.5 * kGiB), "1.5 GiB");
  EXPECT_EQ(FormatBytes(2.0 * kTiB), "2.0 TiB");
}

TEST(MemoryBudget, ReadsMemAvailable) {
  const std::string meminfo =
      "MemTotal:       24683656 kB\nMemFree:         1000000 kB\nMemAvailable:   22957952 kB\nBuffers: 1 kB\n";
  ASSERT_TRUE(MemAvailableBytes(meminfo).has_value());
  EXPECT_EQ(*MemAvailableBytes(meminfo), 22957952.0 * 1024);
  EXPECT_FALSE(MemAvailableBytes("MemTotal: 1 kB\nMemAvailableX: 5 kB\n").has_value());
}

TEST(MemoryBudget, CgroupRoomIsTheLimitLessUsageWithoutInactivePageCache) {
  // v2: memory.max, memory.current, memory.stat.
  EXPECT_FALSE(CgroupRoomBytes("max\n", "1000\n", "", true).has_value());
  EXPECT_EQ(CgroupRoomBytes("1000\n", "600\n", "anon 400\ninactive_file 100\nactive_file 100\n", true), 500.0);
  EXPECT_EQ(CgroupRoomBytes("1000", "600", "", true), 400.0);
  EXPECT_EQ(CgroupRoomBytes("1000", "1200", "", true), 0.0);  // over its limit: no room, never negative
  EXPECT_FALSE(CgroupRoomBytes("", "600", "", true).has_value());  // unreadable
  // v1: "no limit" is written as about 2^63; the hierarchy's inactive cache is total_inactive_file.
  EXPECT_FALSE(CgroupRoomBytes("9223372036854771712\n", "129736704\n", "", false).has_value());
  EXPECT_EQ(CgroupRoomBytes("2147483648", "1073741824", "inactive_file 1\ntotal_inactive_file 536870912\n", false),
            2147483648.0 - 536870912.0);
}

TEST(MemoryBudget, FindsThisProcesssMemoryCgroup) {
  bool v2 = true;
  // A hybrid system: the memory controller on v1, the unified hierarchy without it.
  EXPECT_EQ(MemoryCgroupPath("9:name=systemd:/\n4:memory:/slurm/uid_0/job_5/step_0\n2:cpuacct,cpu:/\n0::/\n", v2),
            "/slurm/uid_0/job_5/step_0");
  EXPECT_FALSE(v2);
  EXPECT_EQ(MemoryCgroupPath("0::/user.slice/user-0.slice/session-1.scope\n", v2),
            "/user.slice/user-0.slice/session-1.scope");
  EXPECT_TRUE(v2);
  EXPECT_EQ(MemoryCgroupPath("", v2), "");
  EXPECT_FALSE(v2);
}

// A folder laid out like /proc and /sys for ReadNodeMemory, removed afterwards.
struct FakeRoot {
  std::filesystem::path root;
  FakeRoot() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    root = std::filesystem::temp_directory_path() /
           ("rad_" + std::to_string(getpid()) + "_" + info->name() + "_root");
    std::filesystem::remove_all(root);
  }
  ~FakeRoot() { std::filesystem::remove_all(root); }
  void Write(const std::string &path, const std::string &text) const {
    const std::filesystem::path p = root / std::filesystem::path(path).relative_path();
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
};

TEST(MemoryBudget, NodeMemoryIsTheLeastRoomOfMemAvailableAndEveryCgroupAbove) {
  {  // cgroup v2, as Slurm lays it out: the job's limit on a parent of the step's cgroup.
    FakeRoot f;
    f.Write("/proc/meminfo", "MemTotal: 100000 kB\nMemAvailable: 50000 kB\n");
    f.Write("/proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0\n");
    f.Write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n");
    const std::string job = "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_5";
    f.Write(job + "/memory.max", "1000000\n");
    f.Write(job + "/memory.current", "400000\n");
    f.Write(job + "/memory.stat", "anon 300000\ninactive_file 100000\n");
    f.Write(job + "/step_0/memory.max", "max\n");
    f.Write(job + "/step_0/memory.current", "300000\n");
    f.Write(job + "/step_0/user/task_0/memory.max", "max\n");
    f.Write(job + "/step_0/user/task_0/memory.current", "300000\n");
    const NodeMemory m = ReadNodeMemory(f.root.string());
    EXPECT_EQ(m.bytes, 1000000.0 - (400000 - 100000));
    EXPECT_EQ(m.source, "the memory cgroup's limit less its usage");
    // MemAvailable is less than a larger limit leaves.
    f.Write(job + "/memory.max", "900000000\n");
    const NodeMemory wide = ReadNodeMemory(f.root.string());
    EXPECT_EQ(wide.bytes, 50000.0 * 1024);
    EXPECT_EQ(wide.source, "MemAvailable");
  }
  {  // cgroup v1 next to a v2 hierarchy without the memory controller; a namespace whose path is not mounted.
    FakeRoot f;
    f.Write("/proc/meminfo", "MemAvailable: 50000 kB\n");
    f.Write("/proc/self/cgroup", "4:memory:/slurm/uid_0/job_7\n0::/\n");
    f.Write("/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.limit_in_bytes", "2000000\n");
    f.Write("/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.usage_in_bytes", "500000\n");
    f.Write("/sys/fs/cgroup/memory/slurm/uid_0/job_7/memory.stat", "total_inactive_file 200000\n");
    f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    f.Write("/sys/fs/cgroup/memory/memory.usage_in_bytes", "5000000\n");
    EXPECT_EQ(ReadNodeMemory(f.root.string()).bytes, 2000000.0 - 300000);
    f.Write("/proc/self/cgroup", "4:memory:/not/mounted/here\n");
    f.Write("/sys/fs/cgroup/memory/memory.limit_in_bytes", "3000000\n");
    f.Write("/sys/fs/cgroup/memory/memory.usage_in_bytes", "1000000\n");
    EXPECT_EQ(ReadNodeMemory(f.root.string()).bytes, 2000000.0);
  }
  {  // No cgroup at all: MemAvailable.
    FakeRoot f;
    f.Write("/proc/meminfo", "MemAvailable: 12 kB\n");
    EXPECT_EQ(ReadNodeMemory(f.root.string()).bytes, 12.0 * 1024);
  }
}

TEST(MemoryBudget, ThisNodeHasAvailableMemory) {
  const NodeMemory node = ReadNodeMemory();
  EXPECT_GT(node.bytes, 0);
  EXPECT_FALSE(node.source.empty());
}

TEST(MemoryBudget, RankBytesAddTheRowsTheExchangeAndThePerPatchData) {
  MemoryModel m;
  m.bytesPerEntry = 8;
  m.bytesPerPatch = 100;
  m.fixedBytes = 1000;
  EXPECT_EQ(m.RankBytes(10, 4, 3), 4 * 10 * 8 + 100 * 10 + 1000);
  m.pairExchange = true;
  m.exchangeChunkEntries = 5;
  // Exchange: 4 rows x ((10 - 4) / 2 + 1) = 16 entries once more, plus a received chunk of min(16, 5).
  EXPECT_EQ(MemoryModel::ExchangeEntries(10, 4, 3), 16);
  EXPECT_EQ(m.RankBytes(10, 4, 3), 4 * 10 * 8 + (16 + 5) * 8 + 100 * 10 + 1000);
  EXPECT_EQ(m.RankBytes(10, 10, 1), 10 * 10 * 8 + 100 * 10 + 1000);  // one rank: nothing to exchange
  // The worst rank has ceil(N / P) rows.
  EXPECT_EQ(m.WorstRankBytes(10, 3), m.RankBytes(10, 4, 3));
  m.bytesPerEntry = 4;
  EXPECT_EQ(m.MatrixBytes(10, 4), 160);
}

TEST(MemoryBudget, ExchangeEstimateBoundsThePairExchangesBuffer) {
  for (Distribution d : {Distribution::kCyclic, Distribution::kBlock})
    for (long long n : {7LL, 100LL, 1001LL})
      for (int ranks : {2, 3, 4, 7}) {
        const RowOwners owners{MPI_COMM_WORLD, n, ranks, d};
        for (int rank = 0; rank < ranks; ++rank) {
          const std::vector<long long> rows = OwnedRows(n, rank, ranks, d);
          const ReverseEntries<float> exact(owners, rank, rows);
          const double estimate = MemoryModel::ExchangeEntries(n, (long long)rows.size(), ranks);
          SCOPED_TRACE(std::string(DistributionName(d)) + " n " + std::to_string(n) + " ranks " +
                       std::to_string(ranks) + " rank " + std::to_string(rank));
          EXPECT_LE(double(exact.Size()), estimate);
          // ... and not by much: within two entries per row.
          EXPECT_GE(double(exact.Size()), estimate - 2.0 * double(rows.size()));
        }
      }
}

// F alone, 8 bytes per entry: bytes per rank = ceil(N / P) N 8.
MemoryRequest MatrixOnly(long long n, int subdiv, std::vector<long long> bySubdiv) {
  MemoryRequest r;
  r.what = "scene.obj";
  r.patches = n;
  r.rows = n;
  r.floatHint = "--precision float";
  r.subdiv = subdiv;
  r.patchesBySubdiv = std::move(bySubdiv);
  return r;
}

TEST(MemoryBudget, AlternativesAreTheFewestRanksFloatAndTheFinestSubdivThatFit) {
  // N = 1536 (--subdiv 4) on 1 rank: 18.9 MB. With 2.67 MB per rank: ceil(1536 / 7) = 220 rows need 2.70 MB,
  // ceil(1536 / 8) = 192 rows 2.36 MB: 8 ranks. float32: 9.4 MB, no. --subdiv 3: 384^2 x 8 = 1.18 MB, yes.
  const double available = 1000.0 * 1000 * 8 / 3;
  const MemoryRequest r = MatrixOnly(1536, 4, {6, 24, 96, 384, 1536});
  const MemoryAlternatives a = FindAlternatives(r, 1, available);
  EXPECT_EQ(a.ranks, 8);
  EXPECT_GT(r.model.WorstRankBytes(1536, 7), available);
  EXPECT_LE(r.model.WorstRankBytes(1536, 8), available);
  EXPECT_EQ(a.floatBytes, 1536.0 * 1536 * 4);
  EXPECT_FALSE(a.floatFits);
  EXPECT_EQ(a.subdiv, 3);
  EXPECT_EQ(a.patches, 384);
  // On 4 ranks float32 fits: 384 x 1536 x 4 = 2.36 MB.
  const MemoryAlternatives four = FindAlternatives(r, 4, available);
  EXPECT_TRUE(four.floatFits);
  EXPECT_EQ(four.ranks, 8);
  // Without the subdivisions (a matrix file): the most patches N with N^2 x 8 <= available: 577.
  const MemoryAlternatives file = FindAlternatives(MatrixOnly(1536, -1, {}), 1, available);
  EXPECT_EQ(file.patches, 577);
  EXPECT_EQ(file.subdiv, -1);
}

TEST(MemoryBudget, AlternativesSayWhenNothingFits) {
  MemoryRequest r = MatrixOnly(1000, 2, {10, 40, 1000});
  r.model.bytesPerPatch = 1000;  // 1 MB for the patches alone, on every rank
  const MemoryAlternatives a = FindAlternatives(r, 2, 500000);
  EXPECT_EQ(a.ranks, 0);
  EXPECT_EQ(a.subdiv, 1);  // 40 patches: 40 x 1000 + 20 x 40 x 8 bytes
  const MemoryAlternatives none = FindAlternatives(r, 2, 5000);
  EXPECT_EQ(none.subdiv, -1);
  const std::string line = NotEnoughMemoryMessage(r, 2, 6e6, 5000, "--memory-limit");
  EXPECT_NE(line.find("no number of ranks"), std::string::npos) << line;
  EXPECT_NE(line.find("no coarser --subdiv"), std::string::npos) << line;
}

TEST(MemoryBudget, FewestRanksIsMinimalWithThePairExchange) {
  for (long long n : {100LL, 4352LL, 47104LL})
    for (double available : {2e5, 3e6, 5e7, 4e8}) {
      MemoryRequest r = MatrixOnly(n, -1, {});
      r.model.pairExchange = true;
      r.model.exchangeChunkEntries = kExchangeChunkEntries;
      r.model.bytesPerPatch = 500;
      const MemoryAlternatives a = FindAlternatives(r, 1, available);
      SCOPED_TRACE("n " + std::to_string(n) + " available " + std::to_string(available));
      if (a.ranks == 0) {
        EXPECT_GT(r.model.WorstRankBytes(n, int(n)), available);
        continue;
      }
      EXPECT_LE(r.model.WorstRankBytes(n, int(a.ranks)), available);
      if (a.ranks > 1) EXPECT_GT(r.model.WorstRankBytes(n, int(a.ranks - 1)), available);
    }
}

TEST(MemoryBudget, MessageIsOneLineWithBytesNeededAndAvailable) {
  const MemoryRequest r = MatrixOnly(1536, 4, {6, 24, 96, 384, 1536});
  const std::string line = NotEnoughMemoryMessage(r, 1, 18874368, 2666666, "--memory-limit");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("scene.obj: ", 0), 0u) << line;
  EXPECT_NE(line.find("need 18874368 bytes per rank"), std::string::npos) << line;
  EXPECT_NE(line.find("2666666 bytes per rank are available"), std::string::npos) << line;
  EXPECT_NE(line.find("8 ranks"), std::string::npos) << line;
  EXPECT_NE(line.find("--precision float: no (9437184 bytes per rank)"), std::string::npos) << line;
  EXPECT_NE(line.find("--subdiv 3 (384 patches)"), std::string::npos) << line;
}

TEST(MemoryBudget, CheckPassesOrThrowsOnEveryRank) {
  MemoryRequest r = MatrixOnly(1000, -1, {});
  r.rows = 1000;  // this (only) rank holds every row: 8 MB
  const MemoryBudget ok = CheckMemory(MPI_COMM_WORLD, r, "9M");
  EXPECT_EQ(ok.needBytes, 8e6);
  EXPECT_EQ(ok.limitBytes, 9.0 * kMiB);
  EXPECT_EQ(ok.Describe(), "limit 9.0 MiB from --memory-limit");
  // The boundary: exactly the need fits, one byte less does not.
  EXPECT_NO_THROW(CheckMemory(MPI_COMM_WORLD, r, "8000000"));
  try {
    CheckMemory(MPI_COMM_WORLD, r, "7999999");
    ADD_FAILURE() << "7999999 bytes accepted for 8000000";
  } catch (const InputError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("need 8000000 bytes per rank"), std::string::npos) << what;
    EXPECT_NE(what.find("7999999 bytes per rank are available"), std::string::npos) << what;
  }
  // The default: the node's available memory shared among its ranks.
  const MemoryBudget node = RankMemoryLimit(MPI_COMM_WORLD, "");
  EXPECT_GT(node.limitBytes, 0);
  EXPECT_NE(node.source.find("node"), std::string::npos) << node.source;
}

TEST(MemoryBudget, AllocationFailuresBecomeOneInputError) {
  EXPECT_NO_THROW(AllocateOnEveryRank(MPI_COMM_WORLD, "nothing", [] {}));
  try {
    AllocateOnEveryRank(MPI_COMM_WORLD, "the rank's rows of F", [] { throw std::bad_alloc(); });
    ADD_FAILURE() << "no error";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("out of memory on rank 0 allocating the rank's rows of F"), std::string::npos)
        << e.what();
  }
  // A rank's own finding (a GPU without room for the kernel's stack) stops every rank with its message.
  try {
    AllocateOnEveryRank(MPI_COMM_WORLD, "the rank's rows of F", [] { throw InputError("no room on the GPU"); });
    ADD_FAILURE() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(std::string(e.what()), "rank 0: no room on the GPU");
  }
}

}  // namespace
}  // namespace rad
