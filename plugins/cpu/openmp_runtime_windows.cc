// openmp_runtime_windows.cc: openmp_runtime.hpp on Windows: the plugin's loops use mingw's
// libgomp (static, inside this DLL), oneDNN's dnnl.dll uses Microsoft's vcomp140.dll.
#include <omp.h>
#include <windows.h>

#include <string>

#include "openmp_runtime.hpp"
#include "plugin_support.hpp"

namespace dlrt::cpu {
namespace {

// The module holding `address` (this DLL for the static libgomp), pinned: never unloaded.
void pin_module_of(const void* address, const char* what) {
  HMODULE m = nullptr;
  if (!::GetModuleHandleExW(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
          static_cast<LPCWSTR>(address), &m))
    plugin::log(DLRT_LOG_WARNING, std::string("cpu: could not pin ") + what + " (error " +
                                      std::to_string(::GetLastError()) + ")");
}

// vcomp140.dll's two functions, looked up once in the copy dnnl.dll loaded (it imports the
// DLL, so it is mapped before this plugin runs). Null if it is not there: then oneDNN runs
// with its runtime's default count and the plugin's `threads` option applies to the loops
// only.
struct Vcomp {
  int (*get_max_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  Vcomp() {
    HMODULE m = ::GetModuleHandleW(L"vcomp140.dll");
    if (m == nullptr) return;
    get_max_threads = reinterpret_cast<int (*)()>(
        reinterpret_cast<void*>(::GetProcAddress(m, "omp_get_max_threads")));
    set_num_threads = reinterpret_cast<void (*)(int)>(
        reinterpret_cast<void*>(::GetProcAddress(m, "omp_set_num_threads")));
  }
};

const Vcomp& vcomp() {
  static const Vcomp v;
  return v;
}

}  // namespace

void pin_openmp_runtimes() {
  pin_module_of(reinterpret_cast<const void*>(&omp_get_max_threads), "libgomp");
  if (const Vcomp& v = vcomp(); v.get_max_threads != nullptr)
    pin_module_of(reinterpret_cast<const void*>(v.get_max_threads), "vcomp140.dll");
}

int onednn_max_threads() {
  const Vcomp& v = vcomp();
  return v.get_max_threads != nullptr ? v.get_max_threads() : omp_get_max_threads();
}

void set_onednn_threads(int threads) {
  const Vcomp& v = vcomp();
  if (v.set_num_threads != nullptr) v.set_num_threads(threads);
  omp_set_num_threads(threads);  // the loops' default too, as on Linux
}

}  // namespace dlrt::cpu
