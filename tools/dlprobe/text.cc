// text.cc: dlprobe's default, human-readable report. Up to four sections:
//   Plugins   one row per plugin file found (loaded or not), its reason on the next line
//   Devices   one row per visible device, with memory and the capabilities that matter
//   Ops       (--ops) op x device matrix, ✓ or ✗, then one line per ✗ with the device's reason
//   ONNX ops  (--ops --onnx) each ONNX op the importer converts, what it becomes, and per
//             device ✓ (every dlrt op it names runs there) or ✗ with the ones that do not
//   Settings  (--env) every setting, its effective value and where that came from
// The layout is for people; scripts use --json, whose schema is versioned.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "probe.hpp"

namespace dlprobe {
namespace {

// Left-aligned columns sized to their widest cell; the last column is not padded.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // A line printed under the previous row, indented, outside the columns.
  void note(std::string text) { notes_[rows_.size() - 1].push_back(std::move(text)); }

  std::string render(const std::string& indent) const {
    std::vector<size_t> width;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], columns(row[c]));
    }
    std::string out;
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = indent;
      for (size_t c = 0; c < rows_[r].size(); ++c) {
        line += rows_[r][c];
        if (c + 1 < rows_[r].size()) line += std::string(width[c] - columns(rows_[r][c]) + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      auto it = notes_.find(r);
      if (it != notes_.end())
        for (const std::string& n : it->second) out += indent + "    " + n + "\n";
    }
    return out;
  }

 private:
  // Terminal columns of UTF-8 text: one per code point (the marks ✓ ✗ are three bytes).
  static size_t columns(const std::string& s) {
    size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
  }

  std::vector<std::vector<std::string>> rows_;
  std::map<size_t, std::vector<std::string>> notes_;
};

std::string bytes_text(uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string memory_text(const Device& d) {
  std::string total = d.info.memory_total ? bytes_text(d.info.memory_total) : "?";
  std::string free = d.memory_free ? bytes_text(*d.memory_free) : "?";
  std::string text = total + " / " + free + " free";
  if (d.info.memory_limit) text += ", limit " + bytes_text(d.info.memory_limit);
  return text;
}

// The few properties that tell devices apart: cores or SMs, compute capability, ISA, and the
// libraries the plugin runs on. Everything else is in --json.
std::string capabilities_text(const dlrt::DeviceInfo& d) {
  std::vector<std::string> parts;
  if (d.core_count > 0)
    parts.push_back(fmt::format("{} {}{}", d.core_count,
                                d.device_class == DLRT_DEVICE_CLASS_GPU ? "SM" : "core",
                                d.core_count == 1 ? "" : "s"));
  if (d.compute_capability_major > 0)
    parts.push_back(
        fmt::format("cc {}.{}", d.compute_capability_major, d.compute_capability_minor));
  if (auto isa = d.attr("isa"); isa && isa->type == DLRT_ATTR_STRING && !isa->s.empty())
    parts.push_back("isa " + isa->s);
  // docs/ops.md "16-bit floats": dtypes with kernels of their own, and those run through
  // wider ones ("dtypes f32,bf16 (f16,bf16 converted)").
  if (auto native = d.attr("native_dtypes"); native && native->type == DLRT_ATTR_STRING) {
    std::string text = "dtypes " + native->s;
    if (auto conv = d.attr("converted_dtypes"); conv && conv->type == DLRT_ATTR_STRING)
      text += " (" + conv->s + " converted)";
    parts.push_back(text);
  }
  if (d.logical_count > 1)
    parts.push_back(fmt::format("logical {}/{}", d.logical_index + 1, d.logical_count));
  if (!d.library_versions.empty()) parts.push_back(d.library_versions);
  if (!d.driver_version.empty()) parts.push_back(d.driver_version);
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out.empty() ? "-" : out;
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

// Where a plugin chooses between kernels by measuring them (the cpu plugin's `calibration`
// and `kernel_choices` attributes, plugins/cpu/kernel_choices.hpp): how the choices were made,
// then one line per choice with both kernels' times.
void add_kernel_choice_notes(Table& t, const dlrt::DeviceInfo& d) {
  auto how = d.attr("calibration");
  if (!how || how->type != DLRT_ATTR_STRING || how->s.empty()) return;
  t.note("kernel choices: " + how->s);
  auto choices = d.attr("kernel_choices");
  if (!choices || choices->type != DLRT_ATTR_STRING) return;
  const std::string& all = choices->s;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find("; ", start);
    if (end == std::string::npos) end = all.size();
    t.note("  " + all.substr(start, end - start));
    start = end + 2;
  }
}

// The op x device matrix: ✓ where the device runs the op on its example operands, ✗ where
// it does not, and below the table one line per ✗ with the device's own reason.
std::string render_ops(const Snapshot& s) {
  std::string out = fmt::format(
      "\nOps ({} ops x {} devices; ✓ runs the op's f32 example, ✗ "
      "does not)\n",
      s.ops.size(), s.devices.size());
  if (s.devices.empty()) return out + "  no device to ask\n";
  std::vector<std::string> header = {"OP"};
  for (const Device& d : s.devices) header.push_back(d.info.name);
  Table t(std::move(header));
  std::vector<std::string> reasons;
  for (const OpRow& op : s.ops) {
    std::vector<std::string> row = {op.name};
    for (size_t i = 0; i < op.devices.size(); ++i) {
      const dlrt::OpSupport& a = op.devices[i];
      row.push_back(a.supported ? "✓" : "✗");
      // The library's reason already starts "<op> on <device>: " for a plugin's "no".
      if (!a.supported) reasons.push_back(dlrt::code_name(a.code) + ": " + a.reason);
    }
    t.add(std::move(row));
  }
  out += t.render("  ");
  if (!reasons.empty()) {
    out += fmt::format("  Not supported ({}):\n", reasons.size());
    for (const std::string& r : reasons) out += "    " + r + "\n";
  }
  return out;
}

// The ONNX converters x devices: ✓ where every dlrt op a converter names runs on the device
// ("host" where it names none: folded on the host at import), ✗ with the ops that do not.
std::string render_onnx(const Snapshot& s) {
  std::string out = fmt::format(
      "\nONNX ops ({} with a converter x {} devices; ✓ the dlrt ops it becomes run there, "
      "host: folded at import)\n",
      s.onnx_ops.size(), s.devices.size());
  if (s.devices.empty()) return out + "  no device to ask\n";
  std::vector<std::string> header = {"ONNX OP"};
  for (const Device& d : s.devices) header.push_back(d.info.name);
  header.push_back("BECOMES");
  Table t(std::move(header));
  for (const OnnxRow& op : s.onnx_ops) {
    std::vector<std::string> row = {op.onnx_op};
    for (const std::vector<std::string>& missing : op.missing) {
      std::string cell = op.dlrt_ops.empty() ? "host" : missing.empty() ? "✓" : "✗";
      for (size_t k = 0; k < missing.size(); ++k) cell += (k ? "," : " ") + missing[k];
      row.push_back(cell);
    }
    row.push_back(op.maps_to);
    t.add(std::move(row));
  }
  return out + t.render("  ");
}

}  // namespace

std::string render_text(const Snapshot& s, bool with_settings) {
  std::string out = fmt::format("dlrt {}, plugin ABI {}.{} (accepts plugins of ABI {}.{}+)\n",
                                s.dlrt_version, s.abi.major, s.abi.minor, s.abi.major, s.abi.floor);
#if defined(DLRT_DLPROBE_NO_ONNX)
  // tools/dlprobe/CMakeLists.txt defines it when libdlrt is built with DLRT_BUILD_ONNX off.
  out += "ONNX import/export: not in this build (DLRT_BUILD_ONNX=OFF: no protobuf/ONNX library "
         "for the target, e.g. the Windows cross-build; docs/windows.md)\n";
#endif

  out += fmt::format("\nPlugins ({})\n", s.plugins.size());
  if (s.plugins.empty()) {
    out +=
        "  none found (searched the --plugin-path folders, DLRT_PLUGIN_PATH and the "
        "install's lib/dlrt/plugins)\n";
  } else {
    Table t({"NAME", "PLATFORM", "ABI", "STATUS", "DEVICES", "PATH"});
    for (const dlrt::PluginInfo& p : s.plugins) {
      std::string status = dlrt::plugin_state_name(p.state);
      if (!p.loaded()) status += " (" + dlrt::plugin_phase_name(p.phase) + ")";
      t.add({or_dash(p.name), or_dash(p.platform), or_dash(abi_text(p)), status,
             p.loaded() ? std::to_string(p.device_count) : "-", p.path});
      // The reason: why it was refused or failed, or why a loaded plugin has no devices.
      if (!p.error.empty()) t.note("reason: " + dlrt::code_name(p.error_code) + ": " + p.error);
    }
    out += t.render("  ");
  }

  out += fmt::format("\nDevices ({})\n", s.devices.size());
  if (s.devices.empty()) {
    out += "  none visible\n";
  } else {
    Table t({"NAME", "CLASS", "PLATFORM", "MODEL", "MEMORY (total / free)", "CAPABILITIES"});
    for (const Device& d : s.devices) {
      t.add({d.info.name, dlrt::device_class_name(d.info.device_class), d.info.platform,
             or_dash(d.info.model), memory_text(d), capabilities_text(d.info)});
      if (!d.memory_free_error.empty()) t.note("free memory unknown: " + d.memory_free_error);
      add_kernel_choice_notes(t, d.info);
    }
    out += t.render("  ");
  }

  if (s.with_ops) out += render_ops(s);
  if (s.with_onnx) out += render_onnx(s);

  if (with_settings) {
    out += fmt::format("\nSettings ({})\n", s.settings.size());
    Table t({"NAME", "VALUE", "SOURCE", "WHAT IT DOES"});
    for (const dlrt::Setting& st : s.settings)
      t.add({st.name, st.value.empty() ? "(unset)" : st.value, dlrt::setting_source_name(st.source),
             st.help});
    out += t.render("  ");
  }
  return out;
}

}  // namespace dlprobe
