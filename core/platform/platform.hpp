// platform.hpp: what the core asks of the operating system, in one place, with one
// implementation per system chosen at build time: core/platform/posix/*.cc on Linux,
// core/platform/windows/*.cc on Windows (core/CMakeLists.txt picks the folder). Code outside
// core/platform never includes a POSIX or Windows header for these things.
//
// The loader's own system parts (checking, opening, loading and isolating a plugin file) are
// declared where the loader uses them, in plugin_search.hpp, plugin_library.hpp and
// plugin_isolation.hpp, and implemented in the same two folders.
//
// Not here: what every C++17 system has (std::filesystem, std::thread).
#pragma once

#include <string>
#include <vector>

namespace dlrt::core::platform {

// The separator of path lists such as DLRT_PLUGIN_PATH: ':' on POSIX, ';' on Windows, where
// ':' is part of every absolute path ("C:\...").
#if defined(_WIN32)
inline constexpr char kPathListSeparator = ';';
#else
inline constexpr char kPathListSeparator = ':';
#endif

// An environment variable that may choose code to run (DLRT_PLUGIN_PATH) or change how it is
// kept: NULL when unset, and on POSIX also in a setuid/setgid process (secure_getenv), whose
// environment is its caller's. Windows has no setuid; there it is getenv.
const char* trusted_getenv(const char* name);

// This process's id, for unique temporary file names.
long process_id();

// ---- Paths, as the plugin search uses them (plugin_search.cc) ------------------------------

// "/..." on POSIX; "C:\...", "C:/..." or "\\server\share\..." on Windows. Relative paths are
// refused by the search (never the current directory).
bool is_absolute_path(const std::string& path);

// The canonical absolute path of an existing file or folder (links resolved); "" and *error
// set to the system's reason when it cannot be had. UTF-8 on both systems.
std::string canonical_path(const std::string& path, std::string* error);

bool is_directory(const std::string& canonical);

// The plugin files of folder `dir` (canonical), sorted by name: libdlrt-*.so on POSIX,
// libdlrt-*.dll on Windows.
std::vector<std::string> plugin_files_in(const std::string& dir);

}  // namespace dlrt::core::platform
