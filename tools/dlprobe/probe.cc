// probe.cc: taking the snapshot, and deciding whether a required platform is usable.
#include "probe.hpp"

#include <dlrt/onnx_ops.h>

#include <algorithm>
#include <utility>

namespace dlprobe {

Snapshot collect(const dlrt::Context& context, bool with_settings, bool with_ops,
                 bool with_onnx) {
  Snapshot s;
  s.dlrt_version = dlrt::version();
  s.abi = dlrt::abi_version();
  s.plugins = context.plugins();
  const size_t n = context.device_count();
  for (size_t i = 0; i < n; ++i) {
    Device d;
    d.info = context.device(i);
    // Free memory is a live query of the plugin; one device failing it must not hide the
    // others, so the error becomes part of the report.
    try {
      d.memory_free = context.device_memory_free(i);
    } catch (const dlrt::Error& e) {
      d.memory_free_error = e.what();
    }
    s.devices.push_back(std::move(d));
  }
  if (with_settings) s.settings = context.settings();
  if (with_ops) {
    s.with_ops = true;
    for (const dlrt::OpInfo& op : dlrt::op_list()) {
      OpRow row{op.name, op.doc, {}};
      for (size_t i = 0; i < n; ++i) row.devices.push_back(context.op_probe(op.name, i));
      s.ops.push_back(std::move(row));
    }
  }
  if (with_ops && with_onnx) {
    s.with_onnx = true;
    for (size_t i = 0; i < dlrt_onnx_op_count(); ++i) {
      OnnxRow row{dlrt_onnx_op_name(i), dlrt_onnx_op_maps_to(i), {}, {}};
      for (size_t k = 0; k < dlrt_onnx_op_dlrt_op_count(i); ++k)
        row.dlrt_ops.push_back(dlrt_onnx_op_dlrt_op(i, k));
      row.missing.resize(n);
      for (const std::string& op : row.dlrt_ops) {
        auto it = std::find_if(s.ops.begin(), s.ops.end(),
                               [&](const OpRow& r) { return r.name == op; });
        for (size_t d = 0; d < n; ++d)
          if (it == s.ops.end() || !it->devices[d].supported) row.missing[d].push_back(op);
      }
      s.onnx_ops.push_back(std::move(row));
    }
  }
  return s;
}

std::string abi_text(const dlrt::PluginInfo& plugin) {
  if (plugin.abi_major == 0 && plugin.abi_minor == 0) return "";
  return std::to_string(plugin.abi_major) + "." + std::to_string(plugin.abi_minor);
}

namespace {

// One line about a plugin that could have offered `platform` but offers no visible device.
std::string why_not(const dlrt::PluginInfo& p, size_t visible) {
  const std::string who =
      "plugin " + (p.name.empty() ? p.path : "'" + p.name + "' (" + p.path + ")");
  if (!p.loaded()) {
    return who + (p.state == DLRT_PLUGIN_REFUSED ? " was refused" : " failed") + " in phase " +
           dlrt::plugin_phase_name(p.phase) + ": " + dlrt::code_name(p.error_code) + ": " + p.error;
  }
  if (p.device_count > 0 && visible == 0) {
    return who + " has " + std::to_string(p.device_count) +
           " device(s) but none is visible (check DLRT_VISIBLE_DEVICES / --visible-devices)";
  }
  if (!p.error.empty()) {
    return who + " loaded with no devices: " + dlrt::code_name(p.error_code) + ": " + p.error;
  }
  return who + " loaded but reports no devices and no reason";
}

}  // namespace

std::string unmet_requirement(const Snapshot& s, const std::string& platform) {
  const bool usable = std::any_of(s.devices.begin(), s.devices.end(),
                                  [&](const Device& d) { return d.info.platform == platform; });
  if (usable) return "";

  std::string msg = "required platform '" + platform + "' has no usable device";
  std::vector<std::string> reasons;
  for (const dlrt::PluginInfo& p : s.plugins) {
    if (p.platform != platform) continue;
    const size_t visible =
        static_cast<size_t>(std::count_if(s.devices.begin(), s.devices.end(), [&](const Device& d) {
          return d.info.plugin == p.name;
        }));
    reasons.push_back(why_not(p, visible));
  }
  if (reasons.empty()) {
    // No plugin claimed the platform. A plugin that failed before naming itself (e.g. its
    // vendor library is missing, so dlopen failed) may be the one: show those too.
    msg += ": no plugin found has platform '" + platform + "'";
    std::vector<std::string> platforms;
    for (const dlrt::PluginInfo& p : s.plugins)
      if (!p.platform.empty()) platforms.push_back(p.platform);
    msg += platforms.empty() ? " (no plugin named its platform)" : " (platforms found:";
    for (size_t i = 0; i < platforms.size(); ++i)
      msg += (i == 0 ? " " : ", ") + platforms[i] + (i + 1 == platforms.size() ? ")" : "");
    for (const dlrt::PluginInfo& p : s.plugins)
      if (p.platform.empty() && !p.loaded()) reasons.push_back(why_not(p, 0));
  }
  for (const std::string& r : reasons) msg += "\n  " + r;
  return msg;
}

}  // namespace dlprobe
