// The executable's large arrays in transparent huge pages (2 MiB), where the kernel gives them only to memory that
// asks (transparent_hugepage "madvise", Debian's default).
//
// Why: at a million patches the walks of the hierarchical operator read the patch array (216 MB), the patch tree
// and its points (about 100 MB) at scattered places, a few lines per link. With 4 KiB pages nearly every such
// read also misses the TLB, and a prefetch waits for its page walk before the next one can be issued. On the
// 8 x 8 city at N = 999857 (1 rank x 2 threads, the first 180 s of the element walk, one run after the other)
// the walk went 1.15 times as far with huge pages as without (18.8 % of its elements against 16.4 %), the same
// bits; see jobs/README.md, "Scattered reads at a million patches".
//
// How: every block of at least kAdviseAtLeast bytes that operator new takes is advised MADV_HUGEPAGE over the
// whole huge pages inside it, before anything touches it (glibc serves such blocks with fresh mmap pages). Only
// the executable replaces operator new: the library (radiosity::core) leaves its users' allocator alone. Freeing
// is the default operator delete (free), as for the default operator new (malloc). RAD_HUGE_PAGES=0 turns the
// advice off (to measure it, or where huge pages misbehave); it changes no result, only where pages come from.
#include "executable/huge_page_allocations.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if !defined(RAD_ALLOCATOR_SANITIZED)

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kAdviseAtLeast = std::size_t(8) << 20;

bool HugePagesWanted() {
  static const bool wanted = [] {
    const char *setting = std::getenv("RAD_HUGE_PAGES");
    return setting == nullptr || std::strcmp(setting, "0") != 0;
  }();
  return wanted;
}

void AdviseHugePages(void *block, std::size_t size) {
  const std::uintptr_t begin = (std::uintptr_t(block) + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (std::uintptr_t(block) + size) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);  // a hint: failure is harmless
}

}  // namespace

void *operator new(std::size_t size) {
  for (;;) {
    if (void *block = std::malloc(size == 0 ? 1 : size)) {
      if (size >= kAdviseAtLeast && HugePagesWanted()) AdviseHugePages(block, size);
      return block;
    }
    std::new_handler handler = std::get_new_handler();  // as the default operator new does
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

#endif  // RAD_ALLOCATOR_SANITIZED
