// plugin_library.hpp: a plugin's shared library as the dynamic loader sees it — the name
// dlopen gets (the descriptor the search checked, as /proc/self/fd/N, so the file checked is
// the file loaded), the load itself, and the unload that may keep the library mapped until
// exit. POSIX: platform/posix/plugin_library.cc; Windows: platform/windows/plugin_library.cc
// (LoadLibraryExW by the path whose file the search holds open deny-write).
#pragma once

#include <boost/dll/shared_library.hpp>
#include <memory>
#include <string>

#include "plugin_search.hpp"

namespace dlrt::core {

// Whether an unloaded plugin's library stays mapped until exit (marked RTLD_NODELETE before its
// dlclose): DLRT_KEEP_PLUGINS_LOADED=1 or 0, else on in AddressSanitizer builds and off
// otherwise. Why: LeakSanitizer scans at exit. A block a plugin's libraries keep on purpose
// (oneDNN's kernel caches, OpenMP's pools) is referenced from their globals; once the library
// is dlclosed those globals are unmapped, the block reads as leaked, and its frames show as
// "<unknown module>", which no suppression can name. Kept loaded, such blocks stay reachable,
// and a real leak in a plugin is reported with its library's frames. Everything else about
// unloading (devices closed, plugin_destroy called) is unchanged. Read at each unload.
bool keep_plugins_loaded();

// What dlopen gets for `candidate`: its checked descriptor as /proc/self/fd/N, or a duplicate
// of it when that name already means another loaded library (then `*file` holds the
// duplicate, to keep while the library is loaded); the canonical path when neither works or
// the candidate has no descriptor. `*file` is the descriptor to hold in every case.
std::string load_path_for(const PluginCandidate& candidate, std::shared_ptr<PluginFile>* file);

// Loads `load_path` into `library`: dlopen(RTLD_NOW | RTLD_LOCAL) on POSIX; on Windows
// LoadLibraryExW with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS (the
// DLLs a plugin imports are found beside it and in the system folders, never in the current
// folder or PATH). Throws std::exception with the system's reason on failure.
void load_library(boost::dll::shared_library& library, const std::string& load_path);

// Unloads `library` (no-op when it is not loaded); when keep_plugins_loaded(), marks it
// RTLD_NODELETE first so its code stays mapped until exit. `path` names it in the log.
void unload_library(boost::dll::shared_library& library, const std::string& path);

}  // namespace dlrt::core
