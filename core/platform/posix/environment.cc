// posix/environment.cc: the process facts of platform.hpp on POSIX.
#include <stdlib.h>
#include <unistd.h>

#include "platform/platform.hpp"

namespace dlrt::core::platform {

const char* trusted_getenv(const char* name) { return ::secure_getenv(name); }

long process_id() { return static_cast<long>(::getpid()); }

}  // namespace dlrt::core::platform
