// plugin_search.hpp: which plugin files a context loads, in which order, and which it refuses
// before opening them (docs/design.md section 3).
//
// Order: the context's plugin_paths option, then DLRT_PLUGIN_PATH (colon list), then
// `<folder of libdlrt.so>/dlrt/plugins`. The build tree mirrors the install tree
// (build/lib/libdlrt.so, build/lib/dlrt/plugins/), so that one rule finds plugins in both.
// An entry is a file (loaded as it is) or a folder (every libdlrt-*.so in it, by name).
//
// Rules, each with a recorded and logged reason:
//   - never the current directory: a relative entry is refused;
//   - paths are canonicalised (symlinks resolved) and a file seen twice is loaded once;
//   - a plugin file, or the folder holding it, that is group- or world-writable or owned by
//     someone other than the effective user or root is refused (anyone who can write there
//     can make this process run their code);
//   - so is one below any group- or world-writable ancestor folder, up to "/", unless that
//     ancestor is sticky and owned by root (/tmp): whoever can rename a folder on the way can
//     swap the subtree (the rule of sudo and ssh);
//   - the file is opened once (O_NOFOLLOW, O_NONBLOCK), checked through that descriptor
//     (fstat), and the loader loads that descriptor (/proc/self/fd/N): the file checked is the
//     file loaded, even if someone swaps the path after the check.
// DLRT_PLUGIN_PATH is read with secure_getenv (ignored in a setuid/setgid process).
#pragma once

#include <dlrt/dlrt.h>

#include <memory>
#include <string>
#include <vector>

namespace dlrt::core {

// The open descriptor of a checked plugin file (closed when the last holder lets go). On
// Windows a HANDLE opened deny-write (platform/windows/plugin_files.cc).
class PluginFile {
 public:
#if defined(_WIN32)
  using Native = void*;
#else
  using Native = int;
#endif
  explicit PluginFile(Native fd) : fd_(fd) {}
  ~PluginFile();
  PluginFile(const PluginFile&) = delete;
  PluginFile& operator=(const PluginFile&) = delete;
  Native fd() const { return fd_; }
  // "/proc/self/fd/N": what dlopen gets, so it maps the very file that was checked. On
  // Windows the path itself (the held handle keeps that path's file from being replaced).
  std::string load_path() const;

 private:
  Native fd_;
};

// One file the loader will try, or an entry refused before any file was opened.
struct PluginCandidate {
  std::string path;    // canonical absolute path; the entry as given when it was refused
  std::string origin;  // where the entry came from: "plugin_paths", "DLRT_PLUGIN_PATH", "default"
  // When not OK: the search refused or failed this entry; the loader only records it.
  dlrt_code code = DLRT_OK;
  dlrt_plugin_state state = DLRT_PLUGIN_LOADED;
  std::string error;
  // For a candidate that passed the checks: the descriptor they ran on, for the loader.
  std::shared_ptr<PluginFile> file;
};

struct SearchRequest {
  std::vector<std::string> api_paths;  // options.plugin_paths
  std::vector<std::string> env_paths;  // DLRT_PLUGIN_PATH entries
  std::string default_dir;             // default_plugin_dir(), "" to skip
};

// Candidates in load order. Never throws for a bad entry (it becomes a refused candidate).
std::vector<PluginCandidate> find_plugin_candidates(const SearchRequest& request);

// `<folder of libdlrt.so>/dlrt/plugins` (or of whatever binary holds the core, when it is
// linked statically into a test).
std::string default_plugin_dir();

// "" if the canonical file `path`, its folder and every ancestor folder pass the ownership
// and write-permission rules; otherwise the reason, naming the file or folder and its mode.
// *opened (when not NULL) gets the descriptor the checks ran on, after a pass.
std::string check_plugin_file(const std::string& path, std::shared_ptr<PluginFile>* opened);
std::string plugin_permission_problem(const std::string& path);

// "" if every folder above `folder` (canonical), up to "/", is owned by this user or root and
// writable only by its owner, or is sticky and owned by root; otherwise the reason.
std::string ancestor_folder_problem(const std::string& folder);

}  // namespace dlrt::core
