// layout.cc: see layout.hpp.
#include "distribute/layout.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

#include "context.hpp"
#include "ops/shape_util.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace dlrt::core::distribute {

const char* collective_name(Collective c) {
  return c == Collective::kAllReduce ? "dlrt_strategy_all_reduce" : "dlrt_strategy_broadcast";
}

std::vector<int64_t> Layout::signature(Collective c) const {
  std::vector<int64_t> s = {static_cast<int64_t>(c), static_cast<int64_t>(per_replica)};
  for (size_t k = 0; k < per_replica; ++k) {
    s.push_back(dtypes[k]);
    s.push_back(static_cast<int64_t>(elements[k]));
  }
  return s;
}

Layout check_layout(const Context& ctx, Collective c, const std::vector<size_t>& replica_devices,
                    dlrt_tensor* const* tensors, size_t per_replica) {
  const char* call = collective_name(c);
  if (per_replica == 0)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: per_replica is 0; expected the number of "
                                            "tensors of each replica (>= 1)",
                                            call));
  if (tensors == nullptr) fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: tensors is NULL", call));
  Layout l;
  l.num_replicas = replica_devices.size();
  l.per_replica = per_replica;
  const size_t n = l.num_replicas * per_replica;
  l.tensors.reserve(n);
  std::map<const Tensor*, size_t> seen;  // tensor -> first index: no tensor twice

  for (size_t i = 0; i < n; ++i) {
    const size_t r = i / per_replica, k = i % per_replica;
    const std::string who = fmt::format("{}: tensors[{}] (replica {}, tensor {})", call, i, r, k);
    Tensor* t = tensors[i];
    if (t == nullptr) fail(DLRT_INVALID_ARGUMENT, who + " is NULL");
    if (&t->context() != &ctx)
      fail(DLRT_INVALID_ARGUMENT, who + " belongs to another context than the strategy's");
    if (auto [it, fresh] = seen.emplace(t, i); !fresh)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{} is the same tensor as tensors[{}]; each "
                                              "replica's tensors are distinct",
                                              who, it->second));
    if (t->device() != replica_devices[r])
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{} is on {}, expected replica {}'s device {} (tensors are replica-major: "
                       "tensors[r * per_replica + k])",
                       who, ctx.device_name(t->device()), r, ctx.device_name(replica_devices[r])));
    const dlrt_dtype dtype = t->type().dtype;
    const size_t elements = t->byte_size() / dtype_size(dtype);
    if (c == Collective::kAllReduce && dtype != DLRT_F32)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{} is {}; all_reduce sums f32 tensors only", who, ops::dtype_name(dtype)));
    if (r == 0) {
      l.dtypes.push_back(dtype);
      l.elements.push_back(elements);
      l.bytes.push_back(t->byte_size());
      l.offsets.push_back(l.total_bytes);
      l.total_bytes += t->byte_size();
      l.total_elements += elements;
    } else if (dtype != l.dtypes[k]) {
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{} is {}, expected {} as tensor {} of replica 0", who,
                       ops::dtype_name(dtype), ops::dtype_name(l.dtypes[k]), k));
    } else if (elements != l.elements[k]) {
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{} has {} elements, expected {} as tensor {} of "
                                              "replica 0",
                                              who, elements, l.elements[k], k));
    }
    l.tensors.push_back(t);
  }
  return l;
}

}  // namespace dlrt::core::distribute
