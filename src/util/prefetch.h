// Cache prefetch hints, for loops that read objects scattered in memory: asking for all their lines first lets
// the loads overlap, rather than one cache miss after another.
#pragma once

#include <cstddef>

namespace rad {

// Asks the CPU to load the cache lines of bytes [p, p + size). A hint only: it changes no result.
inline void Prefetch(const void *p, size_t size) {
#if defined(__GNUC__)
  const char *bytes = static_cast<const char *>(p);
  for (size_t at = 0; at < size; at += 64) __builtin_prefetch(bytes + at);
  __builtin_prefetch(bytes + size - 1);  // the object need not start on a line
#else
  (void)p;
  (void)size;
#endif
}

}  // namespace rad
