// plugin_search.cc: see plugin_search.hpp.
#include "plugin_search.hpp"

// The system parts (canonical paths, folder listing, the file and folder checks) are in
// platform/posix/plugin_files.cc and platform/windows/plugin_files.cc.
#include <fmt/format.h>
#include <set>

#include "log.hpp"
#include "platform/platform.hpp"

namespace dlrt::core {
namespace {

class Collector {
 public:
  explicit Collector(std::vector<PluginCandidate>& out) : out_(out) {}

  // One search entry (file or folder). `explicit_entry`: given by the user, so a missing
  // path is worth recording; the default folder may simply not exist.
  void add_entry(const std::string& entry, const std::string& origin, bool explicit_entry) {
    if (!platform::is_absolute_path(entry)) {
      refuse(entry, origin, DLRT_PLUGIN_REFUSED, DLRT_INVALID_ARGUMENT,
             fmt::format("{} entry '{}' is a relative path; plugin paths must be absolute "
                         "(dlrt never loads plugins from the current directory)",
                         origin, entry));
      return;
    }
    std::string why;
    std::string path = platform::canonical_path(entry, &why);
    if (path.empty()) {
      if (explicit_entry)
        refuse(entry, origin, DLRT_PLUGIN_FAILED, DLRT_NOT_FOUND,
               fmt::format("{} entry '{}' cannot be used: {}", origin, entry, why));
      else
        log(DLRT_LOG_DEBUG, "loader", "default plugin folder {} is not there ({})", entry, why);
      return;
    }
    if (platform::is_directory(path)) {
      log(DLRT_LOG_DEBUG, "loader", "searching {} ({})", path, origin);
      for (const auto& file : platform::plugin_files_in(path))
        add_file(platform::canonical_path(file, nullptr), origin);
    } else {
      add_file(path, origin);
    }
  }

 private:
  void add_file(const std::string& path, const std::string& origin) {
    if (path.empty()) return;  // a dangling symlink in a folder: nothing to load
    if (!seen_.insert(path).second) {
      log(DLRT_LOG_DEBUG, "loader", "{} was already found earlier in the search; skipping", path);
      return;
    }
    PluginCandidate c;
    c.path = path;
    c.origin = origin;
    std::string problem = check_plugin_file(path, &c.file);
    if (!problem.empty()) {
      c.state = DLRT_PLUGIN_REFUSED;
      c.code = DLRT_PERMISSION_DENIED;
      c.error = "refused: " + problem;
    }
    out_.push_back(std::move(c));
  }

  void refuse(const std::string& entry, const std::string& origin, dlrt_plugin_state state,
              dlrt_code code, std::string error) {
    PluginCandidate c;
    c.path = entry;
    c.origin = origin;
    c.state = state;
    c.code = code;
    c.error = std::move(error);
    out_.push_back(std::move(c));
  }

  std::vector<PluginCandidate>& out_;
  std::set<std::string> seen_;
};

}  // namespace

std::string plugin_permission_problem(const std::string& path) {
  return check_plugin_file(path, nullptr);
}

std::vector<PluginCandidate> find_plugin_candidates(const SearchRequest& request) {
  std::vector<PluginCandidate> out;
  Collector collector(out);
  for (const auto& p : request.api_paths) collector.add_entry(p, "plugin_paths", true);
  for (const auto& p : request.env_paths) collector.add_entry(p, "DLRT_PLUGIN_PATH", true);
  if (!request.default_dir.empty()) collector.add_entry(request.default_dir, "default", false);
  return out;
}

}  // namespace dlrt::core
