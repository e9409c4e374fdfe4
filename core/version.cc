// version.cc: dlrt_version and dlrt_abi_version. DLRT_VERSION_STRING comes from project()'s
// VERSION in the top-level CMakeLists.txt (see core/CMakeLists.txt).
#include <dlrt/dlrt.h>
#include <dlrt/plugin.h>

extern "C" {

DLRT_API const char* dlrt_version(void) { return DLRT_VERSION_STRING; }

DLRT_API void dlrt_abi_version(uint32_t* out_major, uint32_t* out_minor, uint32_t* out_floor) {
  // Each pointer is optional: a caller may want only one of the three.
  if (out_major != nullptr) *out_major = DLRT_ABI_MAJOR;
  if (out_minor != nullptr) *out_minor = DLRT_ABI_MINOR;
  if (out_floor != nullptr) *out_floor = DLRT_ABI_MINOR_FLOOR;
}

}  // extern "C"
