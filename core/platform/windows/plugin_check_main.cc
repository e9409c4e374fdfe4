// windows/plugin_check_main.cc: dlrt-plugin-check.exe PLUGIN.dll — the child process of the
// isolated plugin check on Windows (windows/plugin_isolation.cc; plugin_isolation.hpp says
// why). Loads the plugin as the loader does, calls dlrt_plugin_init, and ends with an exit
// code the parent reads. It never reports the plugin's status or load errors: the in-process
// load that follows does, with the plugin's own message.
#include <windows.h>

#include <shellapi.h>

#include <dlrt/plugin.h>

#include "host_api.hpp"
#include "platform/windows/plugin_check.hpp"

int main() {
  using namespace dlrt::core::platform::win;
  // No "the program has stopped working" box: a crash must end the process at once, with the
  // exception's code as its exit code.
  ::SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
  int argc = 0;
  wchar_t** argv = ::CommandLineToArgvW(::GetCommandLineW(), &argc);
  if (argv == nullptr || argc != 2) return 2;  // misuse: the parent says "exited with status 2"
  HMODULE plugin = ::LoadLibraryExW(argv[1], nullptr,
                                    LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
                                        LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (plugin == nullptr) ::ExitProcess(kNotLoadedExitCode);
  auto init = reinterpret_cast<dlrt_plugin_init_fn>(
      reinterpret_cast<void*>(::GetProcAddress(plugin, DLRT_PLUGIN_INIT_SYMBOL)));
  if (init == nullptr) ::ExitProcess(kNotLoadedExitCode);
  // Room to spare, as the in-process loader gives (a newer plugin may write past it).
  struct alignas(dlrt_plugin_api) Padded {
    unsigned char bytes[sizeof(dlrt_plugin_api) + 1024];
  } table{};
  auto* api = reinterpret_cast<dlrt_plugin_api*>(&table);
  api->struct_size = sizeof(dlrt_plugin_api);
  try {
    (void)init(dlrt::core::host_api(), api);  // its status is leaked: the process ends now
  } catch (...) {
    // A throwing init is reported by the in-process load (it catches the same).
  }
  // ExitProcess, not return: no static destructors of the plugin or the core run.
  ::ExitProcess(kInitReturnedExitCode);
}
