#include "util/memory_budget.h"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "util/agree.h"
#include "util/decomposition.h"
#include "util/error.h"

namespace rad {

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

unsigned long long ParseMemorySize(const std::string &text, const std::string &option) {
  const auto bad = [&](const std::string &why) { return InputError(option + " '" + text + "': " + why); };
  size_t p = 0;
  while (p < text.size() && std::isspace((unsigned char)text[p])) ++p;
  std::string whole, fraction;
  bool point = false;
  for (; p < text.size(); ++p) {
    const char c = text[p];
    if (std::isdigit((unsigned char)c)) (point ? fraction : whole) += c;
    else if (c == '.' && !point) point = true;
    else break;
  }
  if (whole.empty() && fraction.empty())
    throw bad("not a size (expected e.g. 512M, 8G, 1.5GiB or a number of bytes)");
  std::string unit;
  for (; p < text.size(); ++p)
    if (!std::isspace((unsigned char)text[p])) unit += char(std::tolower((unsigned char)text[p]));
  unsigned long long multiplier = 1;
  if (!unit.empty() && unit != "b") {
    const std::string prefixes = "kmgtp";
    const size_t power = prefixes.find(unit[0]);
    const std::string rest = unit.substr(1);
    if (power == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib"))
      throw bad("unknown unit '" + unit + "' (use K, M, G, T or P, optionally followed by B or iB)");
    multiplier = 1ULL << (10 * (power + 1));
  }
  if (!fraction.empty() && multiplier == 1)
    throw bad("a fraction of a byte: give a unit (K, M, G, T) or a whole number of bytes");
  constexpr unsigned long long kMax = 1ULL << 63;
  unsigned __int128 value = 0;
  for (char c : whole) {
    value = value * 10 + unsigned(c - '0');
    if (value >= kMax) throw bad("too large (2^63 bytes or more)");
  }
  value *= multiplier;
  if (!fraction.empty()) {
    const long double part = std::strtold(("0." + fraction).c_str(), nullptr);
    value += (unsigned __int128)std::floor(part * (long double)multiplier);
  }
  if (value >= kMax) throw bad("too large (2^63 bytes or more)");
  if (value == 0) throw bad("must be more than 0 bytes");
  return (unsigned long long)value;
}

std::string FormatBytes(double bytes) {
  char text[64];
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
    return text;
  }
  int u = 0;
  double v = bytes / 1024;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

namespace {

std::string ReadText(const std::string &path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number after `key` at the start of a line of `text` ("key value" or "key: value"), if any.
std::optional<double> KeyedNumber(const std::string &text, const std::string &key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    size_t p = key.size();
    if (p < line.size() && line[p] == ':') ++p;
    if (p >= line.size() || !std::isspace((unsigned char)line[p])) continue;  // a longer key
    char *end = nullptr;
    const double v = std::strtod(line.c_str() + p, &end);
    if (end != line.c_str() + p) return v;
  }
  return std::nullopt;
}

std::optional<double> Number(const std::string &text) {
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  while (*end && std::isspace((unsigned char)*end)) ++end;
  if (*end) return std::nullopt;
  return v;
}

}  // namespace

std::optional<double> MemAvailableBytes(const std::string &meminfo) {
  const std::optional<double> kib = KeyedNumber(meminfo, "MemAvailable");
  if (!kib) return std::nullopt;
  return *kib * 1024;  // /proc/meminfo's "kB" are KiB
}

std::optional<double> CgroupRoomBytes(const std::string &limit, const std::string &usage, const std::string &stat,
                                      bool v2) {
  std::string l = limit;
  l.erase(std::remove_if(l.begin(), l.end(), [](unsigned char c) { return std::isspace(c); }), l.end());
  if (l.empty() || l == "max") return std::nullopt;
  const std::optional<double> bytes = Number(l), used = Number(usage);
  if (!bytes || !used) return std::nullopt;
  if (!v2 && *bytes >= std::ldexp(1.0, 62)) return std::nullopt;  // v1 writes "no limit" as about 2^63
  const double inactive = KeyedNumber(stat, v2 ? "inactive_file" : "total_inactive_file").value_or(0.0);
  return std::max(0.0, *bytes - std::max(0.0, *used - inactive));
}

std::string MemoryCgroupPath(const std::string &procSelfCgroup, bool &v2) {
  std::istringstream lines(procSelfCgroup);
  std::string line, unified;
  bool haveUnified = false;
  while (std::getline(lines, line)) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ','))
      if (name == "memory") {
        v2 = false;
        return path;
      }
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      unified = path;
      haveUnified = true;
    }
  }
  v2 = haveUnified;
  return unified;
}

NodeMemory ReadNodeMemory(const std::string &root) {
  namespace fs = std::filesystem;
  const auto at = [&](const std::string &path) { return root + path; };
  NodeMemory node;
  if (const std::optional<double> available = MemAvailableBytes(ReadText(at("/proc/meminfo")))) {
    node.bytes = *available;
    node.source = "MemAvailable";
  } else {
    node.bytes = double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    node.source = "free pages";
  }
  bool v2 = false;
  const std::string path = MemoryCgroupPath(ReadText(at("/proc/self/cgroup")), v2);
  if (path.empty()) return node;
  std::error_code ec;
  fs::path mount = at("/sys/fs/cgroup/memory");
  if (v2) {  // the unified hierarchy: mounted alone, or under "unified" next to v1's controllers
    mount = at("/sys/fs/cgroup");
    if (!fs::exists(mount / "cgroup.controllers", ec)) mount /= "unified";
  }
  const fs::path relative = fs::path(path).relative_path();
  fs::path dir = relative.empty() ? mount : mount / relative;
  if (!fs::is_directory(dir, ec)) dir = mount;  // a cgroup namespace: this process's cgroup is the mount's root
  // Every cgroup from this process's up to the root limits it: the least room among them counts.
  for (;;) {
    const std::optional<double> room =
        v2 ? CgroupRoomBytes(ReadText((dir / "memory.max").string()), ReadText((dir / "memory.current").string()),
                             ReadText((dir / "memory.stat").string()), true)
           : CgroupRoomBytes(ReadText((dir / "memory.limit_in_bytes").string()),
                             ReadText((dir / "memory.usage_in_bytes").string()),
                             ReadText((dir / "memory.stat").string()), false);
    if (room && *room < node.bytes) {
      node.bytes = *room;
      node.source = "the memory cgroup's limit less its usage";
    }
    if (dir == mount || dir.string().size() <= mount.string().size()) break;
    dir = dir.parent_path();
  }
  return node;
}

double MemoryModel::ExchangeEntries(long long n, long long rows, int ranks) {
  if (ranks <= 1 || rows <= 0) return 0;
  // Of the N - rows entries of a row in other ranks' rows, ComputesPair picks about half (pair.h); over the
  // rank's rows the count stays within one per row of half (tested against the exact layout).
  return double(rows) * (double(std::max(0LL, n - rows)) / 2 + 1);
}

double MemoryModel::RankBytes(long long n, long long rows, int ranks) const {
  const double entries = double(rows) * double(n);
  double bytes = entries * (bytesPerEntry + entryOverhead) + bytesPerPatch * double(n) + fixedBytes;
  if (pairExchange) {
    const double exchanged = ExchangeEntries(n, rows, ranks);
    bytes += (exchanged + std::min(exchanged, double(exchangeChunkEntries))) * bytesPerEntry;
  }
  return bytes;
}

double MemoryModel::WorstRankBytes(long long n, int ranks) const {
  return RankBytes(n, MostRows(n, ranks), ranks);
}

MemoryAlternatives FindAlternatives(const MemoryRequest &request, int ranks, double available) {
  MemoryAlternatives a;
  const MemoryModel &m = request.model;
  const long long n = request.patches;
  auto fits = [&](const MemoryModel &model, long long patches, long long p) {
    return model.WorstRankBytes(patches, int(std::min<long long>(p, 1LL << 30))) <= available;
  };
  // Ranks: the bytes per rank fall as ranks are added; one row per rank is as far as it goes.
  const long long most = std::max(1LL, std::min(n, 1LL << 30));
  if (n > 0 && fits(m, n, most)) {
    long long lo = std::max(1, ranks), hi = lo;
    while (!fits(m, n, hi)) {
      lo = hi;
      hi = std::min(most, hi * 2);
    }
    while (hi - lo > 1) {  // hi fits; lo is the last tried that does not (or the current count)
      const long long mid = lo + (hi - lo) / 2;
      (fits(m, n, mid) ? hi : lo) = mid;
    }
    a.ranks = hi;
  }
  if (!request.floatHint.empty()) {
    MemoryModel narrow = m;
    narrow.bytesPerEntry = 4;
    narrow.fixedBytes += request.floatExtraBytes;
    a.floatBytes = narrow.WorstRankBytes(n, ranks);
    a.floatFits = a.floatBytes <= available;
  }
  if (!request.patchesBySubdiv.empty()) {
    for (int k = std::min<int>(request.subdiv, int(request.patchesBySubdiv.size())) - 1; k >= 0; --k)
      if (fits(m, request.patchesBySubdiv[size_t(k)], ranks)) {
        a.subdiv = k;
        a.patches = request.patchesBySubdiv[size_t(k)];
        break;
      }
  } else if (n > 1 && fits(m, 1, ranks)) {
    long long lo = 1, hi = n;  // lo fits, hi does not
    while (hi - lo > 1) {
      const long long mid = lo + (hi - lo) / 2;
      (fits(m, mid, ranks) ? lo : hi) = mid;
    }
    a.patches = lo;
  }
  return a;
}

std::string NotEnoughMemoryMessage(const MemoryRequest &request, int ranks, double need, double available,
                                   const std::string &source) {
  const MemoryModel &m = request.model;
  const long long n = request.patches;
  const MemoryAlternatives a = FindAlternatives(request, ranks, available);
  char text[512];
  std::snprintf(text, sizeof text,
                "not enough memory: %lld patches on %d rank(s) need %.0f bytes per rank (%s, of which F %s as "
                "%s), but %.0f bytes per rank are available (%s, %s); what would fit: ",
                n, ranks, need, FormatBytes(need).c_str(),
                FormatBytes(m.MatrixBytes(n, MostRows(n, ranks))).c_str(),
                m.bytesPerEntry == 4 ? "float32" : "float64", available, FormatBytes(available).c_str(),
                source.c_str());
  std::string line = (request.what.empty() ? std::string() : request.what + ": ") + text;
  if (a.ranks > 0)
    line += std::to_string(a.ranks) + " ranks with as much memory each";
  else
    line += "no number of ranks (the data every rank holds for " + std::to_string(n) + " patches alone needs " +
            FormatBytes(m.RankBytes(n, 1, int(std::min<long long>(std::max(1LL, n), 1LL << 30)))) + ")";
  if (!request.floatHint.empty()) {
    std::snprintf(text, sizeof text, "; %s: %s (%.0f bytes per rank)", request.floatHint.c_str(),
                  a.floatFits ? "yes" : "no", a.floatBytes);
    line += text;
  }
  if (!request.patchesBySubdiv.empty()) {
    if (a.subdiv >= 0)
      line += "; --subdiv " + std::to_string(a.subdiv) + " (" + std::to_string(a.patches) + " patches)";
    else
      line += "; no coarser --subdiv";
  } else {
    if (a.patches <= 0)
      line += "; no matrix of any size";
    else if (!request.patchCountOption.empty())
      line += "; " + request.patchCountOption + " " + std::to_string(a.patches) + " or fewer";
    else
      line += "; a matrix of at most " + std::to_string(a.patches) + " patches";
  }
  return line;
}

std::string MemoryBudget::Describe() const { return "limit " + FormatBytes(limitBytes) + " from " + source; }

namespace {

void BroadcastText(MPI_Comm comm, int root, std::string &text) {
  int length = int(text.size());
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  text.resize(size_t(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, root, comm);
}

}  // namespace

MemoryBudget RankMemoryLimit(MPI_Comm comm, const std::string &limitOption) {
  MemoryBudget budget;
  if (!limitOption.empty()) {  // the same text on every rank: parsed, or refused, alike
    budget.limitBytes = double(ParseMemorySize(limitOption));
    budget.source = "--memory-limit";
    return budget;
  }
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nodeRank = 0, nodeRanks = 1;
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeRanks);
  NodeMemory memory;
  if (nodeRank == 0) memory = ReadNodeMemory();  // once per node, so that its ranks share one figure
  MPI_Bcast(&memory.bytes, 1, MPI_DOUBLE, 0, node);
  BroadcastText(node, 0, memory.source);
  MPI_Comm_free(&node);
  budget.limitBytes = std::floor(memory.bytes / nodeRanks);
  budget.source = "the node's available memory (" + FormatBytes(memory.bytes) + ", " + memory.source +
                  ") shared by " + std::to_string(nodeRanks) + " rank(s)";
  return budget;
}

MemoryBudget CheckMemoryNeed(MPI_Comm comm, double needBytes, const std::string &limitOption,
                             const std::function<std::string(double, double, const std::string &)> &message) {
  MemoryBudget budget = RankMemoryLimit(comm, limitOption);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  budget.needBytes = needBytes;
  struct {
    double over;
    int rank;
  } mine{budget.needBytes - budget.limitBytes, rank}, worst{0, 0};
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  if (worst.over <= 0) return budget;
  double figures[2] = {budget.needBytes, budget.limitBytes};
  MPI_Bcast(figures, 2, MPI_DOUBLE, worst.rank, comm);
  std::string source = budget.source;
  BroadcastText(comm, worst.rank, source);
  throw InputError(message(figures[0], figures[1], source));
}

MemoryBudget CheckMemory(MPI_Comm comm, const MemoryRequest &request, const std::string &limitOption) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const double need = request.model.RankBytes(request.patches, request.rows, ranks);
  return CheckMemoryNeed(comm, need, limitOption, [&](double worstNeed, double limit, const std::string &source) {
    return NotEnoughMemoryMessage(request, ranks, worstNeed, limit, source);
  });
}

void AllocateOnEveryRank(MPI_Comm comm, const std::string &what, const std::function<void()> &allocate) {
  bool ok = true;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string message;
  try {
    allocate();
  } catch (const std::bad_alloc &) {
    ok = false;
    message = "out of memory on rank " + std::to_string(rank) + " allocating " + what +
              " after the memory check passed (a --memory-limit above what the rank can have, or memory taken by "
              "other processes since); use more ranks, --precision float or fewer patches, or give each rank more "
              "memory";
  } catch (const InputError &e) {  // a rank's own finding (e.g. its GPU has no room): every rank stops with it
    ok = false;
    message = "rank " + std::to_string(rank) + ": " + e.what();
  }
  AgreeOrThrow(comm, ok, message);
}

void AbortOutOfMemory() {
  int initialized = 0, finalized = 0, rank = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const bool mpi = initialized && !finalized;
  if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  std::fprintf(stderr,
               "radiosity: error: out of memory on rank %d (%s): an allocation failed; use more ranks, --precision "
               "float or fewer patches, or give each rank more memory (see --memory-limit)\n",
               rank, host);
  std::fflush(stderr);
  if (mpi) MPI_Abort(MPI_COMM_WORLD, kExitInputError);
  std::_Exit(kExitInputError);
}

}  // namespace rad
