// probe.hpp: what dlprobe learns from one dlrt::Context, and the ways it reports it.
//
// collect() asks the context everything once (plugins, devices, free memory, settings and,
// with --ops, every op on every device) and
// keeps the answers as plain values; the renderers (text.cc, json.cc) and the --require
// check only read that snapshot, so every output of one run describes the same state.
// Not a library: internal to tools/dlprobe.
#pragma once

#include <dlrt/dlrt.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlprobe {

struct Device {
  dlrt::DeviceInfo info;
  std::optional<uint64_t> memory_free;  // absent when the plugin could not say
  std::string memory_free_error;        // why it could not ("" otherwise)
};

// One op of the registry and each device's answer for it (dlrt_op_probe: the op on its
// example operands), in the order of Snapshot::devices.
struct OpRow {
  std::string name;
  std::string doc;
  std::vector<dlrt::OpSupport> devices;
};

// One ONNX op the importer converts (dlrt/onnx_ops.h), the dlrt ops its description names,
// and per device (Snapshot::devices order) those of them the device does not run (empty: all
// run there, so the converted node can be placed on it).
struct OnnxRow {
  std::string onnx_op;
  std::string maps_to;
  std::vector<std::string> dlrt_ops;
  std::vector<std::vector<std::string>> missing;
};

struct Snapshot {
  std::string dlrt_version;
  dlrt::AbiVersion abi;
  std::vector<dlrt::PluginInfo> plugins;
  std::vector<Device> devices;
  std::vector<dlrt::Setting> settings;  // filled only when asked for (--env)
  bool with_ops = false;                // --ops: `ops` is filled and the renderers show it
  std::vector<OpRow> ops;
  bool with_onnx = false;               // --ops --onnx: `onnx_ops` is filled (from `ops`)
  std::vector<OnnxRow> onnx_ops;
};

// Queries `context`. Throws dlrt::Error only for a failure of the library itself (an index
// it just counted being out of range); a device whose free memory cannot be read is recorded.
// With `with_ops`, asks every device about every op (a "no" is recorded with its reason).
// With `with_onnx` (needs `with_ops`), also lists the ONNX converters with each device's
// answer for the dlrt ops they name.
Snapshot collect(const dlrt::Context& context, bool with_settings, bool with_ops = false,
                 bool with_onnx = false);

// The human-readable report: plugins, devices, the op x device matrix when the snapshot has
// ops, and, when `with_settings`, settings.
std::string render_text(const Snapshot& snapshot, bool with_settings);

// The machine-readable report (schema_version 1, see json.cc for every field); "ops" only
// when the snapshot has them.
nlohmann::ordered_json render_json(const Snapshot& snapshot, bool with_settings);

// --require PLATFORM: "" when at least one visible device runs on `platform`, otherwise a
// message naming the platform and saying why, from the plugins' own reasons.
std::string unmet_requirement(const Snapshot& snapshot, const std::string& platform);

// "1.0", or "" when the plugin never declared an ABI (it failed before dlrt_plugin_init).
std::string abi_text(const dlrt::PluginInfo& plugin);

}  // namespace dlprobe
