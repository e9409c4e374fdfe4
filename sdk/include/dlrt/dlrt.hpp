// dlrt/dlrt.hpp: the C++ layer over the host C API (dlrt.h). Header-only.
//
// What it is: a thin wrapper in the style of oneDNN's dnnl.hpp and ONNX Runtime's
// onnxruntime_cxx_api.h.
//   - Owners (`Context`, and later tensors, graphs, executables) are move-only and hold one
//     C handle in a std::unique_ptr whose deleter calls the matching dlrt_*_destroy.
//   - Info types (`PluginInfo`, `DeviceInfo`, `Setting`, `DeviceSpec`) are plain values: their
//     strings and numbers are copied out of the C structs, so they stay valid after the
//     context is gone.
//   - Each method makes one C call and passes its status to `check`, which throws
//     `dlrt::Error` (code + message) and frees the status. Nothing else is cached or added:
//     the C library is the single source of truth.
// What it is not: a second API. Everything here is reachable from C; `get()` hands out the
// C handle for anything the C++ layer does not cover yet.
//
// Extending it (tensors, graphs, executables in later issues): add an overload of
// `detail::Deleter::operator()` for the new C handle type and a move-only class holding
// `detail::Owner<dlrt_x>`, with one checked C call per method.
#ifndef DLRT_DLRT_HPP_
#define DLRT_DLRT_HPP_

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlrt/dlrt.h"

namespace dlrt {

// ------------------------------------------------------------------------------------------
// Errors

// A failed dlrt call: the status code and the library's message, e.g.
// code() == DLRT_NOT_FOUND, message() == "no device matches 'GPU:3'; devices: /device:CPU:0".
// what() is "NOT_FOUND: <message>".
class Error : public std::exception {
 public:
  Error(dlrt_code code, std::string message)
      : code_(code),
        message_(std::move(message)),
        what_(std::string(dlrt_code_name(code)) + ": " + message_) {}

  dlrt_code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  dlrt_code code_;
  std::string message_;
  std::string what_;
};

namespace detail {

// Frees C handles. One overload per owned type; std::unique_ptr picks the right one.
struct Deleter {
  void operator()(dlrt_status* s) const noexcept { dlrt_status_free(s); }
  void operator()(dlrt_context* c) const noexcept { dlrt_context_destroy(c); }
  void operator()(dlrt_tensor* t) const noexcept { dlrt_tensor_destroy(t); }
  void operator()(dlrt_graph* g) const noexcept { dlrt_graph_destroy(g); }
  void operator()(dlrt_executable* e) const noexcept { dlrt_executable_destroy(e); }
  void operator()(dlrt_safetensors* s) const noexcept { dlrt_safetensors_close(s); }
  void operator()(dlrt_strategy* s) const noexcept { dlrt_strategy_destroy(s); }
};

template <typename T>
using Owner = std::unique_ptr<T, Deleter>;

// "" for a NULL C string, so copying a field never crashes on an absent value.
inline std::string str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

}  // namespace detail

// Throws `Error` when `status` is not OK, and frees it either way. The status is owned
// before anything that can throw (copying the message), so it never leaks.
inline void check(dlrt_status* status) {
  if (status == nullptr) return;
  detail::Owner<dlrt_status> owned(status);
  throw Error(dlrt_status_code(owned.get()), detail::str(dlrt_status_message(owned.get())));
}

// ------------------------------------------------------------------------------------------
// Library version

struct AbiVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t floor = 0;  // the oldest minor of `major` this library accepts from a plugin
};

// libdlrt's own version, e.g. "0.1.0".
inline std::string version() { return detail::str(dlrt_version()); }

// The plugin ABI libdlrt speaks (DLRT_ABI_MAJOR/MINOR/MINOR_FLOOR as it was built).
inline AbiVersion abi_version() {
  AbiVersion v;
  dlrt_abi_version(&v.major, &v.minor, &v.floor);
  return v;
}

// ------------------------------------------------------------------------------------------
// Names of the C enums, as dlprobe prints them. Out-of-range values (a newer library or
// plugin) give "UNKNOWN(<n>)" rather than failing.

inline std::string unknown_name(int32_t value) {
  return "UNKNOWN(" + std::to_string(value) + ")";
}

inline std::string code_name(dlrt_code code) { return detail::str(dlrt_code_name(code)); }

inline std::string device_class_name(dlrt_device_class c) {
  switch (c) {
    case DLRT_DEVICE_CLASS_UNKNOWN: return "UNKNOWN";
    case DLRT_DEVICE_CLASS_CPU: return "CPU";
    case DLRT_DEVICE_CLASS_GPU: return "GPU";
    case DLRT_DEVICE_CLASS_ACCEL: return "ACCEL";
  }
  return unknown_name(c);
}

inline std::string plugin_state_name(dlrt_plugin_state s) {
  switch (s) {
    case DLRT_PLUGIN_LOADED: return "loaded";
    case DLRT_PLUGIN_REFUSED: return "refused";
    case DLRT_PLUGIN_FAILED: return "failed";
  }
  return unknown_name(s);
}

inline std::string plugin_phase_name(dlrt_plugin_phase p) {
  switch (p) {
    case DLRT_PHASE_SEARCH: return "search";
    case DLRT_PHASE_OPEN: return "open";
    case DLRT_PHASE_ABI: return "abi";
    case DLRT_PHASE_CREATE: return "create";
    case DLRT_PHASE_DEVICES: return "devices";
    case DLRT_PHASE_READY: return "ready";
  }
  return unknown_name(p);
}

inline std::string setting_source_name(dlrt_setting_source s) {
  switch (s) {
    case DLRT_SOURCE_DEFAULT: return "default";
    case DLRT_SOURCE_ENVIRONMENT: return "environment";
    case DLRT_SOURCE_API: return "api";
  }
  return unknown_name(s);
}

inline std::string dtype_name(dlrt_dtype t) {
  if (const char* name = dlrt_dtype_name(t)) return name;
  if (t == DLRT_DTYPE_INVALID) return "invalid";
  return unknown_name(t);
}

// ------------------------------------------------------------------------------------------
// Device specs: TensorFlow's "/job:localhost/replica:0/task:0/device:GPU:0", every part
// optional ("GPU:0", "/device:CPU:0", "cpu", ...). Parsing and formatting are libdlrt's.

struct DeviceSpec {
  std::string job;    // "" when absent
  int32_t replica = -1;
  int32_t task = -1;
  std::string type;   // "CPU", "GPU", ... (upper-case); "" when absent
  int32_t index = -1; // -1: any device of that type

  // Throws Error(DLRT_INVALID_ARGUMENT) naming the malformed part.
  static DeviceSpec parse(const std::string& text) {
    dlrt_device_spec c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_spec);
    check(dlrt_device_spec_parse(text.c_str(), &c));
    return from_c(c);
  }

  static DeviceSpec from_c(const dlrt_device_spec& c) {
    DeviceSpec s;
    s.job = std::string(c.job, strnlen_(c.job, sizeof c.job));
    s.replica = c.replica;
    s.task = c.task;
    s.type = std::string(c.type, strnlen_(c.type, sizeof c.type));
    s.index = c.index;
    return s;
  }

  // The C struct; strings longer than its fixed buffers are truncated (libdlrt's parser
  // never produces such a spec; a hand-built one should keep job < 64, type < 32 chars).
  dlrt_device_spec to_c() const {
    dlrt_device_spec c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_spec);
    job.copy(c.job, sizeof c.job - 1);
    c.replica = replica;
    c.task = task;
    type.copy(c.type, sizeof c.type - 1);
    c.index = index;
    return c;
  }

  // The canonical full form, e.g. "/job:localhost/replica:0/task:0/device:GPU:0".
  std::string to_string() const {
    const dlrt_device_spec c = to_c();
    std::string buf(128, '\0');
    size_t need = dlrt_device_spec_format(&c, &buf[0], buf.size());
    if (need >= buf.size()) {  // the library says how much it needs: ask once more
      buf.assign(need + 1, '\0');
      need = dlrt_device_spec_format(&c, &buf[0], buf.size());
    }
    buf.resize(need < buf.size() ? need : buf.size() - 1);
    return buf;
  }

 private:
  static size_t strnlen_(const char* s, size_t max) {
    size_t n = 0;
    while (n < max && s[n] != '\0') ++n;
    return n;
  }
};

// ------------------------------------------------------------------------------------------
// Info values, copied out of the C structs.

// One typed attribute (device properties; later op attributes). `type` says which value
// fields mean something, as in dlrt_attr.
struct Attr {
  std::string name;
  dlrt_attr_type type = DLRT_ATTR_NONE;
  int64_t i = 0;            // INT, BOOL (0/1), DTYPE (a dlrt_dtype)
  double f = 0.0;           // FLOAT
  std::string s;            // STRING
  std::vector<int64_t> ints;   // INTS
  std::vector<double> floats;  // FLOATS

  static Attr from_c(const dlrt_attr& c) {
    Attr a;
    a.name = detail::str(c.name);
    a.type = static_cast<dlrt_attr_type>(c.type);
    a.i = c.i;
    a.f = c.f;
    a.s = detail::str(c.s);
    if (c.type == DLRT_ATTR_INTS && c.ints != nullptr) a.ints.assign(c.ints, c.ints + c.count);
    if (c.type == DLRT_ATTR_FLOATS && c.floats != nullptr)
      a.floats.assign(c.floats, c.floats + c.count);
    return a;
  }
};

// What the context knows about one plugin file it found, loaded or not.
struct PluginInfo {
  std::string path;      // absolute canonical path
  std::string name;      // "" if the plugin never said
  std::string platform;  // "" if the plugin never said
  std::string version;
  dlrt_plugin_state state = DLRT_PLUGIN_FAILED;
  dlrt_plugin_phase phase = DLRT_PHASE_SEARCH;  // reached; where it stopped if not loaded
  uint32_t abi_major = 0;  // declared by the plugin; 0 if unknown
  uint32_t abi_minor = 0;
  dlrt_code error_code = DLRT_OK;  // why it failed, or why a loaded plugin has no devices
  int32_t device_count = 0;        // before visibility filtering
  std::string error;               // "" if none

  bool loaded() const { return state == DLRT_PLUGIN_LOADED; }

  static PluginInfo from_c(const dlrt_plugin_info& c) {
    PluginInfo p;
    p.path = detail::str(c.path);
    p.name = detail::str(c.name);
    p.platform = detail::str(c.platform);
    p.version = detail::str(c.version);
    p.state = static_cast<dlrt_plugin_state>(c.state);
    p.phase = static_cast<dlrt_plugin_phase>(c.phase);
    p.abi_major = c.abi_major;
    p.abi_minor = c.abi_minor;
    p.error_code = static_cast<dlrt_code>(c.error_code);
    p.device_count = c.device_count;
    p.error = detail::str(c.error);
    return p;
  }
};

// A device's memory arena (dlrt_memory_stats): bytes asked for by live allocations, their
// peak, bytes held from the plugin, the limit (0 = none), and mem_alloc calls so far.
struct MemoryStats {
  uint64_t in_use = 0;
  uint64_t peak = 0;
  uint64_t reserved = 0;
  uint64_t limit = 0;
  uint64_t num_allocs = 0;
};

// One visible (possibly logical) device, with its plugin's description.
struct DeviceInfo {
  std::string name;       // "/device:GPU:0"
  std::string full_name;  // "/job:localhost/replica:0/task:0/device:GPU:0"
  std::string type;       // "GPU"
  int32_t index = 0;      // N in TYPE:N
  dlrt_device_class device_class = DLRT_DEVICE_CLASS_UNKNOWN;
  std::string platform;   // "cuda"
  std::string plugin;     // plugin name
  int32_t plugin_ordinal = 0;
  int32_t logical_index = 0;
  int32_t logical_count = 1;
  uint64_t memory_total = 0;  // bytes of the physical device
  uint64_t memory_limit = 0;  // this logical device's limit; 0 = none
  std::string model;
  std::string vendor;
  std::string pci_bus_id;
  std::string uuid;
  int32_t compute_capability_major = 0;
  int32_t compute_capability_minor = 0;
  int32_t core_count = 0;
  std::string driver_version;
  std::string library_versions;
  double peak_gflops = 0.0;
  double memory_bandwidth_gbps = 0.0;
  double launch_overhead_us = 0.0;
  std::vector<Attr> attrs;

  // The attribute called `attr_name`, if the plugin reported one.
  std::optional<Attr> attr(const std::string& attr_name) const {
    for (const Attr& a : attrs)
      if (a.name == attr_name) return a;
    return std::nullopt;
  }

  static DeviceInfo from_c(const dlrt_device_info& c) {
    DeviceInfo d;
    d.name = detail::str(c.name);
    d.full_name = detail::str(c.full_name);
    d.type = detail::str(c.type);
    d.index = c.index;
    d.device_class = static_cast<dlrt_device_class>(c.device_class);
    d.platform = detail::str(c.platform);
    d.plugin = detail::str(c.plugin);
    d.plugin_ordinal = c.plugin_ordinal;
    d.logical_index = c.logical_index;
    d.logical_count = c.logical_count;
    d.memory_total = c.memory_total;
    d.memory_limit = c.memory_limit;
    d.model = detail::str(c.model);
    d.vendor = detail::str(c.vendor);
    d.pci_bus_id = detail::str(c.pci_bus_id);
    d.uuid = detail::str(c.uuid);
    d.compute_capability_major = c.compute_capability_major;
    d.compute_capability_minor = c.compute_capability_minor;
    d.core_count = c.core_count;
    d.driver_version = detail::str(c.driver_version);
    d.library_versions = detail::str(c.library_versions);
    d.peak_gflops = c.peak_gflops;
    d.memory_bandwidth_gbps = c.memory_bandwidth_gbps;
    d.launch_overhead_us = c.launch_overhead_us;
    if (c.attrs != nullptr) {
      d.attrs.reserve(c.num_attrs);
      for (size_t k = 0; k < c.num_attrs; ++k)
        if (c.attrs[k] != nullptr) d.attrs.push_back(Attr::from_c(*c.attrs[k]));
    }
    return d;
  }
};

// One configuration setting and where its effective value came from (dlprobe --env).
struct Setting {
  std::string name;   // "DLRT_LOG_LEVEL"
  std::string value;  // effective value as text; "" when unset
  dlrt_setting_source source = DLRT_SOURCE_DEFAULT;
  std::string help;

  static Setting from_c(const dlrt_setting& c) {
    Setting s;
    s.name = detail::str(c.name);
    s.value = detail::str(c.value);
    s.source = static_cast<dlrt_setting_source>(c.source);
    s.help = detail::str(c.help);
    return s;
  }
};

// ------------------------------------------------------------------------------------------
// Context options: a builder that owns its strings, turned into dlrt_context_options (which
// only points at them) when a Context is made. Unset fields keep the C defaults, which read
// the environment (DLRT_VISIBLE_DEVICES, DLRT_LOG_LEVEL, ...).

class ContextOptions {
 public:
  struct LogicalDevices {
    std::string physical_device;         // "CPU:0"
    int32_t count = 1;
    std::vector<uint64_t> memory_limits; // empty, or `count` limits in bytes (0 = none)
  };

  // A plugin file or folder searched before the default places (absolute path). Repeatable.
  ContextOptions& plugin_path(std::string path) {
    plugin_paths_.push_back(std::move(path));
    return *this;
  }
  // false: search only the plugin_path()s (not DLRT_PLUGIN_PATH, not the install tree).
  ContextOptions& search_default_paths(bool on) {
    search_default_paths_ = on ? 1 : 0;
    return *this;
  }
  // true: check each plugin's load + init in a child process first, waiting at most
  // timeout_s (0: 10 s); one that crashes, exits or hangs there is recorded FAILED with the
  // reason and never loaded into this process (dlrt_context_options.isolate_plugins).
  ContextOptions& isolate_plugins(bool on, double timeout_s = 0) {
    isolate_plugins_ = on ? 1 : 0;
    isolate_timeout_s_ = timeout_s;
    return *this;
  }
  // "CPU:0,GPU:1", "GPU", ...; overrides DLRT_VISIBLE_DEVICES.
  ContextOptions& visible_devices(std::string list) {
    visible_devices_ = std::move(list);
    return *this;
  }
  // "cpu:threads=2;reference:num_devices=3"; overrides DLRT_PLUGIN_OPTIONS.
  ContextOptions& plugin_options(std::string options) {
    plugin_options_ = std::move(options);
    return *this;
  }
  // Split `physical_device` into `count` logical devices. Repeatable, one per physical device.
  ContextOptions& logical_devices(std::string physical_device, int32_t count,
                                  std::vector<uint64_t> memory_limits = {}) {
    logical_.push_back({std::move(physical_device), count, std::move(memory_limits)});
    return *this;
  }
  // Overrides DLRT_LOG_LEVEL.
  ContextOptions& log_level(dlrt_log_level level) {
    log_level_ = level;
    return *this;
  }
  // TensorFlow's set_log_device_placement; overrides DLRT_LOG_DEVICE_PLACEMENT.
  ContextOptions& log_device_placement(bool on) {
    log_device_placement_ = on ? 1 : 0;
    return *this;
  }
  // true (default): a requested device that cannot run an op yields to one that can.
  ContextOptions& soft_placement(bool on) {
    soft_placement_ = on ? 1 : 0;
    return *this;
  }
  // GPU memory (TensorFlow's set_memory_growth / memory_limit): growth on (default) takes
  // memory as needed; off reserves `fraction` (0 = 0.9) of free memory at first use. Override
  // DLRT_GPU_ALLOW_GROWTH.
  ContextOptions& memory_growth(bool on, double fraction = 0.0) {
    memory_growth_ = on ? 1 : 0;
    memory_fraction_ = fraction;
    return *this;
  }
  // Limit in bytes per GPU-class logical device; overrides DLRT_GPU_MEMORY_LIMIT_MB.
  ContextOptions& gpu_memory_limit(uint64_t bytes) {
    gpu_memory_limit_ = bytes;
    return *this;
  }

  // The C view: dlrt_context_options pointing into this object and into the view's own
  // arrays, valid while both live and neither changes. Context's constructor uses it.
  struct CView {
    dlrt_context_options options;
    std::vector<const char*> paths;
    std::vector<dlrt_logical_device_config> logical;
  };
  void to_c(CView* view) const {
    dlrt_context_options_init(&view->options);
    dlrt_context_options& o = view->options;
    view->paths.clear();
    for (const std::string& p : plugin_paths_) view->paths.push_back(p.c_str());
    o.plugin_paths = view->paths.empty() ? nullptr : view->paths.data();
    o.num_plugin_paths = view->paths.size();
    if (search_default_paths_) o.search_default_paths = *search_default_paths_;
    o.isolate_plugins = isolate_plugins_;
    o.isolate_timeout_s = isolate_timeout_s_;
    if (log_level_) o.log_level = *log_level_;
    if (visible_devices_) o.visible_devices = visible_devices_->c_str();
    if (plugin_options_) o.plugin_options = plugin_options_->c_str();
    view->logical.clear();
    for (const LogicalDevices& l : logical_) {
      dlrt_logical_device_config c{};
      c.struct_size = DLRT_STRUCT_SIZE(dlrt_logical_device_config);
      c.physical_device = l.physical_device.c_str();
      c.count = l.count;
      c.memory_limits = l.memory_limits.empty() ? nullptr : l.memory_limits.data();
      view->logical.push_back(c);
    }
    o.logical_devices = view->logical.empty() ? nullptr : view->logical.data();
    o.num_logical_devices = view->logical.size();
    if (log_device_placement_) o.log_device_placement = *log_device_placement_;
    if (soft_placement_) o.soft_placement = *soft_placement_;
    if (memory_growth_) o.memory_growth = *memory_growth_;
    o.memory_fraction = memory_fraction_;
    o.gpu_memory_limit = gpu_memory_limit_;
  }

 private:
  std::vector<std::string> plugin_paths_;
  std::optional<int32_t> search_default_paths_;
  int32_t isolate_plugins_ = 0;
  double isolate_timeout_s_ = 0;
  std::optional<std::string> visible_devices_;
  std::optional<std::string> plugin_options_;
  std::vector<LogicalDevices> logical_;
  std::optional<int32_t> log_level_;
  std::optional<int32_t> log_device_placement_;
  std::optional<int32_t> soft_placement_;
  std::optional<int32_t> memory_growth_;
  double memory_fraction_ = 0.0;
  uint64_t gpu_memory_limit_ = 0;
};

// ------------------------------------------------------------------------------------------
// Op attributes, shared by eager ops (Context::run_op) and the graph builders.

// One op attribute for the builders: {"padding", "SAME"}, {"strides", {2, 2}}, {"seed", 7},
// {"learning_rate", 0.01}, {"transpose_b", true}, {"dtype", DLRT_I32}. Float lists take an
// explicit std::vector<double>. Owns its values; c() views them as a dlrt_attr.
class OpAttr {
 public:
  template <typename I, typename std::enable_if<std::is_integral<I>::value &&
                                                    !std::is_same<I, bool>::value,
                                                int>::type = 0>
  OpAttr(std::string name, I value) : name_(std::move(name)), type_(DLRT_ATTR_INT), i_(value) {}
  OpAttr(std::string name, double value) : name_(std::move(name)), type_(DLRT_ATTR_FLOAT), f_(value) {}
  OpAttr(std::string name, bool value)
      : name_(std::move(name)), type_(DLRT_ATTR_BOOL), i_(value ? 1 : 0) {}
  OpAttr(std::string name, const char* value)
      : name_(std::move(name)), type_(DLRT_ATTR_STRING), s_(value != nullptr ? value : "") {}
  OpAttr(std::string name, std::string value)
      : name_(std::move(name)), type_(DLRT_ATTR_STRING), s_(std::move(value)) {}
  OpAttr(std::string name, std::initializer_list<int64_t> value)
      : name_(std::move(name)), type_(DLRT_ATTR_INTS), ints_(value) {}
  OpAttr(std::string name, std::vector<int64_t> value)
      : name_(std::move(name)), type_(DLRT_ATTR_INTS), ints_(std::move(value)) {}
  OpAttr(std::string name, std::vector<double> value)
      : name_(std::move(name)), type_(DLRT_ATTR_FLOATS), floats_(std::move(value)) {}
  OpAttr(std::string name, dlrt_dtype value)
      : name_(std::move(name)), type_(DLRT_ATTR_DTYPE), i_(value) {}

  // Points into this object: valid while it lives and is not changed.
  dlrt_attr c() const {
    dlrt_attr a{};
    a.struct_size = DLRT_STRUCT_SIZE(dlrt_attr);
    a.name = name_.c_str();
    a.type = type_;
    a.i = i_;
    a.f = f_;
    a.s = s_.c_str();
    a.ints = ints_.data();
    a.floats = floats_.data();
    a.count = type_ == DLRT_ATTR_INTS ? ints_.size() : type_ == DLRT_ATTR_FLOATS ? floats_.size() : 0;
    return a;
  }

 private:
  std::string name_;
  dlrt_attr_type type_;
  int64_t i_ = 0;
  double f_ = 0.0;
  std::string s_;
  std::vector<int64_t> ints_;
  std::vector<double> floats_;
};
using OpAttrs = std::vector<OpAttr>;

namespace detail {

// C views of a list of attributes, alive as long as this object (and the OpAttrs).
struct CAttrs {
  explicit CAttrs(const OpAttrs& attrs) {
    values.reserve(attrs.size());
    for (const OpAttr& a : attrs) values.push_back(a.c());
    for (const dlrt_attr& a : values) pointers.push_back(&a);
  }
  const dlrt_attr* const* data() const { return pointers.empty() ? nullptr : pointers.data(); }
  size_t size() const { return pointers.size(); }
  std::vector<dlrt_attr> values;
  std::vector<const dlrt_attr*> pointers;
};

inline dlrt_tensor_desc dense_desc(dlrt_dtype dtype, const std::vector<int64_t>& dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  // A rank above DLRT_MAX_RANK is passed on as is, and the library rejects it by name.
  for (size_t i = 0; i < dims.size() && i < DLRT_MAX_RANK; ++i) d.dims[i] = dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

// The dlrt_dtype of a C++ element type.
template <typename T> struct CDtype;
template <> struct CDtype<float> { static constexpr dlrt_dtype value = DLRT_F32; };
template <> struct CDtype<double> { static constexpr dlrt_dtype value = DLRT_F64; };
template <> struct CDtype<int32_t> { static constexpr dlrt_dtype value = DLRT_I32; };
template <> struct CDtype<int64_t> { static constexpr dlrt_dtype value = DLRT_I64; };
template <> struct CDtype<uint8_t> { static constexpr dlrt_dtype value = DLRT_U8; };
template <> struct CDtype<int8_t> { static constexpr dlrt_dtype value = DLRT_I8; };

}  // namespace detail

class Tensor;

// A device's answer to "can you run this op?": supported, or the code and reason it gave
// (UNIMPLEMENTED with the plugin's words; NOT_FOUND for an unknown op).
struct OpSupport {
  bool supported = true;
  dlrt_code code = DLRT_OK;
  std::string reason;  // "" when supported

  explicit operator bool() const noexcept { return supported; }

  // Takes (and frees) a status from dlrt_op_supported / dlrt_op_probe: NULL is "yes".
  static OpSupport from_status(dlrt_status* status) {
    OpSupport s;
    if (status == nullptr) return s;
    detail::Owner<dlrt_status> owned(status);
    s.supported = false;
    s.code = dlrt_status_code(owned.get());
    s.reason = detail::str(dlrt_status_message(owned.get()));
    return s;
  }
};

// One op the library knows (docs/ops.md): its name and one-line doc.
struct OpInfo {
  std::string name;
  std::string doc;
};

// Every op, sorted by name (dlrt_op_count / dlrt_op_name / dlrt_op_doc).
inline std::vector<OpInfo> op_list() {
  std::vector<OpInfo> out;
  const size_t n = dlrt_op_count();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back({detail::str(dlrt_op_name(i)), detail::str(dlrt_op_doc(i))});
  return out;
}

// ------------------------------------------------------------------------------------------
// Context: owns the loaded plugins and the device registry (dlrt_context). Move-only.
// Queries are thread-safe, as in the C API.

class Context {
 public:
  // Loads plugins as `options` say. A plugin that fails to load does not make this throw
  // (see plugins()); malformed options do (Error with DLRT_INVALID_ARGUMENT).
  explicit Context(const ContextOptions& options = ContextOptions()) {
    ContextOptions::CView view;
    options.to_c(&view);
    dlrt_context* raw = nullptr;
    check(dlrt_context_create(&view.options, &raw));
    handle_.reset(raw);
  }
  // Adopts a context made through the C API; it is destroyed with this object.
  explicit Context(dlrt_context* adopted) noexcept : handle_(adopted) {}

  Context(Context&&) noexcept = default;
  Context& operator=(Context&&) noexcept = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The C handle, still owned by this object; NULL after a move.
  dlrt_context* get() const noexcept { return handle_.get(); }
  // Gives up ownership: the caller now calls dlrt_context_destroy.
  dlrt_context* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // ---- plugins ----
  size_t plugin_count() const { return dlrt_context_plugin_count(get()); }
  PluginInfo plugin(size_t index) const {
    dlrt_plugin_info c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_plugin_info);
    check(dlrt_context_plugin_info(get(), index, &c));
    return PluginInfo::from_c(c);
  }
  // Every plugin file found, in search order, whatever its state.
  std::vector<PluginInfo> plugins() const {
    std::vector<PluginInfo> out;
    const size_t n = plugin_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(plugin(i));
    return out;
  }

  // ---- devices ----
  size_t device_count() const { return dlrt_context_device_count(get()); }
  DeviceInfo device(size_t index) const {
    dlrt_device_info c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
    check(dlrt_context_device_info(get(), index, &c));
    return DeviceInfo::from_c(c);
  }
  // Every visible device, in registry order (index i is device(i)).
  std::vector<DeviceInfo> devices() const {
    std::vector<DeviceInfo> out;
    const size_t n = device_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(device(i));
    return out;
  }
  // The index of the device matching `spec` ("GPU:0", "cpu"); Error(DLRT_NOT_FOUND) lists
  // the devices there are.
  size_t find_device(const std::string& spec) const {
    size_t index = 0;
    check(dlrt_context_find_device(get(), spec.c_str(), &index));
    return index;
  }
  // Free bytes of device `index`'s physical device, asked of its plugin now.
  uint64_t device_memory_free(size_t index) const {
    uint64_t free_bytes = 0;
    check(dlrt_context_device_memory_free(get(), index, &free_bytes));
    return free_bytes;
  }
  // The memory arena of device `index` (every byte the context holds there).
  MemoryStats memory_stats(size_t index) const {
    dlrt_memory_stats c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_memory_stats);
    check(dlrt_context_memory_stats(get(), index, &c));
    return {c.in_use, c.peak, c.reserved, c.limit, c.num_allocs};
  }

  // ---- eager ops (dlrt_op_*; defined after Tensor) ----
  // Runs `op` once on device `device` and returns its outputs, new tensors on that device:
  //   auto y = ctx.run_op("conv2d", cpu, {x, w}, {{"padding", "SAME"}})[0];
  // Two C calls: dlrt_op_infer (for the output count), then dlrt_op_run.
  std::vector<Tensor> run_op(const std::string& op, size_t device,
                             const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                             const OpAttrs& attrs = {}) const;
  // Runs `op` writing into `outputs` (one per output of the op, each of the inferred desc;
  // an optimizer update may name its own inputs). One C call.
  void run_op_into(const std::string& op, size_t device,
                   const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                   const std::vector<std::reference_wrapper<Tensor>>& outputs,
                   const OpAttrs& attrs = {}) const;
  // Can `device` run `op` on inputs of these descs? A "no" is an answer, not an exception;
  // a malformed call (unknown op, bad shapes, bad device index) throws Error.
  OpSupport op_supported(const std::string& op, size_t device,
                         const std::vector<dlrt_tensor_desc>& inputs,
                         const OpAttrs& attrs = {}) const {
    std::vector<const dlrt_tensor_desc*> ptrs;
    for (const dlrt_tensor_desc& d : inputs) ptrs.push_back(&d);
    detail::CAttrs c(attrs);
    OpSupport s = OpSupport::from_status(dlrt_op_supported(
        get(), op.c_str(), device, ptrs.empty() ? nullptr : ptrs.data(), ptrs.size(), c.data(),
        c.size()));
    if (!s.supported && s.code != DLRT_UNIMPLEMENTED) throw Error(s.code, s.reason);
    return s;
  }
  // The same on the op's example operands (what `dlprobe --ops` shows). Never throws for a
  // "no"; the reason says why (NOT_FOUND for an unknown op, OUT_OF_RANGE for a bad device).
  OpSupport op_probe(const std::string& op, size_t device) const {
    return OpSupport::from_status(dlrt_op_probe(get(), op.c_str(), device));
  }
  // Output descriptors of `op` for inputs of these descs, without running anything.
  std::vector<dlrt_tensor_desc> op_infer(const std::string& op,
                                         const std::vector<dlrt_tensor_desc>& inputs,
                                         const OpAttrs& attrs = {}) const {
    std::vector<const dlrt_tensor_desc*> ptrs;
    for (const dlrt_tensor_desc& d : inputs) ptrs.push_back(&d);
    detail::CAttrs c(attrs);
    std::vector<dlrt_tensor_desc> out(8, detail::dense_desc(DLRT_DTYPE_INVALID, {}));
    size_t n = 0;
    check(dlrt_op_infer(get(), op.c_str(), ptrs.empty() ? nullptr : ptrs.data(), ptrs.size(),
                        c.data(), c.size(), out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }

  // ---- settings ----
  size_t setting_count() const { return dlrt_context_setting_count(get()); }
  Setting setting(size_t index) const {
    dlrt_setting c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_setting);
    check(dlrt_context_setting(get(), index, &c));
    return Setting::from_c(c);
  }
  // Every setting with its effective value and source.
  std::vector<Setting> settings() const {
    std::vector<Setting> out;
    const size_t n = setting_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(setting(i));
    return out;
  }

 private:
  detail::Owner<dlrt_context> handle_;
};

// ------------------------------------------------------------------------------------------
// Tensor: a buffer on one device of a context (dlrt_tensor). Move-only; destroy it (let it go
// out of scope) before its Context.
//
//   dlrt::Tensor x = dlrt::Tensor::create(ctx, cpu, DLRT_F32, {2, 3});
//   x.write(std::vector<float>{1, -2, 3, -4, 5, -6});
//   std::vector<float> y = ctx.run_op("relu", cpu, {x})[0].read<float>();

class Tensor {
 public:
  Tensor() = default;
  // Adopts a tensor made through the C API; it is destroyed with this object.
  explicit Tensor(dlrt_tensor* adopted) noexcept : handle_(adopted) {}

  // An uninitialised dense tensor on visible device `device`.
  static Tensor create(const Context& context, size_t device, dlrt_dtype dtype,
                       const std::vector<int64_t>& dims) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    dlrt_tensor* raw = nullptr;
    check(dlrt_tensor_create(context.get(), device, &d, &raw));
    return Tensor(raw);
  }

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  dlrt_tensor* get() const noexcept { return handle_.get(); }
  dlrt_tensor* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  dlrt_tensor_desc desc() const {
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    check(dlrt_tensor_get_desc(get(), &d));
    return d;
  }
  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(desc().dtype); }
  std::vector<int64_t> dims() const {
    const dlrt_tensor_desc d = desc();
    return std::vector<int64_t>(d.dims, d.dims + d.rank);
  }
  size_t device() const noexcept { return dlrt_tensor_device_index(get()); }
  size_t byte_size() const noexcept { return dlrt_tensor_byte_size(get()); }

  // Copies all of `values` in (their count must match the tensor's elements). T is the
  // tensor's element type (float for f32, int32_t for i32, ...).
  template <typename T>
  void write(const std::vector<T>& values) {
    check(dlrt_tensor_write(get(), values.data(), values.size() * sizeof(T)));
  }
  // The tensor's elements as T (byte_size() must be a multiple of sizeof(T)).
  template <typename T>
  std::vector<T> read() const {
    std::vector<T> values(byte_size() / sizeof(T));
    check(dlrt_tensor_read(get(), values.data(), values.size() * sizeof(T)));
    return values;
  }

 private:
  detail::Owner<dlrt_tensor> handle_;
};

inline std::vector<Tensor> Context::run_op(
    const std::string& op, size_t device,
    const std::vector<std::reference_wrapper<const Tensor>>& inputs, const OpAttrs& attrs) const {
  std::vector<const dlrt_tensor*> in;
  std::vector<dlrt_tensor_desc> descs;
  for (const Tensor& t : inputs) {
    in.push_back(t.get());
    descs.push_back(t.desc());
  }
  const size_t n = op_infer(op, descs, attrs).size();
  detail::CAttrs c(attrs);
  std::vector<dlrt_tensor*> out(n, nullptr);
  check(dlrt_op_run(get(), op.c_str(), device, in.empty() ? nullptr : in.data(), in.size(),
                    c.data(), c.size(), out.empty() ? nullptr : out.data(), out.size()));
  std::vector<Tensor> result;
  result.reserve(n);
  for (dlrt_tensor* t : out) result.emplace_back(t);
  return result;
}

inline void Context::run_op_into(const std::string& op, size_t device,
                                 const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                                 const std::vector<std::reference_wrapper<Tensor>>& outputs,
                                 const OpAttrs& attrs) const {
  std::vector<const dlrt_tensor*> in;
  for (const Tensor& t : inputs) in.push_back(t.get());
  std::vector<dlrt_tensor*> out;
  for (Tensor& t : outputs) out.push_back(t.get());
  detail::CAttrs c(attrs);
  check(dlrt_op_run(get(), op.c_str(), device, in.empty() ? nullptr : in.data(), in.size(),
                    c.data(), c.size(), out.empty() ? nullptr : out.data(), out.size()));
}

// ------------------------------------------------------------------------------------------
// Graphs: build a dataflow graph op by op, with shape inference at build time (dlrt_graph_*).
//
//   dlrt::Graph g(ctx);
//   dlrt::Value x = g.placeholder("x", DLRT_F32, {64, 28, 28, 1});
//   dlrt::Value w = g.variable("w", DLRT_F32, {3, 3, 1, 32}, "random_uniform",
//                              {{"minval", -0.1}, {"maxval", 0.1}, {"seed", 1}});
//   {
//     dlrt::DeviceScope on_gpu(g, "/GPU:0");   // TensorFlow's `with tf.device('/GPU:0'):`
//     dlrt::Value y = g.op1("relu", {g.op1("conv2d", {x, w}, {{"padding", "SAME"}})});
//   }
//
// Values are small copyable handles (the graph's C pointer + a dlrt_value); they stay valid
// as long as their Graph.


// A value of a graph: one output of one node. Non-owning; valid while its Graph lives.
class Value {
 public:
  Value() = default;
  Value(dlrt_graph* graph, dlrt_value value) noexcept : graph_(graph), value_(value) {}

  dlrt_value get() const noexcept { return value_; }
  dlrt_graph* graph() const noexcept { return graph_; }
  explicit operator bool() const noexcept { return value_ != DLRT_INVALID_VALUE; }
  // Node index and output index (the two halves of dlrt_value).
  uint32_t node() const noexcept { return static_cast<uint32_t>(value_ >> 32); }
  uint32_t output() const noexcept { return static_cast<uint32_t>(value_ & 0xffffffffu); }

  // Its inferred type: dtype, rank, dims (dense).
  dlrt_tensor_desc desc() const {
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    check(dlrt_graph_value_desc(graph_, value_, &d));
    return d;
  }
  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(desc().dtype); }
  std::vector<int64_t> dims() const {
    const dlrt_tensor_desc d = desc();
    return std::vector<int64_t>(d.dims, d.dims + d.rank);
  }

  friend bool operator==(const Value& a, const Value& b) noexcept {
    return a.graph_ == b.graph_ && a.value_ == b.value_;
  }
  friend bool operator!=(const Value& a, const Value& b) noexcept { return !(a == b); }

 private:
  dlrt_graph* graph_ = nullptr;
  dlrt_value value_ = DLRT_INVALID_VALUE;
};

// Options of Graph::compile; an unset field takes the context's setting (dlrt_compile_options).
struct CompileOptions {
  std::optional<bool> soft_placement;        // false: strict placement
  std::optional<bool> log_device_placement;  // print TensorFlow's placement log at compile
  std::optional<bool> use_capture;           // replay a captured step where devices offer it
  // true: every assign of the graph runs at the end of each run (a training step); false or
  // unset: none (evaluation, prediction).
  std::optional<bool> run_assigns;

  // Chainable setter: g.compile(feeds, fetches, CompileOptions().with_run_assigns(true)).
  CompileOptions& with_run_assigns(bool on) {
    run_assigns = on;
    return *this;
  }

  dlrt_compile_options c() const {
    dlrt_compile_options o;
    dlrt_compile_options_init(&o);
    if (soft_placement) o.soft_placement = *soft_placement ? 1 : 0;
    if (log_device_placement) o.log_device_placement = *log_device_placement ? 1 : 0;
    if (use_capture) o.use_capture = *use_capture ? 1 : 0;
    if (run_assigns) o.run_assigns = *run_assigns ? 1 : 0;
    return o;
  }
};

// Where one node of an executable runs (dlrt_node_placement, copied out).
struct NodePlacement {
  std::string name, op, requested, assigned, reason, detail;
};

// A compiled subgraph (dlrt_executable): placed, memory planned, kernels created. Move-only;
// destroy it before its Graph. Running it allocates nothing when every fetch has a tensor.
class Executable {
 public:
  Executable() = default;
  explicit Executable(dlrt_executable* adopted) noexcept : handle_(adopted) {}
  Executable(Executable&&) noexcept = default;
  Executable& operator=(Executable&&) noexcept = default;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  dlrt_executable* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // `feeds` in the order given to compile. `fetches` has one Tensor per fetch: a tensor that
  // holds one is written (its desc must match); an empty one receives a new tensor.
  void run(const std::vector<const Tensor*>& feeds, std::vector<Tensor>& fetches) {
    std::vector<const dlrt_tensor*> in;
    for (const Tensor* t : feeds) in.push_back(t != nullptr ? t->get() : nullptr);
    std::vector<dlrt_tensor*> out;
    for (Tensor& t : fetches) out.push_back(t.get());
    const bool had_all = [&] {
      for (dlrt_tensor* t : out)
        if (t == nullptr) return false;
      return true;
    }();
    check(dlrt_executable_run(get(), in.empty() ? nullptr : in.data(), in.size(),
                              out.empty() ? nullptr : out.data(), out.size()));
    if (!had_all)
      for (size_t i = 0; i < out.size(); ++i)
        if (!fetches[i]) fetches[i] = Tensor(out[i]);
  }
  // The same, with a new tensor for every fetch.
  std::vector<Tensor> run(const std::vector<const Tensor*>& feeds, size_t num_fetches) {
    std::vector<Tensor> out(num_fetches);
    run(feeds, out);
    return out;
  }

  size_t node_count() const { return dlrt_executable_node_count(get()); }
  NodePlacement node_placement(size_t index) const {
    dlrt_node_placement c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_node_placement);
    check(dlrt_executable_node_placement(get(), index, &c));
    return {detail::str(c.name),     detail::str(c.op),     detail::str(c.requested),
            detail::str(c.assigned), detail::str(c.reason), detail::str(c.detail)};
  }
  // DLRT_DUMP_LOG, DLRT_DUMP_JSON or DLRT_DUMP_DOT.
  std::string dump(dlrt_dump_format format) const {
    size_t n = 0;
    check(dlrt_executable_dump(get(), format, nullptr, 0, &n));
    std::string text(n + 1, '\0');
    check(dlrt_executable_dump(get(), format, &text[0], text.size(), &n));
    text.resize(n);
    return text;
  }

  // Profiling (dlrt_executable_set_profiling): later runs time every node, synchronising
  // after each; write_trace writes Chrome trace-event JSON (opens in Perfetto).
  void set_profiling(bool enabled) { check(dlrt_executable_set_profiling(get(), enabled ? 1 : 0)); }
  // The run count the next run starts from (random ops draw with it; dlrt_executable_set_run_count).
  void set_run_count(uint64_t next_run) { check(dlrt_executable_set_run_count(get(), next_run)); }
  // Kernels per run, runs, captured replays, allocations by runs (dlrt_executable_run_stats).
  dlrt_run_stats run_stats() const {
    dlrt_run_stats c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_run_stats);
    check(dlrt_executable_run_stats(get(), &c));
    return c;
  }
  void write_trace(const std::string& path) const {
    check(dlrt_executable_write_trace(get(), path.c_str()));
  }

 private:
  detail::Owner<dlrt_executable> handle_;
};

// A dataflow graph and its variables' storage (dlrt_graph). Move-only; destroy it before its
// Context, and after its executables. Every builder throws Error and leaves the graph as it
// was; a name "" makes a unique one ("relu", "relu_1", ...).
class Graph {
 public:
  explicit Graph(const Context& context) {
    dlrt_graph* raw = nullptr;
    check(dlrt_graph_create(context.get(), &raw));
    handle_.reset(raw);
  }
  // Adopts a graph made through the C API; it is destroyed with this object.
  explicit Graph(dlrt_graph* adopted) noexcept : handle_(adopted) {}

  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  dlrt_graph* get() const noexcept { return handle_.get(); }
  dlrt_graph* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // ---- building ----
  Value placeholder(const std::string& name, dlrt_dtype dtype, const std::vector<int64_t>& dims) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_placeholder(get(), name.c_str(), &d, &v));
    return Value(get(), v);
  }
  // `data` holds the elements, row-major; their count must match `dims`.
  template <typename T>
  Value constant(const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<T>& data) {
    const dlrt_tensor_desc d = detail::dense_desc(detail::CDtype<T>::value, dims);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_constant(get(), name.c_str(), &d, data.data(), data.size() * sizeof(T), &v));
    return Value(get(), v);
  }
  // Initialised once on its device by `init_op` ("fill", "random_uniform", "random_normal")
  // with `init_attrs`; shape and dtype come from `dtype`/`dims`.
  Value variable(const std::string& name, dlrt_dtype dtype, const std::vector<int64_t>& dims,
                 const std::string& init_op, const OpAttrs& init_attrs = {},
                 bool trainable = true) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    const detail::CAttrs attrs(init_attrs);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_variable(get(), name.c_str(), &d, init_op.c_str(), attrs.data(),
                              attrs.size(), trainable ? 1 : 0, &v));
    return Value(get(), v);
  }
  // Adds op `op` (docs/ops.md) and returns all its outputs. `name` "" makes a unique one.
  std::vector<Value> op(const std::string& op, const std::vector<Value>& inputs,
                        const OpAttrs& attrs = {}, const std::string& name = "") {
    std::vector<dlrt_value> in;
    in.reserve(inputs.size());
    for (const Value& i : inputs) in.push_back(i.get());
    const detail::CAttrs c_attrs(attrs);
    dlrt_value out[8];  // no op of docs/ops.md has more than 3 outputs
    size_t n = 0;
    check(dlrt_graph_op(get(), op.c_str(), name.c_str(), in.empty() ? nullptr : in.data(),
                        in.size(), c_attrs.data(), c_attrs.size(), out, 8, &n));
    std::vector<Value> values;
    for (size_t k = 0; k < n; ++k) values.push_back(Value(get(), out[k]));
    return values;
  }
  // The first (for most ops the only) output of op().
  Value op1(const std::string& op_name, const std::vector<Value>& inputs, const OpAttrs& attrs = {},
            const std::string& name = "") {
    return op(op_name, inputs, attrs, name).at(0);
  }
  // After each run of an executable that includes it, `variable` holds `value`.
  void assign(Value variable, Value value) {
    check(dlrt_graph_assign(get(), variable.get(), value.get()));
  }
  // The producers of `a` and `b` are placed on one device.
  void colocate(Value a, Value b) { check(dlrt_graph_colocate(get(), a.get(), b.get())); }
  // Prefer DeviceScope, which pops for you.
  void push_device(const std::string& spec) { check(dlrt_graph_push_device(get(), spec.c_str())); }
  void pop_device() { check(dlrt_graph_pop_device(get())); }

  // ---- queries ----
  // "name" (output 0) or "name:k"; Error(DLRT_NOT_FOUND) when there is none.
  Value find(const std::string& name) const {
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_find(get(), name.c_str(), &v));
    return Value(get(), v);
  }
  std::vector<Value> trainable_variables() const {
    std::vector<dlrt_value> raw(dlrt_graph_trainable_variables(get(), nullptr, 0));
    raw.resize(dlrt_graph_trainable_variables(get(), raw.data(), raw.size()));
    std::vector<Value> out;
    for (dlrt_value v : raw) out.push_back(Value(get(), v));
    return out;
  }

  // ---- variables' contents (checkpoints); T must match the variable's dtype ----
  template <typename T>
  std::vector<T> read_variable(Value variable) {
    const dlrt_tensor_desc d = variable.desc();
    size_t count = 1;
    for (int32_t i = 0; i < d.rank; ++i) count *= static_cast<size_t>(d.dims[i]);
    if (d.dtype != detail::CDtype<T>::value)
      throw Error(DLRT_INVALID_ARGUMENT, "read_variable: the element type does not match the "
                                         "variable's dtype " +
                                             dtype_name(static_cast<dlrt_dtype>(d.dtype)));
    std::vector<T> out(count);
    check(dlrt_graph_variable_read(get(), variable.get(), out.data(), count * sizeof(T)));
    return out;
  }
  template <typename T>
  void write_variable(Value variable, const std::vector<T>& data) {
    check(dlrt_graph_variable_write(get(), variable.get(), data.data(), data.size() * sizeof(T)));
  }

  // ---- compiling ----
  // The subgraph computing `fetches`, fed by `feeds`; with options.run_assigns, also every
  // assign of the graph (a training step).
  Executable compile(const std::vector<Value>& feeds, const std::vector<Value>& fetches,
                     const CompileOptions& options = {}) {
    std::vector<dlrt_value> in, out;
    for (const Value& v : feeds) in.push_back(v.get());
    for (const Value& v : fetches) out.push_back(v.get());
    const dlrt_compile_options c = options.c();
    dlrt_executable* raw = nullptr;
    check(dlrt_graph_compile(get(), in.empty() ? nullptr : in.data(), in.size(),
                             out.empty() ? nullptr : out.data(), out.size(), &c, &raw));
    return Executable(raw);
  }

 private:
  detail::Owner<dlrt_graph> handle_;
};

// TensorFlow's `with tf.device(spec):` — ops, variables and constants built while it lives
// request `spec`; scopes nest (the inner one's parts override the outer's). Not copyable or
// movable: it pops exactly what it pushed, when its block ends.
class DeviceScope {
 public:
  DeviceScope(Graph& graph, const std::string& spec) : graph_(graph.get()) {
    check(dlrt_graph_push_device(graph_, spec.c_str()));
  }
  ~DeviceScope() { dlrt_status_free(dlrt_graph_pop_device(graph_)); }  // paired: cannot fail
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  dlrt_graph* graph_;
};

// ------------------------------------------------------------------------------------------
// Distribution (dlrt.h "Distribution"): data parallel over several devices and processes.
//
//   dlrt::Strategy strategy(ctx);                 // every GPU, else every CPU logical device
//   // one step's gradients, replica-major: grads[r * n + k] is gradient k of replica r,
//   // on device strategy.replica_device(r)
//   strategy.all_reduce(grads, n);                // now every replica holds the sums
//
// With StrategyOptions::multi_worker the group spans every process of an mpirun (or torchrun)
// job; rank() says which one this is.

// What a Strategy is made with (dlrt_strategy_options).
struct StrategyOptions {
  std::vector<std::string> devices;  // one replica per device spec; empty: the default
  bool multi_worker = false;         // true: every worker of the job (MultiWorkerMirrored)
  int64_t timeout_ms = 0;            // > 0; 0: DLRT_COLLECTIVE_TIMEOUT, else 300 s
};

// This process's share of a data-parallel group (dlrt_strategy). Move-only; destroy it before
// its Context. After a collective failed (a dead worker, a timeout) every later call throws
// Error(DLRT_FAILED_PRECONDITION) repeating the first error: make a new one. One thread at a
// time.
class Strategy {
 public:
  // Resolves the devices and, with multi_worker, joins the other workers (blocking until all
  // have joined, or the timeout).
  explicit Strategy(const Context& ctx, const StrategyOptions& options = {}) {
    std::vector<const char*> specs;
    for (const std::string& d : options.devices) specs.push_back(d.c_str());
    dlrt_strategy_options o;
    dlrt_strategy_options_init(&o);
    o.devices = specs.empty() ? nullptr : specs.data();
    o.num_devices = specs.size();
    o.multi_worker = options.multi_worker ? 1 : 0;
    o.timeout_ms = options.timeout_ms;
    dlrt_strategy* raw = nullptr;
    check(dlrt_strategy_create(ctx.get(), &o, &raw));
    handle_.reset(raw);
  }
  // Adopts a strategy made through the C API; it is destroyed with this object.
  explicit Strategy(dlrt_strategy* adopted) noexcept : handle_(adopted) {}

  Strategy(Strategy&&) noexcept = default;
  Strategy& operator=(Strategy&&) noexcept = default;
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  dlrt_strategy* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Local replicas, and the registry index (Context::device) of each.
  size_t num_replicas() const { return dlrt_strategy_num_replicas(get()); }
  size_t replica_device(size_t replica) const {
    size_t index = 0;
    check(dlrt_strategy_replica_device(get(), replica, &index));
    return index;
  }
  // This worker's rank, the number of workers, the rank among this host's workers.
  int32_t rank() const { return dlrt_strategy_rank(get()); }
  int32_t num_workers() const { return dlrt_strategy_num_workers(get()); }
  int32_t local_rank() const { return dlrt_strategy_local_rank(get()); }

  // `tensors`: num_replicas() groups of `per_replica` f32 tensors, replica-major; each is
  // replaced by the sum over every replica of every worker.
  void all_reduce(const std::vector<Tensor*>& tensors, size_t per_replica) {
    const std::vector<dlrt_tensor*> c = c_tensors(tensors, per_replica, "all_reduce");
    check(dlrt_strategy_all_reduce(get(), c.data(), per_replica));
  }
  // The same layout, any dtype: replica 0 of worker 0's tensors copied into every other's.
  void broadcast(const std::vector<Tensor*>& tensors, size_t per_replica) {
    const std::vector<dlrt_tensor*> c = c_tensors(tensors, per_replica, "broadcast");
    check(dlrt_strategy_broadcast(get(), c.data(), per_replica));
  }

 private:
  // The C handles. The one check C cannot make (it sees a pointer, not a count): there are
  // exactly num_replicas() * per_replica of them.
  std::vector<dlrt_tensor*> c_tensors(const std::vector<Tensor*>& tensors, size_t per_replica,
                                      const char* method) const {
    const size_t replicas = num_replicas();
    if (per_replica != 0 && tensors.size() != replicas * per_replica)
      throw Error(DLRT_INVALID_ARGUMENT,
                  std::string("Strategy::") + method + ": " + std::to_string(tensors.size()) +
                      " tensors, expected " + std::to_string(replicas) + " replicas x " +
                      std::to_string(per_replica) + " per replica = " +
                      std::to_string(replicas * per_replica) + " (replica-major)");
    std::vector<dlrt_tensor*> c;
    c.reserve(tensors.size());
    for (Tensor* t : tensors) c.push_back(t != nullptr ? t->get() : nullptr);
    return c;
  }

  detail::Owner<dlrt_strategy> handle_;
};

// ------------------------------------------------------------------------------------------
// Data files and checkpoints (dlrt.h "Data files and checkpoints")

// An IDX array read into memory (owner; move-only): dtype, dims and host-order bytes.
//   dlrt::IdxArray images = dlrt::read_idx("train-images-idx3-ubyte.gz");
//   images.dims() == {60000, 28, 28}; images.data<uint8_t>()[i]
class IdxArray {
 public:
  IdxArray() = default;
  // max_rows > 0: only the first max_rows rows along dims[0] are read (dlrt_idx_read_rows).
  explicit IdxArray(const std::string& path, uint64_t max_rows = 0) {
    check(dlrt_idx_read_rows(path.c_str(), max_rows, &a_));
  }
  ~IdxArray() { dlrt_idx_free(&a_); }
  IdxArray(IdxArray&& o) noexcept : a_(o.a_) { o.a_ = empty(); }
  IdxArray& operator=(IdxArray&& o) noexcept {
    if (this != &o) {
      dlrt_idx_free(&a_);
      a_ = o.a_;
      o.a_ = empty();
    }
    return *this;
  }
  IdxArray(const IdxArray&) = delete;
  IdxArray& operator=(const IdxArray&) = delete;

  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(a_.dtype); }
  std::vector<int64_t> dims() const { return std::vector<int64_t>(a_.dims, a_.dims + a_.rank); }
  int64_t num_elements() const {
    int64_t n = 1;
    for (int32_t i = 0; i < a_.rank; ++i) n *= a_.dims[i];
    return n;
  }
  const void* data() const { return a_.data; }
  // The elements as T; T must match dtype() (uint8_t for DLRT_U8, float for DLRT_F32, ...).
  template <typename T>
  const T* data() const { return static_cast<const T*>(a_.data); }
  size_t bytes() const { return a_.bytes; }
  const dlrt_idx_array& c() const { return a_; }

 private:
  static dlrt_idx_array empty() {
    dlrt_idx_array a{};
    a.struct_size = DLRT_STRUCT_SIZE(dlrt_idx_array);
    return a;
  }
  dlrt_idx_array a_ = empty();
};

inline IdxArray read_idx(const std::string& path, uint64_t max_rows = 0) {
  return IdxArray(path, max_rows);
}

// A tensor of a safetensors file: a view (data and name point into the SafeTensors that made
// it, valid while that lives), or a tensor to write (data caller-owned).
struct SafeTensorView {
  std::string name;
  dlrt_dtype dtype = DLRT_DTYPE_INVALID;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
};

// An opened safetensors file (owner; move-only), every tensor's bytes in memory.
//   dlrt::SafeTensors ckpt = dlrt::SafeTensors::open("model.safetensors");
//   for (const auto& t : ckpt.entries()) ...;  ckpt.metadata("step")
class SafeTensors {
 public:
  static SafeTensors open(const std::string& path) {
    dlrt_safetensors* raw = nullptr;
    check(dlrt_safetensors_open(path.c_str(), &raw));
    return SafeTensors(raw);
  }

  size_t size() const { return dlrt_safetensors_count(get()); }
  SafeTensorView entry(size_t index) const {
    dlrt_safetensors_entry e{};
    e.struct_size = DLRT_STRUCT_SIZE(dlrt_safetensors_entry);
    check(dlrt_safetensors_get(get(), index, &e));
    return SafeTensorView{detail::str(e.name), static_cast<dlrt_dtype>(e.dtype),
                          std::vector<int64_t>(e.dims, e.dims + e.rank), e.data, e.bytes};
  }
  std::vector<SafeTensorView> entries() const {
    std::vector<SafeTensorView> out;
    for (size_t i = 0; i < size(); ++i) out.push_back(entry(i));
    return out;
  }
  // The index of tensor `name`, or nullopt.
  std::optional<size_t> find(const std::string& name) const {
    size_t index = 0;
    dlrt_status* s = dlrt_safetensors_find(get(), name.c_str(), &index);
    if (s != nullptr && dlrt_status_code(s) == DLRT_NOT_FOUND) {
      dlrt_status_free(s);
      return std::nullopt;
    }
    check(s);
    return index;
  }
  // Tensor `name`; throws Error (NOT_FOUND) when there is none.
  SafeTensorView at(const std::string& name) const {
    size_t index = 0;
    check(dlrt_safetensors_find(get(), name.c_str(), &index));
    return entry(index);
  }
  std::optional<std::string> metadata(const std::string& key) const {
    const char* v = dlrt_safetensors_metadata(get(), key.c_str());
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
  }
  // Every metadata pair, in header order.
  std::vector<std::pair<std::string, std::string>> metadata() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < dlrt_safetensors_metadata_count(get()); ++i) {
      std::string key = detail::str(dlrt_safetensors_metadata_key(get(), i));
      out.emplace_back(key, detail::str(dlrt_safetensors_metadata(get(), key.c_str())));
    }
    return out;
  }
  dlrt_safetensors* get() const { return handle_.get(); }

 private:
  explicit SafeTensors(dlrt_safetensors* raw) : handle_(raw) {}
  detail::Owner<dlrt_safetensors> handle_;
};

// Write `tensors` (in this order) and `metadata` to `path`, atomically (dlrt_safetensors_write).
inline void write_safetensors(
    const std::string& path, const std::vector<SafeTensorView>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  std::vector<dlrt_safetensors_entry> entries(tensors.size());
  std::vector<const dlrt_safetensors_entry*> ptrs(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafeTensorView& t = tensors[i];
    if (t.dims.size() > DLRT_MAX_RANK)
      throw Error(DLRT_INVALID_ARGUMENT, "tensor \"" + t.name + "\": rank " +
                                             std::to_string(t.dims.size()) +
                                             " is over DLRT_MAX_RANK");
    dlrt_safetensors_entry& e = entries[i];
    e = dlrt_safetensors_entry{};
    e.struct_size = DLRT_STRUCT_SIZE(dlrt_safetensors_entry);
    e.name = t.name.c_str();
    e.dtype = t.dtype;
    e.rank = static_cast<int32_t>(t.dims.size());
    for (size_t d = 0; d < t.dims.size(); ++d) e.dims[d] = t.dims[d];
    e.data = t.data;
    e.bytes = t.bytes;
    ptrs[i] = &e;
  }
  std::vector<const char*> keys, values;
  for (const auto& kv : metadata) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  check(dlrt_safetensors_write(path.c_str(), ptrs.empty() ? nullptr : ptrs.data(), ptrs.size(),
                               keys.empty() ? nullptr : keys.data(),
                               values.empty() ? nullptr : values.data(), keys.size()));
}

}  // namespace dlrt

#endif  // DLRT_DLRT_HPP_
