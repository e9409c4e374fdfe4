// c_api.cc: the exported functions of dlrt.h (status.h's are in status.cc, versions in
// version.cc). Each is a thin shell: check arguments, call the C++ core, and turn anything it
// throws into a dlrt_status* (`guarded`), so no exception ever reaches the caller.
//
// Versioned output structs are written with `write_out`: the full struct is built locally and
// at most the caller's struct_size bytes are copied, so an older caller's smaller struct is
// never overrun and its struct_size is left as it was.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <cstring>

#include "c_api_util.hpp"
#include "context.hpp"
#include "device_spec.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

using dlrt::core::Context;
using dlrt::core::fail;

namespace {

using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::core::write_out;

void check_index(size_t index, size_t count, const char* what) {
  if (index >= count)
    fail(DLRT_OUT_OF_RANGE,
         fmt::format("{} index {} is out of range; the context has {}", what, index, count));
}

void copy_bounded(char* dst, size_t cap, const std::string& src) {
  size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

}  // namespace

extern "C" {

// ---- device specs ---------------------------------------------------------------------------

DLRT_API dlrt_status* dlrt_device_spec_parse(const char* text, dlrt_device_spec* out) {
  return guarded([&] {
    require(out, "out");
    require(text, "text");
    dlrt::core::DeviceSpec spec = dlrt::core::parse_device_spec(text);
    dlrt_device_spec full{};
    full.struct_size = sizeof full;
    copy_bounded(full.job, sizeof full.job, spec.job);  // parse bounds the lengths
    full.replica = spec.replica;
    full.task = spec.task;
    copy_bounded(full.type, sizeof full.type, spec.type);
    full.index = spec.index;
    write_out(out, full, "out");
  });
}

DLRT_API size_t dlrt_device_spec_format(const dlrt_device_spec* spec, char* buf, size_t buf_size) {
  try {
    if (spec == nullptr) return 0;
    // Read only as far as the caller's struct reaches; later fields stay absent.
    dlrt_device_spec s{};
    s.replica = s.task = s.index = -1;
    size_t n = spec->struct_size < sizeof s ? spec->struct_size : sizeof s;
    std::memcpy(&s, spec, n);
    dlrt::core::DeviceSpec d;
    d.job.assign(s.job, strnlen(s.job, sizeof s.job));
    d.replica = s.replica;
    d.task = s.task;
    d.type.assign(s.type, strnlen(s.type, sizeof s.type));
    d.index = s.index;
    std::string text = dlrt::core::format_device_spec(d);
    // snprintf's contract: write what fits (always NUL-terminated), return the full length.
    if (buf != nullptr && buf_size > 0) copy_bounded(buf, buf_size, text);
    return text.size();
  } catch (...) {
    return 0;
  }
}

// ---- contexts -------------------------------------------------------------------------------

DLRT_API void dlrt_context_options_init(dlrt_context_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->search_default_paths = 1;
  options->log_level = -1;
  options->log_device_placement = -1;
  options->soft_placement = -1;
  options->memory_growth = -1;  // memory_fraction 0 (= 0.9) and gpu_memory_limit 0 (= env)
}

DLRT_API dlrt_status* dlrt_context_create(const dlrt_context_options* options,
                                          dlrt_context** out_context) {
  if (out_context != nullptr) *out_context = nullptr;
  return guarded([&] {
    require(out_context, "out_context");
    *out_context = new dlrt_context(options);
  });
}

DLRT_API void dlrt_context_destroy(dlrt_context* context) {
  try {
    delete context;
  } catch (...) {  // destructors do not throw; this is the belt to their braces
  }
}

// ---- plugins --------------------------------------------------------------------------------

DLRT_API size_t dlrt_context_plugin_count(const dlrt_context* context) {
  return context == nullptr ? 0 : context->plugins().size();
}

DLRT_API dlrt_status* dlrt_context_plugin_info(const dlrt_context* context, size_t index,
                                               dlrt_plugin_info* out) {
  return guarded([&] {
    require(context, "context");
    require(out, "out");
    check_index(index, context->plugins().size(), "plugin");
    const dlrt::core::Plugin& p = *context->plugins()[index];
    dlrt_plugin_info full{};
    full.struct_size = sizeof full;
    full.path = p.path.c_str();
    full.name = p.name.c_str();
    full.platform = p.platform.c_str();
    full.version = p.version.c_str();
    full.state = p.state;
    full.phase = p.phase;
    full.abi_major = p.abi_major;
    full.abi_minor = p.abi_minor;
    full.error_code = p.code;
    full.device_count = p.device_count;
    full.error = p.error.c_str();
    write_out(out, full, "out");
  });
}

// ---- devices --------------------------------------------------------------------------------

DLRT_API size_t dlrt_context_device_count(const dlrt_context* context) {
  return context == nullptr ? 0 : context->registry().devices().size();
}

DLRT_API dlrt_status* dlrt_context_device_info(const dlrt_context* context, size_t index,
                                               dlrt_device_info* out) {
  return guarded([&] {
    require(context, "context");
    require(out, "out");
    check_index(index, context->registry().devices().size(), "device");
    const dlrt::core::LogicalDevice& d = context->registry().devices()[index];
    const dlrt::core::Plugin& p = context->plugin_of(index);
    const dlrt::core::DeviceDesc& desc = context->desc_of(index);
    dlrt_device_info full{};
    full.struct_size = sizeof full;
    full.name = d.name.c_str();
    full.full_name = d.full_name.c_str();
    full.type = d.type.c_str();
    full.index = d.index;
    full.device_class = desc.device_class;
    full.platform = p.platform.c_str();
    full.plugin = p.name.c_str();
    full.plugin_ordinal = desc.ordinal;
    full.logical_index = d.logical_index;
    full.logical_count = d.logical_count;
    full.memory_total = desc.memory_total;
    full.memory_limit = d.memory_limit;
    full.model = desc.name.c_str();
    full.vendor = desc.vendor.c_str();
    full.pci_bus_id = desc.pci_bus_id.c_str();
    full.uuid = desc.uuid.c_str();
    full.compute_capability_major = desc.compute_capability_major;
    full.compute_capability_minor = desc.compute_capability_minor;
    full.core_count = desc.core_count;
    full.driver_version = desc.driver_version.c_str();
    full.library_versions = desc.library_versions.c_str();
    full.peak_gflops = desc.peak_gflops;
    full.memory_bandwidth_gbps = desc.memory_bandwidth_gbps;
    full.launch_overhead_us = desc.launch_overhead_us;
    full.num_attrs = desc.attr_ptrs.size();
    full.attrs = desc.attr_ptrs.empty() ? nullptr : desc.attr_ptrs.data();
    write_out(out, full, "out");
  });
}

DLRT_API dlrt_status* dlrt_context_device_memory_free(dlrt_context* context, size_t index,
                                                      uint64_t* out_free) {
  if (out_free != nullptr) *out_free = 0;
  return guarded([&] {
    require(context, "context");
    require(out_free, "out_free");
    auto [api, device] = context->device_handle(index);
    uint64_t free_bytes = 0, total = 0;
    dlrt::core::plugin_call(
        [&] { return context->registry().devices()[index].name + ": memory_info failed"; },
        [&] { return api->memory_info(device, &free_bytes, &total); });
    *out_free = free_bytes;
  });
}

DLRT_API dlrt_status* dlrt_context_find_device(const dlrt_context* context, const char* spec,
                                               size_t* out_index) {
  if (out_index != nullptr) *out_index = 0;
  return guarded([&] {
    require(context, "context");
    require(spec, "spec");
    require(out_index, "out_index");
    try {
      *out_index = context->registry().find(spec);
    } catch (const dlrt::core::Error& e) {
      // A name that matches no device: say why devices may be missing (no driver, ...).
      const std::string why = context->why_devices_missing();
      if (e.code() != DLRT_NOT_FOUND || why.empty()) throw;
      fail(e.code(), fmt::format("{}; {}", e.message(), why));
    }
  });
}

// ---- settings -------------------------------------------------------------------------------

DLRT_API size_t dlrt_context_setting_count(const dlrt_context* context) {
  return context == nullptr ? 0 : context->settings().all().size();
}

DLRT_API dlrt_status* dlrt_context_setting(const dlrt_context* context, size_t index,
                                           dlrt_setting* out) {
  return guarded([&] {
    require(context, "context");
    require(out, "out");
    check_index(index, context->settings().all().size(), "setting");
    const dlrt::core::Setting& s = context->settings().all()[index];
    dlrt_setting full{};
    full.struct_size = sizeof full;
    full.name = s.name.c_str();
    full.value = s.value.c_str();
    full.source = s.source;
    full.help = s.help.c_str();
    write_out(out, full, "out");
  });
}

}  // extern "C"
