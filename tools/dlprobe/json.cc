// json.cc: `dlprobe --json`, the report for scripts and tests. Schema version 1:
//
// {
//   "schema_version": 1,
//   "dlrt_version": "0.1.0",
//   "abi": {"major": 1, "minor": 0, "floor": 0},       // what this libdlrt speaks/accepts
//   "plugins": [{
//     "name", "platform", "version", "path",            // "" when the plugin never said
//     "status": "loaded" | "refused" | "failed",
//     "phase": "search" | "open" | "abi" | "create" | "devices" | "ready",
//     "abi": "1.0" | null,                              // null: never declared
//     "error": "...",                                   // "" when none; for a loaded plugin,
//     "error_code": "UNAVAILABLE",                      //   why it has no devices
//     "device_count": 1                                 // before visibility filtering
//   }],
//   "devices": [{
//     "name": "/device:CPU:0", "full_name", "type": "CPU", "class": "CPU"|"GPU"|"ACCEL"|...,
//     "platform", "plugin", "ordinal",                  // ordinal inside its plugin
//     "memory_total", "memory_free" (null + "memory_free_error" when unknown),
//     "memory_limit",                                   // bytes; 0 = none
//     "attributes": {every dlrt_device_info field, then every plugin attribute by name}
//   }],
//   "settings": [{"name", "value", "source", "help"}], // only with --env
//   "ops": [{                                          // only with --ops
//     "op": "conv2d", "doc": "...",
//     "devices": {                                     // every device, by name
//       "/device:CPU:0": {"supported": true},
//       "/device:REF:0": {"supported": false, "code": "UNIMPLEMENTED", "reason": "..."}
//     }
//   }],
//   "onnx_ops": [{                                     // only with --ops --onnx
//     "onnx_op": "Conv", "maps_to": "...", "dlrt_ops": ["conv2d_bias_act", ...],
//     "devices": {"/device:CPU:0": {"supported": true, "missing": []}, ...}
//   }]
// }
// Adding a key is not a schema change; renaming or retyping one bumps schema_version.
#include <string>

#include "probe.hpp"

namespace dlprobe {
namespace {

using json = nlohmann::ordered_json;

json attr_value(const dlrt::Attr& a) {
  switch (a.type) {
    case DLRT_ATTR_INT:
      return a.i;
    case DLRT_ATTR_FLOAT:
      return a.f;
    case DLRT_ATTR_STRING:
      return a.s;
    case DLRT_ATTR_BOOL:
      return a.i != 0;
    case DLRT_ATTR_DTYPE:
      return dlrt::dtype_name(static_cast<dlrt_dtype>(a.i));
    case DLRT_ATTR_INTS:
      return a.ints;
    case DLRT_ATTR_FLOATS:
      return a.floats;
    case DLRT_ATTR_NONE:
      break;
  }
  return nullptr;
}

json plugin_json(const dlrt::PluginInfo& p) {
  const std::string abi = abi_text(p);
  return {
      {"name", p.name},
      {"platform", p.platform},
      {"version", p.version},
      {"path", p.path},
      {"status", dlrt::plugin_state_name(p.state)},
      {"phase", dlrt::plugin_phase_name(p.phase)},
      {"abi", abi.empty() ? json(nullptr) : json(abi)},
      {"error", p.error},
      {"error_code", dlrt::code_name(p.error_code)},
      {"device_count", p.device_count},
  };
}

json device_json(const Device& dev) {
  const dlrt::DeviceInfo& d = dev.info;
  json attributes = {
      {"index", d.index},
      {"logical_index", d.logical_index},
      {"logical_count", d.logical_count},
      {"model", d.model},
      {"vendor", d.vendor},
      {"pci_bus_id", d.pci_bus_id},
      {"uuid", d.uuid},
      {"compute_capability_major", d.compute_capability_major},
      {"compute_capability_minor", d.compute_capability_minor},
      {"core_count", d.core_count},
      {"driver_version", d.driver_version},
      {"library_versions", d.library_versions},
      {"peak_gflops", d.peak_gflops},
      {"memory_bandwidth_gbps", d.memory_bandwidth_gbps},
      {"launch_overhead_us", d.launch_overhead_us},
  };
  // Plugin attributes come after the fixed fields; one that reuses a fixed field's name
  // is kept under "attr.<name>" rather than silently replacing it.
  for (const dlrt::Attr& a : d.attrs) {
    const std::string key = attributes.contains(a.name) ? "attr." + a.name : a.name;
    attributes[key] = attr_value(a);
  }
  json j = {
      {"name", d.name},
      {"full_name", d.full_name},
      {"type", d.type},
      {"class", dlrt::device_class_name(d.device_class)},
      {"platform", d.platform},
      {"plugin", d.plugin},
      {"ordinal", d.plugin_ordinal},
      {"memory_total", d.memory_total},
      {"memory_free", dev.memory_free ? json(*dev.memory_free) : json(nullptr)},
      {"memory_limit", d.memory_limit},
      {"attributes", std::move(attributes)},
  };
  if (!dev.memory_free_error.empty()) j["memory_free_error"] = dev.memory_free_error;
  return j;
}

}  // namespace

json render_json(const Snapshot& s, bool with_settings) {
  json j = {
      {"schema_version", 1},
      {"dlrt_version", s.dlrt_version},
      {"abi", {{"major", s.abi.major}, {"minor", s.abi.minor}, {"floor", s.abi.floor}}},
      {"plugins", json::array()},
      {"devices", json::array()},
  };
  for (const dlrt::PluginInfo& p : s.plugins) j["plugins"].push_back(plugin_json(p));
  for (const Device& d : s.devices) j["devices"].push_back(device_json(d));
  if (with_settings) {
    j["settings"] = json::array();
    for (const dlrt::Setting& st : s.settings)
      j["settings"].push_back({{"name", st.name},
                               {"value", st.value},
                               {"source", dlrt::setting_source_name(st.source)},
                               {"help", st.help}});
  }
  if (s.with_ops) {
    j["ops"] = json::array();
    for (const OpRow& op : s.ops) {
      json devices = json::object();
      for (size_t i = 0; i < op.devices.size() && i < s.devices.size(); ++i) {
        const dlrt::OpSupport& a = op.devices[i];
        devices[s.devices[i].info.name] = a.supported ? json{{"supported", true}}
                                                      : json{{"supported", false},
                                                             {"code", dlrt::code_name(a.code)},
                                                             {"reason", a.reason}};
      }
      j["ops"].push_back({{"op", op.name}, {"doc", op.doc}, {"devices", std::move(devices)}});
    }
  }
  if (s.with_onnx) {
    j["onnx_ops"] = json::array();
    for (const OnnxRow& op : s.onnx_ops) {
      json devices = json::object();
      for (size_t i = 0; i < op.missing.size() && i < s.devices.size(); ++i)
        devices[s.devices[i].info.name] = {{"supported", op.missing[i].empty()},
                                           {"missing", op.missing[i]}};
      j["onnx_ops"].push_back({{"onnx_op", op.onnx_op},
                               {"maps_to", op.maps_to},
                               {"dlrt_ops", op.dlrt_ops},
                               {"devices", std::move(devices)}});
    }
  }
  return j;
}

}  // namespace dlprobe
