// Compiled with CXX_STANDARD 11 but linked to dlrt::dlrt: dlrt::dlrt's INTERFACE cxx_std_17
// must raise the standard, else the headers (std::optional) and the
// check below fail to compile. Running it prints the standard it was compiled as.
#include <cstdio>

#include "dlrt/dlrt.hpp"

static_assert(__cplusplus >= 201703L, "dlrt::dlrt must require C++17 of its users");

int main() {
  std::printf("compiled as __cplusplus = %ld; dlrt %s\n", static_cast<long>(__cplusplus),
              dlrt::version().c_str());
  return __cplusplus >= 201703L ? 0 : 1;
}
