// Whether the executable's operator new advises large blocks into huge pages (huge_page_allocations.cpp).
#pragma once

// Not under a sanitizer: its allocator owns new, delete, malloc and free, and a block from malloc freed by its
// operator delete is an error there (alloc-dealloc-mismatch); its shadow memory changes the pages anyway.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RAD_ALLOCATOR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define RAD_ALLOCATOR_SANITIZED 1
#endif
#endif

namespace rad {
#if defined(RAD_ALLOCATOR_SANITIZED)
inline constexpr bool kHugePageAdvice = false;
#else
inline constexpr bool kHugePageAdvice = true;
#endif
}  // namespace rad
