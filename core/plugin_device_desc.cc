// plugin_device_desc.cc: copy_desc, a plugin's device description deep-copied
// (plugin_device_desc.hpp).
#include "plugin_device_desc.hpp"

#include <cctype>
#include <cstring>

namespace dlrt::core {
namespace {

// The ABI's strings may be NULL; the copies never are.
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

}  // namespace

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

}  // namespace dlrt::core
