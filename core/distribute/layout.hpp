// layout.hpp: the tensors of one all_reduce or broadcast call, checked and measured.
//
// The caller passes num_replicas groups of `per_replica` tensors, replica-major:
//   tensors[r * per_replica + k] is tensor k of replica r, on replica r's device.
// Every group must have the dtypes and element counts of replica 0's group, in the same
// order; all_reduce sums F32 only, broadcast copies any dtype. check_layout says exactly
// which tensor breaks which rule ("tensors[4] (replica 1, tensor 1) has 6 elements, expected
// 4 as tensor 1 of replica 0"), and nothing is communicated before it has passed, so a bad
// call leaves the strategy healthy.
//
// A checked layout also gives the packing of one replica's tensors into a flat buffer:
// tensor k at byte offsets[k], bytes[k] long, total_bytes in all (no padding: the tensors of
// a replica are summed element by element, so only their order matters). Both paths pack
// that way: the host path into host buffers, the device path into one device buffer per
// replica (one collective call instead of one per tensor, as Horovod's fusion buffer).
#pragma once

#include <dlrt/dlrt.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlrt::core {
class Context;
class Tensor;
}  // namespace dlrt::core

namespace dlrt::core::distribute {

enum class Collective { kAllReduce, kBroadcast };

// "dlrt_strategy_all_reduce" / "dlrt_strategy_broadcast": how messages name the call.
const char* collective_name(Collective c);

struct Layout {
  size_t num_replicas = 0;
  size_t per_replica = 0;
  std::vector<Tensor*> tensors;  // replica-major, as given; not owned
  // Per tensor k of a replica (the same for every replica):
  std::vector<dlrt_dtype> dtypes;
  std::vector<size_t> elements;
  std::vector<size_t> bytes;
  std::vector<size_t> offsets;  // in the packed replica
  size_t total_bytes = 0;
  size_t total_elements = 0;

  Tensor& at(size_t replica, size_t k) const { return *tensors[replica * per_replica + k]; }
  // What every worker must agree on, as numbers: {collective, per_replica, then dtype and
  // element count of each tensor k}. Equal signatures mean compatible calls.
  std::vector<int64_t> signature(Collective c) const;
};

// Checks `tensors` (num_replicas = replica_devices.size() groups) as above. Throws
// Error(INVALID_ARGUMENT) naming the first offending tensor.
Layout check_layout(const Context& ctx, Collective c, const std::vector<size_t>& replica_devices,
                    dlrt_tensor* const* tensors, size_t per_replica);

}  // namespace dlrt::core::distribute
