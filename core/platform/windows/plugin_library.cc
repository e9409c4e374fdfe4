// windows/plugin_library.cc: loading and unloading a plugin DLL (plugin_library.hpp).
//
// POSIX loads the checked descriptor (/proc/self/fd/N). Windows has no such name, and needs
// none: the search holds the file open with FILE_SHARE_READ only (windows/plugin_files.cc),
// so until the library is loaded nobody can write, delete or rename that path's file, and
// LoadLibraryExW by the path maps the file that was checked.
#include <windows.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "log.hpp"
#include "platform/windows/text.hpp"
#include "plugin_library.hpp"

namespace dlrt::core {

// Not in MinGW's headers of every version; the values are Windows' own (Windows 8 and later,
// or Windows 7 with KB2533623).
#ifndef LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
#define LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR 0x00000100
#endif
#ifndef LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
#define LOAD_LIBRARY_SEARCH_DEFAULT_DIRS 0x00001000
#endif

bool keep_plugins_loaded() {
  // No sanitizer builds on Windows, so off unless asked for.
  const char* v = std::getenv("DLRT_KEEP_PLUGINS_LOADED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string load_path_for(const PluginCandidate& candidate, std::shared_ptr<PluginFile>* file) {
  *file = candidate.file;  // held (deny-write) as long as the library is loaded
  return candidate.path;
}

void load_library(boost::dll::shared_library& library, const std::string& load_path) {
  // The two search flags: the DLLs the plugin imports (dnnl.dll beside the cpu plugin) are
  // found in the plugin's own folder, then in the application's and system folders; never in
  // the current folder or on PATH, where anyone might have put a DLL of the same name.
  // Boost.DLL hands these native flags to LoadLibraryExW as they are. The path is widened
  // here: a std::string path would go through the ANSI code page.
  const auto mode = static_cast<boost::dll::load_mode::type>(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
                                                             LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  boost::dll::fs::error_code ec;
  library.load(boost::dll::fs::path(platform::win::widen(load_path)), mode, ec);
  if (ec)
    throw std::runtime_error(fmt::format("LoadLibraryExW({}) failed: {}", load_path,
                                         platform::win::error_text(ec.value())));
}

void unload_library(boost::dll::shared_library& library, const std::string& path) {
  if (!library.is_loaded()) return;
  if (keep_plugins_loaded()) {
    // Pinned: FreeLibrary leaves a pinned module loaded until the process ends.
    HMODULE pinned = nullptr;
    if (::GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                             reinterpret_cast<LPCWSTR>(library.native()), &pinned))
      log(DLRT_LOG_DEBUG, "loader", "{}: kept loaded until exit (DLRT_KEEP_PLUGINS_LOADED)", path);
  }
  library.unload();
}

}  // namespace dlrt::core
