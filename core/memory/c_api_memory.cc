// c_api_memory.cc: dlrt_context_memory_stats (dlrt.h) — a device arena's statistics.
#include <dlrt/dlrt.h>

#include "c_api_util.hpp"
#include "context.hpp"
#include "memory/arena.hpp"

using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::core::write_out;

DLRT_API dlrt_status* dlrt_context_memory_stats(dlrt_context* context, size_t device_index,
                                                dlrt_memory_stats* out) {
  return guarded([&] {
    require(context, "context");
    require(out, "out");
    const dlrt::core::ArenaStats s = context->arena(device_index).stats();
    dlrt_memory_stats full{};
    full.struct_size = sizeof full;
    full.in_use = s.in_use;
    full.peak = s.peak;
    full.reserved = s.reserved;
    full.limit = s.limit;
    full.num_allocs = s.num_allocs;
    write_out(out, full, "out");
  });
}
