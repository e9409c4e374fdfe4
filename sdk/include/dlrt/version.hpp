// dlrt/version.hpp: which libdlrt this is and which plugin ABI it speaks, as the library
// reports them at run time (not the header's macros: a program may run against a newer
// libdlrt than it was compiled with).
#ifndef DLRT_VERSION_HPP_
#define DLRT_VERSION_HPP_

#include <cstdint>
#include <string>

#include "dlrt/error.hpp"

namespace dlrt {

struct AbiVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t floor = 0;  // the oldest minor of `major` this library accepts from a plugin
};

// libdlrt's own version, e.g. "0.1.0".
inline std::string version() { return detail::str(dlrt_version()); }

// The plugin ABI libdlrt speaks (DLRT_ABI_MAJOR/MINOR/MINOR_FLOOR as it was built).
inline AbiVersion abi_version() {
  AbiVersion v;
  dlrt_abi_version(&v.major, &v.minor, &v.floor);
  return v;
}

}  // namespace dlrt

#endif  // DLRT_VERSION_HPP_
