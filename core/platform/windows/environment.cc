// windows/environment.cc: the process facts of platform.hpp on Windows.
#include <windows.h>

#include <cstdlib>

#include "platform/platform.hpp"

namespace dlrt::core::platform {

// No setuid on Windows: a process's environment is its own user's.
const char* trusted_getenv(const char* name) { return std::getenv(name); }

long process_id() { return static_cast<long>(::GetCurrentProcessId()); }

}  // namespace dlrt::core::platform
