// plugin_loader.cc: see plugin_loader.hpp.
#include "plugin_loader.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <cstring>
#include <cstdio>
#include <optional>
#include <fstream>
#include <exception>
#include <iterator>
#include <vector>

#include "echo_text.hpp"
#include "host_api.hpp"
#include "log.hpp"
#include "plugin_call.hpp"
#include "plugin_isolation.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

// ---- the ABI checks ---------------------------------------------------------------------
struct Entry {
  const char* name;
  size_t offset;
};
#define DLRT_ENTRY(field) \
  Entry { #field, offsetof(dlrt_plugin_api, field) }
// The slots every plugin of ABI 1.x fills (pointers: the strings and the functions).
constexpr Entry kRequired[] = {
    DLRT_ENTRY(name),
    DLRT_ENTRY(platform),
    DLRT_ENTRY(plugin_create),
    DLRT_ENTRY(plugin_destroy),
};
// The device entries: required too, except that a plugin without devices that offers
// collectives may leave all of them NULL together (plugin.h, ABI 1.2).
constexpr Entry kDeviceEntries[] = {
    DLRT_ENTRY(device_count),
    DLRT_ENTRY(device_get_desc),
    DLRT_ENTRY(device_open),
    DLRT_ENTRY(device_close),
    DLRT_ENTRY(memory_info),
    DLRT_ENTRY(mem_alloc),
    DLRT_ENTRY(mem_free),
    DLRT_ENTRY(memcpy_h2d),
    DLRT_ENTRY(memcpy_d2h),
    DLRT_ENTRY(memcpy_d2d),
    DLRT_ENTRY(memset),
    DLRT_ENTRY(stream_create),
    DLRT_ENTRY(stream_destroy),
    DLRT_ENTRY(stream_synchronize),
    DLRT_ENTRY(event_create),
    DLRT_ENTRY(event_destroy),
    DLRT_ENTRY(event_record),
    DLRT_ENTRY(stream_wait_event),
    DLRT_ENTRY(event_synchronize),
    DLRT_ENTRY(op_supported),
    DLRT_ENTRY(kernel_create),
    DLRT_ENTRY(kernel_run),
    DLRT_ENTRY(kernel_destroy),
};
#undef DLRT_ENTRY

// Both function and data pointers are pointer-sized here (POSIX guarantees dlsym's round
// trip), so one check serves both kinds of slot.
bool slot_is_set(const dlrt_plugin_api& api, size_t offset) {
  void* p = nullptr;
  std::memcpy(&p, reinterpret_cast<const unsigned char*>(&api) + offset, sizeof p);
  return p != nullptr;
}

// A plugin that owns no devices: every device entry NULL, and a collectives table to offer.
// `api` is already zeroed past the plugin's struct_size, so absent slots read as NULL.
bool is_deviceless_transport(const dlrt_plugin_api& api) {
  for (const Entry& e : kDeviceEntries)
    if (slot_is_set(api, e.offset)) return false;
  return api.collectives != nullptr;
}

std::string abi_text(uint32_t major, uint32_t minor) { return fmt::format("{}.{}", major, minor); }

std::string accepted_text() {
  return fmt::format("this libdlrt speaks {} and accepts {} and newer {}.x",
                     abi_text(DLRT_ABI_MAJOR, DLRT_ABI_MINOR),
                     abi_text(DLRT_ABI_MAJOR, DLRT_ABI_MINOR_FLOOR), DLRT_ABI_MAJOR);
}

// ---- copying a device description ---------------------------------------------------------
std::string str(const char* s) { return s != nullptr ? s : ""; }

std::string type_from_class(int32_t device_class) {
  switch (device_class) {
    case DLRT_DEVICE_CLASS_CPU:
      return "CPU";
    case DLRT_DEVICE_CLASS_GPU:
      return "GPU";
    case DLRT_DEVICE_CLASS_ACCEL:
      return "ACCEL";
    default:
      return "DEVICE";
  }
}

std::unique_ptr<OwnedAttr> copy_attr(const dlrt_attr* in) {
  // Read at most the attribute's own struct_size; later fields of an older writer are absent.
  dlrt_attr a{};
  size_t n = in->struct_size < sizeof a ? in->struct_size : sizeof a;
  std::memcpy(&a, in, n);
  auto out = std::make_unique<OwnedAttr>();
  out->name = str(a.name);
  out->attr.struct_size = sizeof(dlrt_attr);
  out->attr.type = a.type;
  out->attr.i = a.i;
  out->attr.f = a.f;
  if (a.type == DLRT_ATTR_STRING) out->s = str(a.s);
  if (a.type == DLRT_ATTR_INTS && a.ints != nullptr) out->ints.assign(a.ints, a.ints + a.count);
  if (a.type == DLRT_ATTR_FLOATS && a.floats != nullptr)
    out->floats.assign(a.floats, a.floats + a.count);
  // Point the view at our own copies.
  out->attr.name = out->name.c_str();
  out->attr.s = a.type == DLRT_ATTR_STRING ? out->s.c_str() : nullptr;
  out->attr.ints = out->ints.empty() ? nullptr : out->ints.data();
  out->attr.floats = out->floats.empty() ? nullptr : out->floats.data();
  out->attr.count = a.type == DLRT_ATTR_INTS     ? out->ints.size()
                    : a.type == DLRT_ATTR_FLOATS ? out->floats.size()
                                                 : 0;
  return out;
}

DeviceDesc copy_desc(const dlrt_device_desc& d, int32_t ordinal) {
  DeviceDesc out;
  out.device_class = d.device_class;
  out.ordinal = ordinal;
  for (char c : str(d.type))
    out.type += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (out.type.empty()) out.type = type_from_class(d.device_class);
  out.name = str(d.name);
  out.vendor = str(d.vendor);
  out.pci_bus_id = str(d.pci_bus_id);
  out.uuid = str(d.uuid);
  out.compute_capability_major = d.compute_capability_major;
  out.compute_capability_minor = d.compute_capability_minor;
  out.core_count = d.core_count;
  out.memory_total = d.memory_total;
  out.driver_version = str(d.driver_version);
  out.library_versions = str(d.library_versions);
  out.peak_gflops = d.peak_gflops;
  out.memory_bandwidth_gbps = d.memory_bandwidth_gbps;
  out.launch_overhead_us = d.launch_overhead_us;
  if (d.attrs != nullptr) {
    for (size_t i = 0; i < d.num_attrs; ++i) {
      if (d.attrs[i] == nullptr) continue;
      out.attrs.push_back(copy_attr(d.attrs[i]));
      out.attr_ptrs.push_back(&out.attrs.back()->attr);
    }
  }
  return out;
}

// ---- the phases -------------------------------------------------------------------------
class Loading {
 public:
  // load_path: what dlopen gets (the checked descriptor's /proc/self/fd/N; p.path otherwise).
  Loading(Plugin& p, boost::dll::shared_library& library, dlrt_plugin_api& api,
          std::string load_path)
      : p_(p), library_(library), api_(api), load_path_(std::move(load_path)) {}

  // Each phase returns false when the plugin stopped there (the record says why).
  // Each phase starts with an info line "loading <path>: <phase>", so that when a plugin
  // hangs or kills the process inside one, the last line logged names the plugin and the
  // phase (the loader cannot say so afterwards: it is not running any more).
  bool open() {
    p_.phase = DLRT_PHASE_OPEN;
    log(DLRT_LOG_INFO, "loader", "loading {}: dlopen", p_.path);
    try {
      library_.load(load_path_,
                    boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_UNAVAILABLE, fmt::format("cannot open: {}", e.what()));
    }
    if (!library_.has(DLRT_PLUGIN_INIT_SYMBOL))
      return stop(DLRT_PLUGIN_FAILED, DLRT_NOT_FOUND,
                  fmt::format("{} does not export {}; is it a dlrt plugin?", p_.path,
                              DLRT_PLUGIN_INIT_SYMBOL));
    return true;
  }

  bool init(const std::map<std::string, std::string>& names_taken) {
    p_.phase = DLRT_PHASE_ABI;
    log(DLRT_LOG_INFO, "loader", "loading {}: {}", p_.path, DLRT_PLUGIN_INIT_SYMBOL);
    auto init_fn =
        library_.get<dlrt_status*(const dlrt_host_api*, dlrt_plugin_api*)>(DLRT_PLUGIN_INIT_SYMBOL);

    // The plugin writes into a zeroed table with room to spare: a well-behaved plugin writes at
    // most sizeof(dlrt_plugin_api) bytes (dlrt_plugin_api_fill), but a newer one that copied
    // its whole, larger table by mistake then scribbles on padding, not on our stack.
    struct alignas(dlrt_plugin_api) Padded {
      unsigned char bytes[sizeof(dlrt_plugin_api) + 1024];
    } table{};
    auto* api = reinterpret_cast<dlrt_plugin_api*>(&table);
    api->struct_size = sizeof(dlrt_plugin_api);

    StatusValue s;
    try {
      s = take_status(init_fn(host_api(), api));
    } catch (const std::exception& e) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_INTERNAL,
                  fmt::format("plugin init threw a C++ exception ({}); plugins must return a "
                              "status, never throw",
                              e.what()));
    } catch (...) {
      return stop(DLRT_PLUGIN_FAILED, DLRT_INTERNAL,
                  "plugin init threw an exception; plugins must return a status, never throw");
    }

    // Keep what the plugin declared, as far as its struct_size covers it.
    size_t size = api->struct_size;
    constexpr size_t kVersionEnd = offsetof(dlrt_plugin_api, abi_minor) + sizeof(uint32_t);
    if (size >= kVersionEnd) {
      p_.abi_major = api->abi_major;
      p_.abi_minor = api->abi_minor;
    }
    constexpr size_t kNamesEnd = offsetof(dlrt_plugin_api, version) + sizeof(const char*);
    if (size >= kNamesEnd) {
      p_.name = str(api->name);
      p_.platform = str(api->platform);
      p_.version = str(api->version);
    }
    if (!s.ok()) return stop(DLRT_PLUGIN_FAILED, s.code, "dlrt_plugin_init failed: " + s.message);

    if (size < kVersionEnd)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} filled a table of {} bytes, too small to hold its ABI "
                              "version (needs at least {}); {}",
                              p_.path, size, kVersionEnd, accepted_text()));
    if (p_.abi_major != DLRT_ABI_MAJOR)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} was built for plugin ABI {}; {}", p_.path,
                              abi_text(p_.abi_major, p_.abi_minor), accepted_text()));
    // Compared as signed variables: with a floor of 0 a direct unsigned test is always false.
    const int64_t minor = p_.abi_minor, floor = DLRT_ABI_MINOR_FLOOR;
    if (minor < floor)
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} was built for plugin ABI {}, older than the oldest "
                              "this libdlrt accepts; {}; rebuild the plugin",
                              p_.path, abi_text(p_.abi_major, p_.abi_minor), accepted_text()));

    // Copy what the host knows about, then zero every field past the plugin's struct_size:
    // an older plugin never wrote them, and whatever lies there must read as absent (NULL).
    // A newer plugin's larger size is clamped: we only know our own fields.
    if (size > sizeof(dlrt_plugin_api)) size = sizeof(dlrt_plugin_api);
    std::memset(&api_, 0, sizeof api_);
    std::memcpy(&api_, api, size);
    api_.struct_size = size;

    const bool deviceless = is_deviceless_transport(api_);
    std::vector<Entry> required(std::begin(kRequired), std::end(kRequired));
    if (!deviceless)
      required.insert(required.end(), std::begin(kDeviceEntries), std::end(kDeviceEntries));
    for (const Entry& e : required) {
      if (e.offset + sizeof(void*) > size)
        return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                    fmt::format("plugin {} (ABI {}) has a table of {} bytes that ends before "
                                "the required entry '{}'",
                                p_.path, abi_text(p_.abi_major, p_.abi_minor), size, e.name));
      if (!slot_is_set(api_, e.offset))
        return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                    fmt::format("plugin {} leaves the required entry '{}' NULL", p_.path, e.name));
    }
    if (p_.name.empty())
      return stop(DLRT_PLUGIN_REFUSED, DLRT_FAILED_PRECONDITION,
                  fmt::format("plugin {} has an empty name; every plugin needs a short unique "
                              "name such as \"cpu\"",
                              p_.path));
    auto taken = names_taken.find(p_.name);
    if (taken != names_taken.end())
      return stop(DLRT_PLUGIN_REFUSED, DLRT_ALREADY_EXISTS,
                  fmt::format("a plugin named '{}' was already loaded from {}; refusing a "
                              "second one from {}",
                              p_.name, taken->second, p_.path));
    return true;
  }

  bool create(const PluginOptions& all_options, dlrt_plugin** out_instance) {
    p_.phase = DLRT_PHASE_CREATE;
    log(DLRT_LOG_INFO, "loader", "loading {}: plugin_create", p_.path);
    // Options reach the plugin as string attributes; `options` owns what they point to.
    static const std::vector<std::pair<std::string, std::string>> kNone;
    auto found = all_options.find(p_.name);
    const auto& options = found != all_options.end() ? found->second : kNone;
    std::vector<dlrt_attr> attrs(options.size());
    std::vector<const dlrt_attr*> ptrs;
    for (size_t i = 0; i < options.size(); ++i) {
      attrs[i].struct_size = sizeof(dlrt_attr);
      attrs[i].name = options[i].first.c_str();
      attrs[i].type = DLRT_ATTR_STRING;
      attrs[i].s = options[i].second.c_str();
      ptrs.push_back(&attrs[i]);
    }
    dlrt_plugin_create_args args{};
    args.struct_size = sizeof args;
    args.host = host_api();
    args.num_options = ptrs.size();
    args.options = ptrs.empty() ? nullptr : ptrs.data();
    *out_instance = nullptr;
    StatusValue s =
        plugin_status("plugin_create", [&] { return api_.plugin_create(&args, out_instance); });
    if (!s.ok()) {
      *out_instance = nullptr;  // a failed create released what it built (plugin.h)
      return stop(DLRT_PLUGIN_FAILED, s.code, "plugin_create failed: " + s.message);
    }
    return true;
  }

  // Never stops the plugin: an error here leaves it LOADED, with fewer (or no) devices.
  void devices(dlrt_plugin* instance) {
    p_.phase = DLRT_PHASE_DEVICES;
    if (api_.device_count == nullptr) {  // a transport without devices (plugin.h, ABI 1.2)
      p_.device_count = 0;
      p_.phase = DLRT_PHASE_READY;
      return;
    }
    log(DLRT_LOG_INFO, "loader", "loading {}: devices", p_.path);
    int32_t count = 0;
    StatusValue s =
        plugin_status("device_count", [&] { return api_.device_count(instance, &count); });
    if (s.ok() && (count < 0 || count > 65536))
      s = {DLRT_INTERNAL, fmt::format("device_count returned {}, expected 0..65536", count)};
    if (!s.ok()) {
      p_.code = s.code;
      p_.error = "no devices: " + s.message;
      p_.device_count = 0;
      log(DLRT_LOG_INFO, "loader", "plugin {} ({}) has no devices: {} ({})", p_.name, p_.path,
          s.message, dlrt_code_name(s.code));
      return;
    }
    p_.device_count = count;
    for (int32_t ordinal = 0; ordinal < count; ++ordinal) {
      dlrt_device_desc desc{};
      desc.struct_size = sizeof desc;
      s = plugin_status("device_get_desc",
                        [&] { return api_.device_get_desc(instance, ordinal, &desc); });
      if (!s.ok()) {
        // Leave this device out but keep the others; the record says which one and why.
        p_.code = s.code;
        p_.error += fmt::format("{}device {} left out: device_get_desc failed: {}",
                                p_.error.empty() ? "" : "; ", ordinal, s.message);
        log(DLRT_LOG_WARNING, "loader", "plugin {}: device {} left out: {}", p_.name, ordinal,
            s.message);
        continue;
      }
      // A plugin that reports a smaller struct_size never wrote the fields past it.
      if (desc.struct_size >= sizeof(size_t) && desc.struct_size < sizeof desc)
        std::memset(reinterpret_cast<unsigned char*>(&desc) + desc.struct_size, 0,
                    sizeof desc - desc.struct_size);
      p_.devices.push_back(copy_desc(desc, ordinal));
    }
    p_.phase = p_.error.empty() ? DLRT_PHASE_READY : DLRT_PHASE_DEVICES;
  }

 private:
  bool stop(dlrt_plugin_state state, dlrt_code code, std::string message) {
    p_.state = state;
    p_.code = code;
    p_.error = std::move(message);
    return false;
  }

  Plugin& p_;
  boost::dll::shared_library& library_;
  dlrt_plugin_api& api_;
  std::string load_path_;
};

const char* state_name(dlrt_plugin_state s) {
  switch (s) {
    case DLRT_PLUGIN_LOADED:
      return "loaded";
    case DLRT_PLUGIN_REFUSED:
      return "refused";
    case DLRT_PLUGIN_FAILED:
      return "failed";
  }
  return "?";
}

const char* phase_name(dlrt_plugin_phase p) {
  static const char* kNames[] = {"search", "open", "abi", "create", "devices", "ready"};
  return p >= 0 && p <= DLRT_PHASE_READY ? kNames[p] : "?";
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

PluginOptions parse_plugin_options(std::string_view text) {
  PluginOptions out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    size_t eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon || colon == 0 ||
        eq == colon + 1)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("bad plugin option '{}' in '{}': expected <plugin>:<key>=<value> items "
                       "separated by ';', e.g. cpu:threads=2;reference:num_devices=3",
                       truncated_for_message(item), truncated_for_message(text)));
    std::string plugin = trim(item.substr(0, colon));
    std::string key = trim(item.substr(colon + 1, eq - colon - 1));
    std::string value = trim(item.substr(eq + 1));
    // Checked after trimming: " cpu : =2" has a colon and an '=' but no key (found by the
    // plugin_options fuzz target).
    if (plugin.empty() || key.empty())
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("bad plugin option '{}' in '{}': the {} is empty; expected "
                       "<plugin>:<key>=<value>, e.g. cpu:threads=2",
                       truncated_for_message(item), truncated_for_message(text),
                       plugin.empty() ? "plugin name" : "key"));
    auto& list = out[plugin];
    for (const auto& [k, v] : list)
      if (k == key)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("plugin option '{}:{}' is given twice in '{}'",
                         truncated_for_message(plugin), truncated_for_message(key),
                         truncated_for_message(text)));
    list.emplace_back(key, value);
  }
  return out;
}

bool keep_plugins_loaded() {
  const char* v = ::secure_getenv("DLRT_KEEP_PLUGINS_LOADED");
  if (v != nullptr && (std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0)) return v[0] == '1';
#if defined(__SANITIZE_ADDRESS__)
  return true;  // an ASan build (GCC's define) keeps them: see plugin_loader.hpp
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

namespace {

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

}  // namespace

std::unique_ptr<Plugin> load_plugin(const PluginCandidate& candidate, const PluginOptions& options,
                                    const std::map<std::string, std::string>& names_taken,
                                    double isolate_timeout_s) {
  auto p = std::make_unique<Plugin>();
  p->path = candidate.path;
  p->origin = candidate.origin;
  IsolatedCheck isolated;  // OK unless the child-process check ran and failed
  if (candidate.code == DLRT_OK && isolate_timeout_s > 0) {
    log(DLRT_LOG_INFO, "loader", "loading {}: load and init in a child process first",
        candidate.path);
    isolated = check_plugin_in_child(candidate.path, isolate_timeout_s);
  }
  if (candidate.code != DLRT_OK) {  // refused by the search itself
    p->state = candidate.state;
    p->code = candidate.code;
    p->error = candidate.error;
    p->phase = DLRT_PHASE_SEARCH;
  } else if (isolated.code != DLRT_OK) {  // crashed, exited or hung in the child
    p->state = DLRT_PLUGIN_FAILED;
    p->code = isolated.code;
    p->error = isolated.message;
    p->phase = DLRT_PHASE_ABI;
  } else {
    const std::string load_path = load_path_for(candidate, &p->file_);
    Loading loading(*p, p->library_, p->api_, load_path);
    dlrt_plugin* instance = nullptr;
    if (loading.open() && loading.init(names_taken) && loading.create(options, &instance)) {
      p->instance_ = instance;
      p->created_ = true;
      p->loaded_ = true;
      loading.devices(instance);
    }
  }

  if (p->state == DLRT_PLUGIN_LOADED) {
    log(DLRT_LOG_INFO, "loader", "loaded plugin {} {} ({}, ABI {}.{}) from {}: {} device(s)",
        p->name, p->version, p->platform, p->abi_major, p->abi_minor, p->path, p->devices.size());
  } else {
    log(DLRT_LOG_WARNING, "loader", "plugin {} {} in phase {} ({}): {}", p->path,
        state_name(p->state), phase_name(p->phase), dlrt_code_name(p->code), p->error);
    // Nothing of a refused or failed plugin is kept alive but its record.
    unload_library(p->library_, p->path);
  }
  return p;
}

dlrt_device* Plugin::open_device(int32_t ordinal) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!usable()) fail(DLRT_FAILED_PRECONDITION, fmt::format("plugin {} is not loaded", path));
  auto it = open_devices_.find(ordinal);
  if (it != open_devices_.end()) return it->second;
  if (api_.device_open == nullptr)
    fail(DLRT_FAILED_PRECONDITION,
         fmt::format("plugin {} owns no devices (it offers collectives only); device {} cannot "
                     "be opened",
                     name, ordinal));
  dlrt_device* device = nullptr;
  StatusValue s =
      plugin_status("device_open", [&] { return api_.device_open(instance_, ordinal, &device); });
  if (!s.ok())
    fail(s.code, fmt::format("plugin {} could not open device {}: {}", name, ordinal, s.message));
  open_devices_[ordinal] = device;
  return device;
}

Plugin::~Plugin() {
  // Devices first, then the instance, then the code they all live in.
  for (auto& [ordinal, device] : open_devices_) {
    try {
      api_.device_close(device);
    } catch (...) {
      log(DLRT_LOG_ERROR, "loader", "plugin {}: device_close({}) threw; ignoring", name, ordinal);
    }
  }
  open_devices_.clear();
  if (created_) {
    try {
      api_.plugin_destroy(instance_);
    } catch (...) {
      log(DLRT_LOG_ERROR, "loader", "plugin {}: plugin_destroy threw; ignoring", name);
    }
  }
  unload_library(library_, path);
}

}  // namespace dlrt::core
