// distribute.cc: DistributionStrategy's devices and the thread's current strategy
// (dlrt/nn/distribute.hpp).
#include "dlrt/nn/distribute.hpp"

namespace dlrt::nn {

namespace detail {
const DistributionStrategy*& current_strategy() {
  thread_local const DistributionStrategy* current = nullptr;
  return current;
}
}  // namespace detail

std::vector<std::string> DistributionStrategy::devices() const {
  std::vector<std::string> out;
  for (size_t r = 0; r < impl_->num_replicas(); ++r)
    out.push_back(ctx_->device(impl_->replica_device(r)).name);
  return out;
}

DistributionStrategy::DistributionStrategy(const Context& ctx, dlrt::StrategyOptions options)
    : ctx_(&ctx) {
  if (options.devices.empty()) options.devices = default_devices(ctx);
  impl_ = std::make_shared<dlrt::Strategy>(ctx, options);
}

std::vector<std::string> DistributionStrategy::default_devices(const Context& ctx) {
  std::vector<std::string> gpus, cpus;
  for (const DeviceInfo& d : ctx.devices()) {
    if (d.device_class == DLRT_DEVICE_CLASS_GPU) gpus.push_back(d.name);
    if (d.type == "CPU") cpus.push_back(d.name);
  }
  if (!gpus.empty()) return gpus;
  if (!cpus.empty()) return cpus;
  throw Error(DLRT_NOT_FOUND, "strategy: no GPU and no CPU device is visible (dlprobe says why)");
}

}  // namespace dlrt::nn
