// replica_devices.cc: see replica_devices.hpp.
#include "distribute/replica_devices.hpp"

#include <fmt/format.h>

#include <map>

#include "context.hpp"
#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

std::vector<size_t> default_devices(const Context& ctx) {
  const auto& devices = ctx.registry().devices();
  std::vector<size_t> gpus, fast_cpus, cpus;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!ctx.automatic_candidate(i)) continue;  // the reference oracle, unless named
    const auto& desc = ctx.desc_of(i);
    if (desc.device_class == DLRT_DEVICE_CLASS_GPU) gpus.push_back(i);
    if (desc.device_class != DLRT_DEVICE_CLASS_CPU) continue;
    cpus.push_back(i);
    // A backend meant for speed states its peak; a test oracle states 0 (unknown).
    if (desc.peak_gflops > 0) fast_cpus.push_back(i);
  }
  if (!gpus.empty()) return gpus;
  if (!fast_cpus.empty()) return fast_cpus;
  if (!cpus.empty()) return cpus;
  fail(DLRT_NOT_FOUND, fmt::format("dlrt_strategy_create: no devices were given and the context "
                                   "has no GPU- or CPU-class device for the default (devices: "
                                   "{}); dlprobe shows why plugins have none",
                                   ctx.registry().names()));
}

}  // namespace

std::vector<size_t> resolve_replica_devices(const Context& ctx,
                                            const std::vector<std::string>& specs) {
  if (specs.empty()) return default_devices(ctx);
  std::vector<size_t> out;
  std::map<size_t, size_t> first_entry;  // device -> the entry that named it first
  for (size_t i = 0; i < specs.size(); ++i) {
    size_t device = 0;
    try {
      device = ctx.registry().find(specs[i]);
    } catch (const Error& e) {
      // A spec that matches nothing is a bad argument here (the registry's NOT_FOUND is for
      // lookups); its message already lists the devices there are.
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_strategy_create: devices[{}] '{}': {}", i, specs[i], e.message()));
    }
    auto [it, fresh] = first_entry.emplace(device, i);
    if (!fresh)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_strategy_create: devices[{}] '{}' is {}, as devices[{}] '{}' is; "
                       "one replica per device",
                       i, specs[i], ctx.device_name(device), it->second, specs[it->second]));
    out.push_back(device);
  }
  return out;
}

}  // namespace dlrt::core::distribute
