// test_env.hpp: setting the process's environment from a test, on POSIX and Windows alike.
// Header-only; the test targets that use it add tests/common to their include path.
#pragma once

#include <cstdlib>

namespace dlrt_test {

// Sets (value non-null) or removes an environment variable of this process: setenv and
// unsetenv on POSIX, _putenv_s on Windows (an empty value removes the variable there).
inline void set_env(const char* name, const char* value) {
#if defined(_WIN32)
  _putenv_s(name, value != nullptr ? value : "");
#else
  if (value != nullptr)
    setenv(name, value, 1);
  else
    unsetenv(name);
#endif
}

}  // namespace dlrt_test
