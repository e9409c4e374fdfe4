// runtime.cc: Runtime (runtime.hpp) and the functions of _dlrt that configure it and list
// plugins and devices (dlrt/config.py and dlrt/probe.py give them TensorFlow's names).
#include "runtime.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

#include "bindings.hpp"

namespace nb = nanobind;

namespace dlrt::python {

Runtime& Runtime::instance() {
  static Runtime* runtime = new Runtime();  // never destroyed: see the header
  return *runtime;
}

void Runtime::configure(const RuntimeConfig& config) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (context_ != nullptr)
    throw dlrt::Error(DLRT_FAILED_PRECONDITION,
                      "the runtime has started (an op ran, a model was built or the logical "
                      "devices were listed): devices cannot be configured any more");
  config_ = config;
}

const std::shared_ptr<dlrt::Context>& Runtime::context() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (released_)
    throw dlrt::Error(DLRT_FAILED_PRECONDITION, "the Python interpreter is exiting: dlrt's runtime is gone");
  if (context_ == nullptr) {
    dlrt::ContextOptions options;
    if (config_.visible_devices) options.visible_devices(*config_.visible_devices);
    if (config_.memory_growth) options.memory_growth(*config_.memory_growth);
    for (const RuntimeConfig::Split& s : config_.logical)
      options.logical_devices(s.physical_device, s.count, s.limits);
    options.soft_placement(config_.soft_placement);
    std::shared_ptr<dlrt::Context> ctx;
    {
      nb::gil_scoped_release no_gil;  // loading plugins takes a while (CUDA's)
      ctx = std::make_shared<dlrt::Context>(options);
    }
    devices_ = ctx->devices();
    host_memory_.clear();
    for (const dlrt::DeviceInfo& d : devices_) {
      std::optional<dlrt::Attr> a = d.attr("host_memory");
      host_memory_.push_back(a && a->i != 0);
    }
    // TensorFlow's default: a GPU when there is one, else the CPU (not the reference device,
    // whose class is CPU too but whose type is REF).
    default_device_ = 0;
    bool found = false;
    for (size_t i = 0; i < devices_.size() && !found; ++i)
      if (devices_[i].device_class == DLRT_DEVICE_CLASS_GPU) default_device_ = i, found = true;
    for (size_t i = 0; i < devices_.size() && !found; ++i)
      if (devices_[i].type == "CPU") default_device_ = i, found = true;
    host_device_ = 0;
    for (size_t i = devices_.size(); i-- > 0;)
      if (devices_[i].type == "CPU") host_device_ = i;
    context_ = std::move(ctx);
  }
  return context_;
}

const std::vector<dlrt::DeviceInfo>& Runtime::devices() {
  context();
  return devices_;
}

size_t Runtime::default_device() {
  context();
  return default_device_;
}

size_t Runtime::host_device() {
  context();
  return host_device_;
}

bool Runtime::host_memory(size_t index) {
  context();
  return index < host_memory_.size() && host_memory_[index];
}

const std::shared_ptr<dlrt::Context>& Runtime::probe() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (released_)
    throw dlrt::Error(DLRT_FAILED_PRECONDITION, "the Python interpreter is exiting: dlrt's runtime is gone");
  if (probe_ == nullptr) {
    nb::gil_scoped_release no_gil;
    probe_ = std::make_shared<dlrt::Context>(dlrt::ContextOptions());
  }
  return probe_;
}

void Runtime::release() {
  // Cached executables first: they hold device memory of the context about to go (at exit
  // the arena warned of 1 KiB still in use by a layer call's compiled graph).
  clear_composite_cache();
  clear_tape_cache();
  std::lock_guard<std::mutex> lock(mutex_);
  context_.reset();
  probe_.reset();
  released_ = true;
}

nb::dict device_dict(const dlrt::DeviceInfo& d) {
  nb::dict out;
  out["name"] = d.name;
  out["full_name"] = d.full_name;
  out["device_type"] = d.type;
  out["index"] = d.index;
  out["device_class"] = dlrt::device_class_name(d.device_class);
  out["platform"] = d.platform;
  out["plugin"] = d.plugin;
  out["logical_index"] = d.logical_index;
  out["logical_count"] = d.logical_count;
  out["memory_total"] = d.memory_total;
  out["memory_limit"] = d.memory_limit;
  out["model"] = d.model;
  out["vendor"] = d.vendor;
  out["pci_bus_id"] = d.pci_bus_id;
  out["compute_capability"] =
      nb::make_tuple(d.compute_capability_major, d.compute_capability_minor);
  out["core_count"] = d.core_count;
  out["driver_version"] = d.driver_version;
  out["library_versions"] = d.library_versions;
  out["peak_gflops"] = d.peak_gflops;
  nb::dict attrs;
  for (const dlrt::Attr& a : d.attrs) {
    switch (a.type) {
      case DLRT_ATTR_STRING:
        attrs[a.name.c_str()] = a.s;
        break;
      case DLRT_ATTR_FLOAT:
        attrs[a.name.c_str()] = a.f;
        break;
      case DLRT_ATTR_BOOL:
        attrs[a.name.c_str()] = a.i != 0;
        break;
      case DLRT_ATTR_INTS:
        attrs[a.name.c_str()] = a.ints;
        break;
      case DLRT_ATTR_FLOATS:
        attrs[a.name.c_str()] = a.floats;
        break;
      default:
        attrs[a.name.c_str()] = a.i;
    }
  }
  out["attrs"] = attrs;
  return out;
}

namespace {

nb::list devices_of(const dlrt::Context& ctx) {
  nb::list out;
  for (const dlrt::DeviceInfo& d : ctx.devices()) out.append(device_dict(d));
  return out;
}

nb::list plugins_of(const dlrt::Context& ctx) {
  nb::list out;
  for (const dlrt::PluginInfo& p : ctx.plugins()) {
    nb::dict d;
    d["name"] = p.name;
    d["platform"] = p.platform;
    d["version"] = p.version;
    d["path"] = p.path;
    d["state"] = dlrt::plugin_state_name(p.state);
    d["phase"] = dlrt::plugin_phase_name(p.phase);
    d["abi"] = nb::make_tuple(p.abi_major, p.abi_minor);
    d["device_count"] = p.device_count;
    d["error_code"] = dlrt::code_name(p.error_code);
    d["error"] = p.error;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_runtime(nb::module_& m) {
  m.def("version", [] { return std::string(dlrt_version()); },
        "dlrt's version (libdlrt's).");
  m.def("runtime_started", [] { return Runtime::instance().started(); },
        "Whether the runtime's context exists (after it, devices cannot be configured).");
  m.def(
      "configure",
      [](std::optional<std::string> visible, std::optional<bool> memory_growth,
         const std::vector<std::tuple<std::string, int32_t, std::vector<uint64_t>>>& logical,
         bool soft_placement) {
        RuntimeConfig c;
        c.visible_devices = std::move(visible);
        c.memory_growth = memory_growth;
        for (const auto& [physical, count, limits] : logical)
          c.logical.push_back({physical, count, limits});
        c.soft_placement = soft_placement;
        Runtime::instance().configure(c);
      },
      nb::arg("visible_devices").none(), nb::arg("memory_growth").none(), nb::arg("logical"),
      nb::arg("soft_placement"),
      "Sets the configuration the runtime starts with (replacing the previous one).");
  m.def("start", [] { Runtime::instance().context(); }, "Starts the runtime now.");
  m.def(
      "release_runtime", [] { Runtime::instance().release(); },
      "At exit: let go of the contexts (each goes with the last object made from it).");
  m.def(
      "physical_devices", [] { return devices_of(*Runtime::instance().probe()); },
      "Every device of every loaded plugin, as dicts (does not start the runtime).");
  m.def(
      "logical_devices", [] { return devices_of(*Runtime::instance().context()); },
      "The runtime's devices, as dicts (starts the runtime).");
  m.def(
      "plugins", [] { return plugins_of(*Runtime::instance().probe()); },
      "Every plugin file found, loaded or not, with the reason of a refusal.");
  m.def(
      "settings",
      [] {
        nb::list out;
        for (const dlrt::Setting& s : Runtime::instance().probe()->settings())
          out.append(nb::make_tuple(s.name, s.value, dlrt::setting_source_name(s.source), s.help));
        return out;
      },
      "Every setting (name, effective value, source, help), as dlprobe --env shows them.");
  m.def(
      "find_device",
      [](const std::string& spec) { return Runtime::instance().context()->find_device(spec); },
      nb::arg("spec"), "The index of the runtime's device matching spec (NotFoundError if none).");
  m.def(
      "memory_info",
      [](size_t device) {
        const dlrt::MemoryStats s = Runtime::instance().context()->memory_stats(device);
        nb::dict d;
        d["current"] = s.in_use;
        d["peak"] = s.peak;
        d["reserved"] = s.reserved;
        d["limit"] = s.limit;
        return d;
      },
      nb::arg("device"), "tf.config.experimental.get_memory_info's dict for device index.");
  m.def("log_device_placement", [] { return Runtime::instance().log_device_placement(); });
  m.def(
      "set_log_device_placement",
      [](bool on) { Runtime::instance().set_log_device_placement(on); }, nb::arg("enabled"));
}

}  // namespace dlrt::python
