// posix/plugin_files.cc: the plugin search's system part on POSIX (plugin_search.hpp,
// platform.hpp): canonical paths, folder listing, and the ownership/mode rules checked on the
// descriptor that the loader then loads (/proc/self/fd/N).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "log.hpp"
#include "platform/platform.hpp"
#include "plugin_search.hpp"

namespace dlrt::core {
namespace {

// realpath(3) into a std::string; "" with errno set on failure.
std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return "";
  return buf;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

namespace platform {

bool is_absolute_path(const std::string& path) { return !path.empty() && path[0] == '/'; }

std::string canonical_path(const std::string& path, std::string* error) {
  std::string out = canonical(path);
  if (out.empty() && error != nullptr) *error = std::strerror(errno);
  return out;
}

// stat, not lstat: `canonical` has no links left.
bool is_directory(const std::string& canonical) {
  struct stat st {};
  return ::stat(canonical.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> plugin_files_in(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (starts_with(name, "libdlrt-") && ends_with(name, ".so")) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::vector<std::string> files;
  for (const auto& n : names) files.push_back(dir + "/" + n);
  return files;
}

}  // namespace platform

namespace {

std::string owner_and_mode_problem(const std::string& what, const std::string& path,
                                   const struct stat& st) {
  uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return fmt::format("{} {} is owned by uid {}, not by this user (uid {}) or root", what, path,
                       st.st_uid, me);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format(
        "{} {} is {}-writable (mode {:o}); plugins and their folders must be "
        "writable only by their owner",
        what, path, (st.st_mode & S_IWOTH) != 0 ? "world" : "group", st.st_mode & 07777);
  return "";
}

}  // namespace

PluginFile::~PluginFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string PluginFile::load_path() const { return fmt::format("/proc/self/fd/{}", fd_); }

std::string ancestor_folder_problem(const std::string& folder) {
  // From the plugin's folder's parent up to "/": whoever may rename an entry of one of these
  // folders can swap the whole subtree, plugin included (the rule of sudo and ssh).
  std::string dir = folder;
  while (dir != "/") {
    size_t slash = dir.rfind('/');
    dir = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
      return fmt::format("cannot stat {}, an ancestor of plugin folder {}: {}", dir, folder,
                         std::strerror(errno));
    uid_t me = ::geteuid();
    if (st.st_uid != me && st.st_uid != 0)
      return fmt::format(
          "{}, an ancestor of plugin folder {}, is owned by uid {}, not by this "
          "user (uid {}) or root",
          dir, folder, st.st_uid, me);
    const bool writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    // A sticky folder owned by root (/tmp) lets nobody rename what others own in it.
    const bool sticky_root = (st.st_mode & S_ISVTX) != 0 && st.st_uid == 0;
    if (writable && !sticky_root)
      return fmt::format(
          "{}, an ancestor of plugin folder {}, is {}-writable (mode {:o}) and "
          "not a sticky folder owned by root: anyone who can write there can "
          "rename the folder and swap the plugin; every folder above a plugin "
          "must be writable only by its owner (or be sticky and root's, as /tmp)",
          dir, folder, (st.st_mode & S_IWOTH) != 0 ? "world" : "group", st.st_mode & 07777);
  }
  return "";
}

std::string check_plugin_file(const std::string& path, std::shared_ptr<PluginFile>* opened) {
  // The checks run on the open descriptor, and the loader loads that same descriptor
  // (/proc/self/fd/N), so the file checked is the file loaded even if the path is swapped
  // in between. O_NONBLOCK: a FIFO under a plugin's name must not block the search.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fmt::format("cannot open plugin {}: {}", path, std::strerror(errno));
  auto file = std::make_shared<PluginFile>(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return fmt::format("cannot stat plugin {}: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fmt::format("plugin {} is not a regular file", path);
  std::string problem = owner_and_mode_problem("plugin", path, st);
  if (!problem.empty()) return problem;
  std::string dir = path.substr(0, path.rfind('/'));
  if (dir.empty()) dir = "/";
  if (::stat(dir.c_str(), &st) != 0)
    return fmt::format("cannot stat plugin folder {}: {}", dir, std::strerror(errno));
  problem = owner_and_mode_problem("plugin folder", dir, st);
  if (!problem.empty()) return problem;
  problem = ancestor_folder_problem(dir);
  if (!problem.empty()) return problem;
  if (opened != nullptr) *opened = std::move(file);
  return "";
}

std::string default_plugin_dir() {
  // this_line_location() is the file of the module this function was compiled into: libdlrt.so
  // itself (dladdr underneath), wherever it was installed or built.
  boost::dll::fs::error_code ec;
  boost::dll::fs::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) {
    log(DLRT_LOG_WARNING, "loader",
        "cannot find libdlrt's own location ({}); skipping the "
        "default plugin folder",
        ec.message());
    return "";
  }
  return (self.parent_path() / "dlrt" / "plugins").string();
}

}  // namespace dlrt::core
