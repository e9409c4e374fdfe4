/* dlrt/status.h: status codes and the status handle shared by the host API and the plugin ABI.
 *
 * Errors are values. Every fallible function returns `dlrt_status*`: NULL means OK, anything
 * else is an error carrying a code and a message. No abort, exit or C++ exception ever
 * crosses a dlrt boundary.
 *
 * Ownership: a non-NULL status returned to you is yours; release it with dlrt_status_free
 * (host programs) or host_api->status_free (plugins). Plugins never allocate statuses
 * themselves: they ask the host (dlrt_host_api.status_create), so the host always frees what
 * it receives with its own allocator.
 *
 * This header is C99 and includes no C++ header.
 */
#ifndef DLRT_STATUS_H_
#define DLRT_STATUS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(_WIN32) && defined(DLRT_BUILDING_LIBDLRT) /* DLRT_API: libdlrt's functions. */
#define DLRT_API __declspec(dllexport) /* libdlrt.dll exports them (its build defines that) */
#elif defined(_WIN32) /* (kept to as many lines as before, so Linux ccache entries stay) */
#define DLRT_API __declspec(dllimport) /* and every program using libdlrt.dll imports them */
#elif defined(__GNUC__)
#define DLRT_API __attribute__((visibility("default")))
#else
#define DLRT_API
#endif

/* Status codes, numbered as abseil / gRPC number them so they map one to one. */
typedef enum dlrt_code {
  DLRT_OK = 0,
  DLRT_CANCELLED = 1,
  DLRT_UNKNOWN = 2,
  DLRT_INVALID_ARGUMENT = 3,  /* the caller passed something malformed */
  DLRT_DEADLINE_EXCEEDED = 4, /* a timeout expired (collectives, waits) */
  DLRT_NOT_FOUND = 5,         /* a named thing (device, plugin, file, op) does not exist */
  DLRT_ALREADY_EXISTS = 6,
  DLRT_PERMISSION_DENIED = 7,  /* e.g. a plugin file that is world-writable */
  DLRT_RESOURCE_EXHAUSTED = 8, /* out of memory, or over a configured limit */
  DLRT_FAILED_PRECONDITION = 9,
  DLRT_ABORTED = 10,
  DLRT_OUT_OF_RANGE = 11,
  DLRT_UNIMPLEMENTED = 12, /* not supported by this plugin/device (yet) */
  DLRT_INTERNAL = 13,      /* a bug, or a vendor library that failed unexpectedly */
  DLRT_UNAVAILABLE = 14,   /* e.g. no driver, no device */
  DLRT_DATA_LOSS = 15,     /* corrupt file */
  DLRT_UNAUTHENTICATED = 16
} dlrt_code;

/* Opaque. Created by libdlrt (dlrt_status_create or, for plugins, host_api->status_create). */
typedef struct dlrt_status dlrt_status;

/* Creates a status. `message` is copied. Returns NULL when code == DLRT_OK.
 * Never fails: on allocation failure a static out-of-memory status is returned, which
 * dlrt_status_free accepts. Thread-safe. */
DLRT_API dlrt_status* dlrt_status_create(dlrt_code code, const char* message);

/* The code of `status`; DLRT_OK for NULL. */
DLRT_API dlrt_code dlrt_status_code(const dlrt_status* status);

/* The message of `status`, owned by the status (valid until it is freed); "" for NULL. */
DLRT_API const char* dlrt_status_message(const dlrt_status* status);

/* Frees `status`; NULL is accepted. */
DLRT_API void dlrt_status_free(dlrt_status* status);

/* "OK", "INVALID_ARGUMENT", ...: a static string; "UNKNOWN_CODE" for values out of range. */
DLRT_API const char* dlrt_code_name(dlrt_code code);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLRT_STATUS_H_ */
