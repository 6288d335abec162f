// The executable's allocator (src/executable/huge_page_allocations.cpp, linked into the tests too): large blocks
// are advised into transparent huge pages, so that the walks' scattered reads of the patch array and the tree
// miss the TLB less.
#include <gtest/gtest.h>

#include "executable/huge_page_allocations.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace {

std::string FirstLine(const char *path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The "THPeligible" field of /proc/self/smaps for the mapping that holds `address`, or -1 when none says.
int HugePageEligible(const void *address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto at = std::uintptr_t(address);
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {  // a mapping's first line: "lo-hi perms ..."
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

TEST(HugePages, ALargeBlockIsAdvisedWhereTheKernelWaitsToBeAsked) {
  if (!rad::kHugePageAdvice) GTEST_SKIP() << "built with a sanitizer, whose allocator is left alone";
  const std::string mode = FirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  if (mode.find("[madvise]") == std::string::npos)
    GTEST_SKIP() << "transparent huge pages are not on request here (" << (mode.empty() ? "absent" : mode) << ")";
  const char *setting = std::getenv("RAD_HUGE_PAGES");
  if (setting != nullptr && std::string(setting) == "0") GTEST_SKIP() << "RAD_HUGE_PAGES=0 turns the advice off";
  const std::size_t size = std::size_t(64) << 20;
  std::unique_ptr<char[]> large(new char[size]);
  std::unique_ptr<char[]> small(new char[std::size_t(1) << 20]);
  if (HugePageEligible(large.get()) < 0) GTEST_SKIP() << "/proc/self/smaps has no THPeligible field here";
  // The middle of the large block lies in whole huge pages that were advised; a small block is left alone (a
  // heap page may hold other blocks that did not ask).
  EXPECT_EQ(HugePageEligible(large.get() + size / 2), 1);
  EXPECT_EQ(HugePageEligible(small.get()), 0);
}

}  // namespace
