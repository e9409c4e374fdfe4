/* layout_abi_1_4.c: what ABI 1.4 appended, frozen (the older files keep pinning theirs).
 *
 * ABI 1.4 appended four dtypes to dlrt_dtype (types.h): DLRT_U16 = 10, DLRT_U32 = 11,
 * DLRT_U64 = 12, DLRT_I16 = 13, with their element sizes and names. No struct changed. A 1.0-1.3
 * plugin may be handed a descriptor with one of them; it declines a dtype it does not know in
 * op_supported (the rule every plugin follows for every dtype, docs/design.md section 5), and
 * dlrt_dtype_size of an unknown value is 0 to older code, so nothing is read with a wrong size.
 *
 * Same rules as the older files: a later minor may add values after these, never renumber
 * them. C11 for _Static_assert; the headers themselves are C99.
 */
#include <stddef.h>

#include "dlrt/dlrt.h"
#include "dlrt/plugin.h"

#if DLRT_ABI_MAJOR != 1 || DLRT_ABI_MINOR < 4
#error "this file pins ABI 1.4 and later minors of major 1"
#endif

#define PIN_DTYPE(name, value)                                                          \
  _Static_assert(name == (value), "ABI 1.4 break: " #name " is not " #value);

PIN_DTYPE(DLRT_U16, 10)
PIN_DTYPE(DLRT_U32, 11)
PIN_DTYPE(DLRT_U64, 12)
PIN_DTYPE(DLRT_I16, 13)
