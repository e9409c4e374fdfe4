/* layout_abi_1_2.c: what ABI 1.2 appended, frozen (layout_abi_1_0.c and layout_abi_1_1.c keep
 * pinning theirs).
 *
 * ABI 1.2 appended `flags` to the end of dlrt_collective_api: DLRT_COLLECTIVES_HOST_MEMORY
 * says the table makes host-memory communicators, and the host finds its transport between
 * worker processes by that bit, never by a plugin's name. A 1.0/1.1 plugin's table has a
 * struct_size that stops before it, which reads as 0 (device collectives only).
 *
 * Same rules as the older files: on LP64, up to minor 2 each struct listed here is exactly
 * its 1.2 size; a later minor may only grow it, and pins its own additions in its own file.
 * C11 for _Static_assert; the headers themselves are C99.
 */
#include <stddef.h>

#include "dlrt/plugin.h"

#if !defined(__LP64__)
#error "layout_abi_1_2.c pins the LP64 layout; build it only on LP64 targets"
#endif

#define PIN_FIELD(type, field, offset, size)                                         \
  _Static_assert(offsetof(type, field) == (offset),                                  \
                 "ABI 1.2 break: " #type "." #field " moved (expected offset " #offset ")"); \
  _Static_assert(sizeof(((type*)0)->field) == (size),                                \
                 "ABI 1.2 break: " #type "." #field " changed size (expected " #size ")")

#if DLRT_ABI_MAJOR != 1
#error "this file pins ABI 1.2 and later minors of major 1"
#elif DLRT_ABI_MINOR <= 2
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) == (size), "ABI 1.2 break: sizeof(" #type ") is not " #size)
#else
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) >= (size), "ABI break: sizeof(" #type ") shrank below its 1.2 size " #size)
#endif

/* ---- dlrt_collective_api (plugin.h): 1.0's 80 bytes, then the flags ---- */
PIN_SIZE(dlrt_collective_api, 88);
PIN_FIELD(dlrt_collective_api, all_gather, 72, 8);
PIN_FIELD(dlrt_collective_api, flags, 80, 8);
_Static_assert(DLRT_COLLECTIVES_HOST_MEMORY == 0x1u,
               "ABI 1.2 break: DLRT_COLLECTIVES_HOST_MEMORY renumbered (expected 0x1)");
