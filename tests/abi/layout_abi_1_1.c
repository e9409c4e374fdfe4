/* layout_abi_1_1.c: what ABI 1.1 appended, frozen (layout_abi_1_0.c keeps pinning 1.0).
 *
 * ABI 1.1 appended one field to the end of dlrt_kernel_args, `rng_offset_device`: the run
 * count in device memory, which random kernels read when they execute, so a captured graph
 * (whose kernel arguments are frozen) still draws fresh numbers on every replay. The 1.0
 * fields stay where they were (layout_abi_1_0.c); a 1.0 plugin is given a struct_size that
 * covers the new field and never reads it, a 1.0 host gives one that stops before it.
 * It also added the host-API counters dlrt_run_stats (dlrt_executable_run_stats) and the
 * distribution section of dlrt.h (dlrt_strategy_options and the dlrt_strategy_* calls).
 *
 * Same rules as the 1.0 file: on LP64, while DLRT_ABI_MINOR is 1 each struct listed here is
 * exactly its 1.1 size; a later minor may only grow it, and pins its own additions in its own
 * file. C11 for _Static_assert; the headers themselves are C99.
 */
#include <stddef.h>

#include "dlrt/dlrt.h"
#include "dlrt/plugin.h"

#if !defined(__LP64__)
#error "layout_abi_1_1.c pins the LP64 layout; build it only on LP64 targets"
#endif

#define PIN_FIELD(type, field, offset, size)                                                 \
  _Static_assert(offsetof(type, field) == (offset),                                          \
                 "ABI 1.1 break: " #type "." #field " moved (expected offset " #offset ")"); \
  _Static_assert(sizeof(((type*)0)->field) == (size),                                        \
                 "ABI 1.1 break: " #type "." #field " changed size (expected " #size ")")

#if DLRT_ABI_MAJOR != 1 || DLRT_ABI_MINOR < 1
#error "this file pins ABI 1.1 and later minors of major 1"
#elif DLRT_ABI_MINOR == 1
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) == (size), "ABI 1.1 break: sizeof(" #type ") is not " #size)
#else
#define PIN_SIZE(type, size)             \
  _Static_assert(sizeof(type) >= (size), \
                 "ABI break: sizeof(" #type ") shrank below its 1.1 size " #size)
#endif

/* ---- dlrt_kernel_args (plugin.h): 1.0's 64 bytes, then the device offset ---- */
PIN_SIZE(dlrt_kernel_args, 72);
PIN_FIELD(dlrt_kernel_args, rng_offset, 56, 8);
PIN_FIELD(dlrt_kernel_args, rng_offset_device, 64, 8);

/* ---- dlrt_run_stats (dlrt.h) ---- */
PIN_SIZE(dlrt_run_stats, 40);
PIN_FIELD(dlrt_run_stats, struct_size, 0, 8);
PIN_FIELD(dlrt_run_stats, kernels, 8, 8);
PIN_FIELD(dlrt_run_stats, runs, 16, 8);
PIN_FIELD(dlrt_run_stats, captured_replays, 24, 8);
PIN_FIELD(dlrt_run_stats, run_allocations, 32, 8);

/* ---- dlrt_strategy_options (dlrt.h, distribution) ---- */
PIN_SIZE(dlrt_strategy_options, 40);
PIN_FIELD(dlrt_strategy_options, struct_size, 0, 8);
PIN_FIELD(dlrt_strategy_options, devices, 8, 8);
PIN_FIELD(dlrt_strategy_options, num_devices, 16, 8);
PIN_FIELD(dlrt_strategy_options, multi_worker, 24, 4);
PIN_FIELD(dlrt_strategy_options, reserved0, 28, 4);
PIN_FIELD(dlrt_strategy_options, timeout_ms, 32, 8);
