// openmp_runtime_posix.cc: openmp_runtime.hpp on Linux, where oneDNN and the loops share
// libgomp.
#include <dlfcn.h>
#include <omp.h>

#include <string>

#include "openmp_runtime.hpp"
#include "plugin_support.hpp"

namespace dlrt::cpu {

// RTLD_NODELETE on the copy of libgomp already loaded (found from one of its functions) pins
// it. The handle is not closed: the pin is for good.
void pin_openmp_runtimes() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) == 0 ||
      info.dli_fname == nullptr)
    return;
  if (::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) == nullptr)
    plugin::log(DLRT_LOG_WARNING, std::string("cpu: could not pin the OpenMP runtime ") +
                                      info.dli_fname + ": " + ::dlerror());
}

int onednn_max_threads() { return omp_get_max_threads(); }

void set_onednn_threads(int threads) { omp_set_num_threads(threads); }

}  // namespace dlrt::cpu
