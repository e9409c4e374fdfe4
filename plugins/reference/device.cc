// device.cc: the reference plugin's devices: descriptions (built once per plugin instance, so
// every pointer handed out lives until plugin_destroy), count, open and close.
//
// A reference device is a budget of host memory plus a name; opening one starts nothing.
#include <memory>
#include <string>

#include "reference.hpp"
#include "versioned.hpp"

// 1: this plugin's devices are the numerical oracle (device attribute "oracle"); the mock
// test device built from this code (tests/mock_device) defines it 0.
#ifndef DLRT_REFERENCE_IS_ORACLE
#define DLRT_REFERENCE_IS_ORACLE 1
#endif

namespace dlrt::reference {

using plugin::fail;
using plugin::guard;

namespace {

// `value` must live as long as the plugin: a literal, or a string inside the Device/plugin.
dlrt_attr string_attr(const char* name, const char* value) {
  dlrt_attr a{};
  a.struct_size = sizeof(dlrt_attr);
  a.name = name;
  a.type = DLRT_ATTR_STRING;
  a.s = value;
  return a;
}

dlrt_attr int_attr(const char* name, int64_t value, dlrt_attr_type type = DLRT_ATTR_INT) {
  dlrt_attr a{};
  a.struct_size = sizeof(dlrt_attr);
  a.name = name;
  a.type = type;
  a.i = value;
  return a;
}

}  // namespace

void build_devices(dlrt_plugin* p) {
  const Config& c = p->config;
  for (int32_t i = 0; i < c.num_devices; ++i) {
    auto d = std::make_unique<Device>();
    d->ordinal = i;
    d->type = c.device_type;
    d->label = c.device_type + ":" + std::to_string(i);
    d->name = "dlrt reference device";
    d->vendor = "dlrt";
    d->library_versions = "";
    d->class_name = c.device_class_name;
    d->limit = c.memory_limit;

    // Typed attributes: enough for dlprobe and for tests to see how the device was configured.
    // (d->attrs is sized before the pointers are taken, so they stay valid.)
    d->attrs.push_back(string_attr("device_class", d->class_name.c_str()));
    d->attrs.push_back(
        int_attr("memory_limit_from_option", c.memory_limit_from_option ? 1 : 0, DLRT_ATTR_BOOL));
    d->attrs.push_back(int_attr("ops_restricted", c.ops_restricted ? 1 : 0, DLRT_ATTR_BOOL));
    d->attrs.push_back(string_attr("ops", c.ops_restricted ? p->ops_text.c_str() : "all"));
    d->attrs.push_back(string_attr("execution", "synchronous"));
    // docs/ops.md "16-bit floats": f32/f64 kernels of its own; f16/bf16 ops run on f64 copies
    // and are rounded once at the end.
    d->attrs.push_back(string_attr("native_dtypes", "f32,f64"));
    d->attrs.push_back(string_attr("converted_dtypes", "f16,bf16"));
    // A numerical oracle (plugin.h, "Device attributes the host reads"): automatic placement
    // never picks it unless the user names it. The mock test device, built from this code,
    // is not one.
    d->attrs.push_back(int_attr("oracle", DLRT_REFERENCE_IS_ORACLE, DLRT_ATTR_BOOL));
    for (const dlrt_attr& a : d->attrs) d->attr_ptrs.push_back(&a);

    dlrt_device_desc& desc = d->desc;
    desc.struct_size = sizeof(dlrt_device_desc);
    desc.device_class = c.device_class;
    desc.ordinal = i;
    desc.type = d->type.c_str();
    desc.name = d->name.c_str();
    desc.vendor = d->vendor.c_str();
    desc.pci_bus_id = "";
    desc.uuid = "";
    desc.core_count = 1;  // every kernel is one plain loop on the calling thread
    desc.memory_total = d->limit == UINT64_MAX ? 0 : d->limit;
    desc.driver_version = "";
    desc.library_versions = d->library_versions.c_str();
    desc.peak_gflops = 0;  // unknown, and irrelevant: nobody places work here for speed
    desc.memory_bandwidth_gbps = 0;
    desc.launch_overhead_us = 0;
    desc.num_attrs = d->attr_ptrs.size();
    desc.attrs = d->attr_ptrs.data();
    p->devices.push_back(std::move(d));
  }
}

Device& device_at(dlrt_plugin* p, int32_t ordinal) {
  plugin::require(p, "plugin");
  if (ordinal < 0 || ordinal >= static_cast<int32_t>(p->devices.size()))
    fail(DLRT_INVALID_ARGUMENT,
         prefix() + "device ordinal " + std::to_string(ordinal) + " is out of range, expected 0.." +
             std::to_string(p->devices.size() - 1) +
             " (option num_devices=" + std::to_string(p->devices.size()) + ")");
  return *p->devices[static_cast<size_t>(ordinal)];
}

dlrt_status* device_count(dlrt_plugin* p, int32_t* out_count) {
  if (out_count != nullptr) *out_count = 0;
  return guard([&] {
    plugin::require(p, "plugin");
    plugin::require(out_count, "out_count");
    *out_count = static_cast<int32_t>(p->devices.size());
  });
}

dlrt_status* device_get_desc(dlrt_plugin* p, int32_t ordinal, dlrt_device_desc* out) {
  return guard([&] {
    Device& d = device_at(p, ordinal);
    plugin::write_versioned(out, d.desc, "out");
  });
}

dlrt_status* device_open(dlrt_plugin* p, int32_t ordinal, dlrt_device** out_device) {
  if (out_device != nullptr) *out_device = nullptr;
  return guard([&] {
    plugin::require(out_device, "out_device");
    Device& d = device_at(p, ordinal);
    *out_device = new dlrt_device{p, &d};
  });
}

// Allocations made through the handle stay accounted to the device (they belong to it, not to
// the handle); plugin_destroy releases any the host forgot.
void device_close(dlrt_device* device) {
  plugin::guard_void("device_close", [&] { delete device; });
}

}  // namespace dlrt::reference
