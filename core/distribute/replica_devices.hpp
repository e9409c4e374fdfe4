// replica_devices.hpp: which local devices a strategy's replicas run on (dlrt.h,
// dlrt_strategy_options.devices).
//
// Given specs: each resolved like dlrt_context_find_device ("/GPU:0", "/device:CPU:1",
// "CPU:2"; a bare type is its first device), in the order given, one replica per spec.
// A malformed spec, one that matches no device, and a device named twice are all
// INVALID_ARGUMENT naming the entry (the caller's list is an argument, not a lookup).
//
// Default (no specs), chosen by device class and capability, never by a type or plugin
// name: every GPU-class device; else every CPU-class device whose description states a peak
// speed (dlrt_device_desc.peak_gflops > 0: a backend meant for speed, such as the CPU
// backend's logical devices); else every CPU-class device (e.g. the reference plugin's REF
// devices, which state 0). Registry order. Nothing at all is NOT_FOUND. The middle step
// keeps the slow reference oracle out of a default that has a real CPU backend, as
// TensorFlow's default is "the GPUs, else the CPU", never a mock.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlrt::core {
class Context;
}

namespace dlrt::core::distribute {

// Registry indices, one per replica. Throws Error as above.
std::vector<size_t> resolve_replica_devices(const Context& ctx,
                                            const std::vector<std::string>& specs);

}  // namespace dlrt::core::distribute
