/* headers_c99.c: the public C headers, compiled and used as a strict C99 program would.
 *
 * Built with -std=c99 -pedantic -Wall -Wextra -Werror (see CMakeLists.txt), so any C++ism,
 * extension or warning in status.h, types.h, plugin.h or dlrt.h fails the build. Run as a
 * test, it also checks the header-only parts of the ABI that need no libdlrt: the struct
 * initialiser idiom, DLRT_HAS_FIELD and dlrt_plugin_api_fill's size negotiation.
 */
#include "dlrt/dlrt.h"
#include "dlrt/onnx_ops.h"
#include "dlrt/plugin.h"
#include "dlrt/status.h"
#include "dlrt/types.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* Initialising a versioned struct in C99. Designated, because types.h's positional example
 * `{DLRT_STRUCT_SIZE(t)}` trips -Wmissing-field-initializers under -Wextra; both zero the rest. */
static void struct_size_idiom(void) {
  dlrt_tensor_desc d = {.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc)};
  EXPECT(d.struct_size == sizeof(dlrt_tensor_desc));
  EXPECT(d.rank == 0 && d.dtype == DLRT_DTYPE_INVALID);
}

/* A reader given an older, shorter struct sees the trailing fields as absent. */
static void has_field(void) {
  const size_t before_attrs = offsetof(dlrt_device_desc, attrs);
  EXPECT(DLRT_HAS_FIELD(dlrt_device_desc, attrs, sizeof(dlrt_device_desc)));
  EXPECT(!DLRT_HAS_FIELD(dlrt_device_desc, attrs, before_attrs));
  EXPECT(DLRT_HAS_FIELD(dlrt_device_desc, num_attrs, before_attrs));
  EXPECT(!DLRT_HAS_FIELD(dlrt_plugin_api, struct_size, 0));
}

/* dlrt_plugin_api_fill writes min(host size, plugin size) bytes, leaves struct_size as that
 * size, and never touches what lies past it: both an older host and an older plugin. */
static void plugin_api_fill(void) {
  dlrt_plugin_api filled;
  dlrt_plugin_api host;
  const size_t older = offsetof(dlrt_plugin_api, capture); /* a table without the optional tables */
  static const dlrt_capture_api capture = {sizeof(dlrt_capture_api), NULL, NULL, NULL, NULL};

  memset(&filled, 0, sizeof filled);
  filled.struct_size = sizeof filled;
  filled.abi_major = DLRT_ABI_MAJOR;
  filled.name = "test";
  filled.capture = &capture;

  /* Older host: asks for fewer bytes than the plugin has. */
  memset(&host, 0, sizeof host);
  host.struct_size = older;
  dlrt_plugin_api_fill(&host, &filled);
  EXPECT(host.struct_size == older);
  EXPECT(host.abi_major == DLRT_ABI_MAJOR);
  EXPECT(host.name == filled.name);
  EXPECT(host.capture == NULL); /* past the host's size: not written */

  /* Older plugin: fills fewer bytes than the host offers. */
  memset(&host, 0, sizeof host);
  host.struct_size = sizeof host;
  filled.struct_size = older;
  dlrt_plugin_api_fill(&host, &filled);
  EXPECT(host.struct_size == older);
  EXPECT(host.name == filled.name);
  EXPECT(host.capture == NULL); /* the plugin never filled it: stays absent */
  EXPECT(!DLRT_HAS_FIELD(dlrt_plugin_api, capture, host.struct_size));
}

int main(void) {
  struct_size_idiom();
  has_field();
  plugin_api_fill();
  if (failures != 0) {
    fprintf(stderr, "headers_c99: %d check(s) failed\n", failures);
    return 1;
  }
  printf("headers_c99: status.h, types.h, plugin.h, dlrt.h compile as C99; checks passed\n");
  return 0;
}
