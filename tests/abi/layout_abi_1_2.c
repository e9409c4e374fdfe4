/* layout_abi_1_2.c: what ABI 1.2 appended, frozen (the 1.0 and 1.1 files keep pinning theirs).
 *
 * ABI 1.2 appended `flags` to the end of dlrt_collective_api (DLRT_COLLECTIVES_HOST_MEMORY: the
 * host finds its transport between workers by this bit) and `op_version` (and a zero
 * `reserved0`, so the struct keeps a size that is a multiple of 8) to the end of dlrt_op_desc: the version of the op's meaning from the core's
 * op schema (core/ops), so an op can change meaning in a later release without a plugin
 * silently computing the old one. A 1.0/1.1 plugin is handed a struct_size that covers the
 * new fields and never reads them; a 1.0/1.1 host hands one that stops before them, which a
 * 1.2 plugin reads as version 1 (plugins/common/op_view.hpp).
 *
 * Same rules as the older files: on LP64, while DLRT_ABI_MINOR is 2 each struct listed here
 * is exactly its 1.2 size; a later minor may only grow it, and pins its own additions in its
 * own file. C11 for _Static_assert; the headers themselves are C99.
 */
#include <stddef.h>

#include "dlrt/dlrt.h"
#include "dlrt/plugin.h"

#if !defined(__LP64__)
#error "layout_abi_1_2.c pins the LP64 layout; build it only on LP64 targets"
#endif

#define PIN_FIELD(type, field, offset, size)                                                 \
  _Static_assert(offsetof(type, field) == (offset),                                          \
                 "ABI 1.2 break: " #type "." #field " moved (expected offset " #offset ")"); \
  _Static_assert(sizeof(((type*)0)->field) == (size),                                        \
                 "ABI 1.2 break: " #type "." #field " changed size (expected " #size ")")

#if DLRT_ABI_MAJOR != 1 || DLRT_ABI_MINOR < 2
#error "this file pins ABI 1.2 and later minors of major 1"
#elif DLRT_ABI_MINOR == 2
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) == (size), "ABI 1.2 break: sizeof(" #type ") is not " #size)
#else
#define PIN_SIZE(type, size)             \
  _Static_assert(sizeof(type) >= (size), \
                 "ABI break: sizeof(" #type ") shrank below its 1.2 size " #size)
#endif

/* ---- dlrt_op_desc (plugin.h): 1.0's 64 bytes, then the op's version ---- */
PIN_SIZE(dlrt_op_desc, 72);
PIN_FIELD(dlrt_op_desc, attrs, 56, 8);
PIN_FIELD(dlrt_op_desc, op_version, 64, 4);
PIN_FIELD(dlrt_op_desc, reserved0, 68, 4);

/* ---- dlrt_collective_api (plugin.h): 1.1's entries, then the capability flags ---- */
PIN_SIZE(dlrt_collective_api, 88);
PIN_FIELD(dlrt_collective_api, all_gather, 72, 8);
PIN_FIELD(dlrt_collective_api, flags, 80, 8);
_Static_assert(DLRT_COLLECTIVES_HOST_MEMORY == 0x1u,
               "ABI 1.2 break: DLRT_COLLECTIVES_HOST_MEMORY renumbered (expected 0x1)");

/* ---- dlrt_context_options (dlrt.h): 1.0's 96 bytes, then plugin isolation ---- */
PIN_SIZE(dlrt_context_options, 112);
PIN_FIELD(dlrt_context_options, gpu_memory_limit, 88, 8);
PIN_FIELD(dlrt_context_options, isolate_plugins, 96, 4);
PIN_FIELD(dlrt_context_options, reserved1, 100, 4);
PIN_FIELD(dlrt_context_options, isolate_timeout_s, 104, 8);
