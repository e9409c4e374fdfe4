// posix/plugin_library.cc: loading a plugin through its checked descriptor, and unloading it
// (plugin_library.hpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include "log.hpp"
#include "plugin_library.hpp"

namespace dlrt::core {
namespace {

// The file (device, inode) that the loaded library `map` was mapped from: the /proc/self/maps
// line of the mapping holding its dynamic section. nullopt when not found.
std::optional<std::pair<dev_t, ino_t>> mapped_file(const struct link_map* map) {
  const auto at = reinterpret_cast<uintptr_t>(map->l_ld);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // "7f12...-7f13... r--p 00000000 fd:01 1234567   /path"
    unsigned long lo = 0, hi = 0, offset = 0, inode = 0;
    unsigned major = 0, minor = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &offset, &major,
                    &minor, &inode) != 7)
      continue;
    if (at >= lo && at < hi) return std::make_pair(makedev(major, minor), ino_t(inode));
  }
  return std::nullopt;
}

// Whether `name` would make dlopen return a library other than the file open on `fd`.
// RTLD_NOLOAD never loads anything; it finds a library registered under `name` (as the
// name it was opened with, or as an alias glibc added when the same file was opened again
// under that name) or one mapped from the same file. Only a library from another file is a
// conflict.
bool name_means_another_file(const std::string& name, int fd) {
  void* earlier = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (earlier == nullptr) return false;
  struct link_map* map = nullptr;
  bool other = true;
  struct stat st {};
  if (::dlinfo(earlier, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && ::fstat(fd, &st) == 0) {
    const auto file = mapped_file(map);
    other = !file || file->first != st.st_dev || file->second != st.st_ino;
  }
  ::dlclose(earlier);
  return other;
}

}  // namespace

bool keep_plugins_loaded() {
  const char* v = ::secure_getenv("DLRT_KEEP_PLUGINS_LOADED");
  if (v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0)) return v[0] == '1';
#if defined(__SANITIZE_ADDRESS__)
  return true;  // an ASan build (GCC's define) keeps them: see plugin_library.hpp
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;  // the same for Clang
#else
  return false;
#endif
#else
  return false;
#endif
}

void load_library(boost::dll::shared_library& library, const std::string& load_path) {
  library.load(load_path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
}

// Unloads `library` unless plugins are kept loaded (keep_plugins_loaded): then the library is
// first marked RTLD_NODELETE, found by the name it was opened with (link_map l_name, while
// the descriptor behind a /proc/self/fd/N name is still open), so the dlclose in unload()
// leaves its code and symbols mapped until exit, for LeakSanitizer to symbolise.
void unload_library(boost::dll::shared_library& library, const std::string& path) {
  if (!library.is_loaded()) return;
  if (keep_plugins_loaded()) {
    struct link_map* map = nullptr;
    if (::dlinfo(library.native(), RTLD_DI_LINKMAP, &map) == 0 && map != nullptr) {
      if (void* pinned = ::dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)) {
        ::dlclose(pinned);
        log(DLRT_LOG_DEBUG, "loader", "{}: kept loaded until exit (DLRT_KEEP_PLUGINS_LOADED)",
            path);
      }
    }
  }
  library.unload();
}

// What dlopen gets: the checked descriptor as /proc/self/fd/N, so the file checked is the file
// loaded. glibc matches an already-loaded library by the name it was opened with before
// anything else; when some library is already registered under this /proc/self/fd/N (another
// context loaded a file through a descriptor that has since closed, and that library is still
// loaded: by that context, or kept by DLRT_KEEP_PLUGINS_LOADED), that name could mean a
// different file. Then the descriptor is duplicated onto a number no loaded library is named
// after (`*file` becomes that duplicate, held as long as the library is loaded), so the check
// still holds; only if no such number is found in 64 tries is the canonical path used (the
// old check-then-open window), logged at info level.
std::string load_path_for(const PluginCandidate& candidate, std::shared_ptr<PluginFile>* file) {
  *file = candidate.file;
  if (!candidate.file) return candidate.path;
  std::string by_fd = candidate.file->load_path();
  if (!name_means_another_file(by_fd, candidate.file->fd())) return by_fd;
  int from = candidate.file->fd() + 1;
  for (int tries = 0; tries < 64; ++tries) {
    const int dup = ::fcntl(candidate.file->fd(), F_DUPFD_CLOEXEC, from);
    if (dup < 0) break;
    auto copy = std::make_shared<PluginFile>(dup);
    if (!name_means_another_file(copy->load_path(), dup)) {
      log(DLRT_LOG_DEBUG, "loader", "{}: {} already names a loaded library; loading through {}",
          candidate.path, by_fd, copy->load_path());
      *file = std::move(copy);
      return (*file)->load_path();
    }
    from = dup + 1;  // `copy` closes this one; try above it
  }
  log(DLRT_LOG_INFO, "loader", "{}: {} already names a loaded library; opening by path",
      candidate.path, by_fd);
  return candidate.path;
}

}  // namespace dlrt::core
