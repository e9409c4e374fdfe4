// aligned_memory.hpp: aligned host allocations for the plugins whose device memory is host
// memory. std::aligned_alloc (C++17) is missing from the Windows C runtime, which cannot free
// such blocks with free(); it has _aligned_malloc/_aligned_free instead. Blocks from
// aligned_allocate must be released with aligned_release, never std::free.
#pragma once

#include <cstddef>
#include <cstdlib>

#if defined(_WIN32)
#include <malloc.h>
#endif

namespace dlrt::plugin {

// `size` must be a multiple of `alignment` (a power of two), as std::aligned_alloc wants.
inline void* aligned_allocate(size_t alignment, size_t size) {
#if defined(_WIN32)
  return ::_aligned_malloc(size, alignment);
#else
  return std::aligned_alloc(alignment, size);
#endif
}

inline void aligned_release(void* p) {
#if defined(_WIN32)
  ::_aligned_free(p);
#else
  std::free(p);
#endif
}

}  // namespace dlrt::plugin
