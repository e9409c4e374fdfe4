// plugin.cc: the reference plugin's entry point, plugin_create (options) and plugin_destroy.
//
// Options, given as context options "reference:<key>=<value>" or, for any key not given that
// way, in the environment variable DLRT_REFERENCE_OPTIONS as "key=value;key=value":
//   num_devices   1..64, default 1: how many devices the plugin shows.
//   device_type   default "REF": the type in device names (/device:REF:0); "GPU" makes the
//                 devices mock GPUs for placement tests. Letters, digits and '_'.
//   device_class  "cpu" | "gpu" | "accel", default "cpu": the class placement ranks by.
//   ops           comma list, default every op with a kernel: the only ops op_supported may
//                 accept (for placement tests with known op subsets). "ops=" accepts none.
//                 Names are not checked against the op registry (the plugin has none).
//   memory_mb     1.., default the host's MemTotal: per-device memory limit; an allocation
//                 past it is RESOURCE_EXHAUSTED.
//   collective_fault  <timeout|unavailable>:<n>, default none: the n-th collective call of
//                 the instance fails, for tests of the host's error handling (collectives.cc).
//   capture       0 | 1, default 0: 1 turns on the capture test double (capture.cc); with 0,
//                 capture_begin answers UNIMPLEMENTED and hosts run the work uncaptured.
//   collective_blocking 0 | 1, default 1: 0 makes the NCCL double behave as NCCL's
//                 non-blocking communicators (collectives.cc): a group's work finishes on a
//                 background thread after group_end was called, and group_end waits for it.
//   capture_fault <n>, default none: the n-th capture_end of the instance fails (INTERNAL,
//                 no graph), as an invalidated capture or a failed cudaGraphInstantiate does.
#include <cctype>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "host_info.hpp"
#include "reference.hpp"
#include "reference_kernels.hpp"

namespace dlrt::reference {
namespace {

using plugin::Error;
using plugin::fail;
using plugin::guard;
using plugin::Options;

// The same sources also build the test tree's mock device (tests/mock_device): a plugin named
// "mock", options "mock:<key>=<value>" or DLRT_MOCK_OPTIONS. Placement never picks the
// reference plugin's devices unless the user names them (docs/design.md section 4), so tests of
// multi-device logic need devices that are not the oracle; the mock is that device.
#ifndef DLRT_REFERENCE_PLUGIN_NAME
#define DLRT_REFERENCE_PLUGIN_NAME "reference"
#define DLRT_REFERENCE_PLUGIN_ENV "DLRT_REFERENCE_OPTIONS"
#define DLRT_REFERENCE_DEVICE_TYPE "REF"
#endif
constexpr const char* kName = DLRT_REFERENCE_PLUGIN_NAME;
constexpr const char* kPlatform = DLRT_REFERENCE_PLUGIN_NAME;
constexpr const char* kEnvVar = DLRT_REFERENCE_PLUGIN_ENV;

const std::set<std::string>& known_options() {
  static const std::set<std::string> known = {
      "num_devices", "device_type",   "device_class",       "ops", "memory_mb", "collective_fault",
      "capture",     "capture_fault", "collective_blocking"};
  return known;
}

// Runs `fn`, adding to any error that the value came from the environment variable.
template <typename Fn>
auto in_env(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    fail(e.code(), std::string(e.what()) + " (from " + kEnvVar + ")");
  }
}

// Options from the API first, then from DLRT_REFERENCE_OPTIONS for keys the API did not give.
class MergedOptions {
 public:
  explicit MergedOptions(const dlrt_plugin_create_args* args)
      : api_(args, known_options()), env_(parse_env()) {}

  bool has(const std::string& key) const { return api_.has(key) || env_.has(key); }
  std::string get(const std::string& key, const std::string& fallback) const {
    return api_.has(key) ? api_.get(key) : env_.get(key, fallback);
  }
  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const {
    if (api_.has(key)) return api_.get_int(key, fallback, lo, hi);
    return in_env([&] { return env_.get_int(key, fallback, lo, hi); });
  }

 private:
  // "key=value;key=value" -> Options (which rejects unknown keys). Empty entries are skipped.
  static Options parse_env() {
    const char* text = std::getenv(kEnvVar);
    std::vector<std::pair<std::string, std::string>> kv;
    if (text != nullptr) {
      std::string s = text;
      size_t start = 0;
      while (start <= s.size()) {
        size_t end = s.find(';', start);
        if (end == std::string::npos) end = s.size();
        std::string item = s.substr(start, end - start);
        start = end + 1;
        if (item.find_first_not_of(" \t") == std::string::npos) continue;
        size_t eq = item.find('=');
        if (eq == std::string::npos)
          fail(DLRT_INVALID_ARGUMENT, prefix() + kEnvVar + " entry '" + item +
                                          "' is not key=value (entries are separated by ';')");
        kv.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
      }
    }
    std::vector<dlrt_attr> attrs(kv.size());
    std::vector<const dlrt_attr*> ptrs;
    for (size_t i = 0; i < kv.size(); ++i) {
      attrs[i] = dlrt_attr{};
      attrs[i].struct_size = sizeof(dlrt_attr);
      attrs[i].name = kv[i].first.c_str();
      attrs[i].type = DLRT_ATTR_STRING;
      attrs[i].s = kv[i].second.c_str();
      ptrs.push_back(&attrs[i]);
    }
    dlrt_plugin_create_args args{sizeof(dlrt_plugin_create_args), nullptr, ptrs.size(),
                                 ptrs.data()};
    return in_env([&] { return Options(&args, known_options()); });
  }

  static std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
  }

  Options api_;
  Options env_;
};

Config parse_config(const dlrt_plugin_create_args* args) {
  MergedOptions o(args);
  Config c;
  c.num_devices = static_cast<int32_t>(o.get_int("num_devices", 1, 1, 64));

  c.device_type = o.get("device_type", DLRT_REFERENCE_DEVICE_TYPE);
  bool type_ok = !c.device_type.empty();
  for (char ch : c.device_type)
    type_ok = type_ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!type_ok)
    fail(DLRT_INVALID_ARGUMENT, prefix() + "option 'device_type' is '" + c.device_type +
                                    "', expected a non-empty name of letters, digits and '_' "
                                    "(e.g. REF, GPU)");

  c.device_class_name = o.get("device_class", "cpu");
  if (c.device_class_name == "cpu") {
    c.device_class = DLRT_DEVICE_CLASS_CPU;
  } else if (c.device_class_name == "gpu") {
    c.device_class = DLRT_DEVICE_CLASS_GPU;
  } else if (c.device_class_name == "accel") {
    c.device_class = DLRT_DEVICE_CLASS_ACCEL;
  } else {
    fail(DLRT_INVALID_ARGUMENT, prefix() + "option 'device_class' is '" + c.device_class_name +
                                    "', expected one of cpu, gpu, accel");
  }

  if (o.has("ops")) {
    c.ops_restricted = true;
    std::string list = o.get("ops", "");
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      std::string item = list.substr(start, end - start);
      start = end + 1;
      size_t b = item.find_first_not_of(" \t");
      if (b == std::string::npos) continue;
      c.ops.insert(item.substr(b, item.find_last_not_of(" \t") - b + 1));
    }
  }

  // memory_mb: up to 1 PiB, so the byte count never overflows.
  const int64_t mb = o.get_int("memory_mb", 0, 1, int64_t{1} << 30);
  if (mb > 0) {
    c.memory_limit = static_cast<uint64_t>(mb) << 20;
    c.memory_limit_from_option = true;
  } else {
    c.memory_limit = plugin::host::memory_total();
    // No /proc/meminfo (unusual container): no limit rather than a made-up one.
    if (c.memory_limit == 0) c.memory_limit = UINT64_MAX;
  }
  c.capture = o.get_int("capture", 0, 0, 1) == 1;
  c.capture_fault = o.get_int("capture_fault", 0, 1, int64_t{1} << 40);
  c.collective_fault = parse_collective_fault(o.get("collective_fault", ""));
  c.collective_blocking = o.get_int("collective_blocking", 1, 0, 1) == 1;
  return c;
}

}  // namespace

dlrt_status* plugin_create(const dlrt_plugin_create_args* args, dlrt_plugin** out_plugin) {
  if (out_plugin != nullptr) *out_plugin = nullptr;
  return guard([&] {
    plugin::require(out_plugin, "out_plugin");
    const std::string twice = reference::duplicate_kernel();
    if (!twice.empty())
      fail(DLRT_INTERNAL, std::string(kName) + ": two kernel files register op '" + twice + "'");
    // Built in a unique_ptr, so a failure part way (bad option, out of memory) frees it.
    auto p = std::make_unique<dlrt_plugin>();
    p->config = parse_config(args);
    std::string text;
    for (const auto& op : p->config.ops) text += (text.empty() ? "" : ", ") + op;
    p->ops_text = "{" + text + "}";
    build_devices(p.get());
    *out_plugin = p.release();
  });
}

void plugin_destroy(dlrt_plugin* plugin) {
  plugin::guard_void("plugin_destroy", [&] {
    if (plugin == nullptr) return;
    for (auto& d : plugin->devices) release_leftovers(*d);
    delete plugin;
  });
}

}  // namespace dlrt::reference

// The one exported symbol. Phase one of loading: fill the table, touch nothing else.
extern "C" DLRT_PLUGIN_EXPORT dlrt_status* dlrt_plugin_init(const dlrt_host_api* host,
                                                            dlrt_plugin_api* api) {
  namespace r = dlrt::reference;
  dlrt::plugin::g_host = host;
  dlrt::plugin::g_plugin_name = r::kName;
  return dlrt::plugin::guard([&] {
    dlrt::plugin::require(host, "host");
    dlrt::plugin::require(api, "api");
    const dlrt_plugin_api filled = {
        // not static: .capture depends on the host
        .struct_size = sizeof(dlrt_plugin_api),
        .abi_major = DLRT_ABI_MAJOR,
        .abi_minor = DLRT_ABI_MINOR,
        .name = r::kName,
        .platform = r::kPlatform,
        .version = "0.1.0",
        .plugin_create = r::plugin_create,
        .plugin_destroy = r::plugin_destroy,
        .device_count = r::device_count,
        .device_get_desc = r::device_get_desc,
        .device_open = r::device_open,
        .device_close = r::device_close,
        .memory_info = r::memory_info,
        .mem_alloc = r::mem_alloc,
        .mem_free = r::mem_free,
        .memcpy_h2d = r::memcpy_h2d,
        .memcpy_d2h = r::memcpy_d2h,
        .memcpy_d2d = r::memcpy_d2d,
        .memset = r::memset_device,
        .host_alloc_pinned = nullptr,  // device memory is host memory: nothing to pin
        .host_free_pinned = nullptr,
        .stream_create = r::stream_create,
        .stream_destroy = r::stream_destroy,
        .stream_synchronize = r::stream_synchronize,
        .event_create = r::event_create,
        .event_destroy = r::event_destroy,
        .event_record = r::event_record,
        .stream_wait_event = r::stream_wait_event,
        .event_synchronize = r::event_synchronize,
        .op_supported = r::op_supported,
        .kernel_create = r::kernel_create,
        .kernel_run = r::kernel_run,
        .kernel_destroy = r::kernel_destroy,
        .capture = r::capture_table(host),     // a test double, on with option capture=1
        .collectives = r::collective_table(),  // an in-process NCCL test double
    };
    dlrt_plugin_api_fill(api, &filled);
  });
}
