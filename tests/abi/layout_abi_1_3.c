/* layout_abi_1_3.c: what ABI 1.3 appended, frozen (the older files keep pinning theirs).
 *
 * ABI 1.3 appended `constant_inputs` (a uint64_t bit set) to the end of dlrt_op_desc: bit i
 * says input i holds the same bytes on every run of the kernels made from the descriptor, so a
 * kernel may prepare from it once (plugin.h). A 1.0-1.2 plugin is handed a struct_size that
 * covers the field and never reads it; a 1.0-1.2 host hands one that stops before it, which a
 * 1.3 plugin reads as 0 (no input known constant; plugins/common/op_view.hpp).
 *
 * Same rules as the older files: on LP64, while DLRT_ABI_MINOR is 3 each struct listed here
 * is exactly its 1.3 size; a later minor may only grow it, and pins its own additions in its
 * own file. C11 for _Static_assert; the headers themselves are C99.
 */
#include <stddef.h>

#include "dlrt/dlrt.h"
#include "dlrt/plugin.h"

#if !defined(__LP64__)
#error "layout_abi_1_3.c pins the LP64 layout; build it only on LP64 targets"
#endif

#define PIN_FIELD(type, field, offset, size)                                                 \
  _Static_assert(offsetof(type, field) == (offset),                                          \
                 "ABI 1.3 break: " #type "." #field " moved (expected offset " #offset ")"); \
  _Static_assert(sizeof(((type*)0)->field) == (size),                                        \
                 "ABI 1.3 break: " #type "." #field " changed size (expected " #size ")")

#if DLRT_ABI_MAJOR != 1 || DLRT_ABI_MINOR < 3
#error "this file pins ABI 1.3 and later minors of major 1"
#elif DLRT_ABI_MINOR == 3
#define PIN_SIZE(type, size) \
  _Static_assert(sizeof(type) == (size), "ABI 1.3 break: sizeof(" #type ") is not " #size)
#else
#define PIN_SIZE(type, size)             \
  _Static_assert(sizeof(type) >= (size), \
                 "ABI break: sizeof(" #type ") shrank below its 1.3 size " #size)
#endif

/* ---- dlrt_op_desc (plugin.h): 1.2's 72 bytes, then the constant inputs ---- */
PIN_SIZE(dlrt_op_desc, 80);
PIN_FIELD(dlrt_op_desc, op_version, 64, 4);
PIN_FIELD(dlrt_op_desc, constant_inputs, 72, 8);
