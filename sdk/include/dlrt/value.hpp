// dlrt/value.hpp: Value, a small copyable handle on one output of one node of a graph (the
// graph's C pointer + a dlrt_value), with its inferred type. Non-owning: valid as long as its
// Graph (graph.hpp).
#ifndef DLRT_VALUE_HPP_
#define DLRT_VALUE_HPP_

#include <cstdint>
#include <vector>

#include "dlrt/error.hpp"

namespace dlrt {

// A value of a graph: one output of one node. Non-owning; valid while its Graph lives.
class Value {
 public:
  Value() = default;
  Value(dlrt_graph* graph, dlrt_value value) noexcept : graph_(graph), value_(value) {}

  dlrt_value get() const noexcept { return value_; }
  dlrt_graph* graph() const noexcept { return graph_; }
  explicit operator bool() const noexcept { return value_ != DLRT_INVALID_VALUE; }
  // Node index and output index (the two halves of dlrt_value).
  uint32_t node() const noexcept { return static_cast<uint32_t>(value_ >> 32); }
  uint32_t output() const noexcept { return static_cast<uint32_t>(value_ & 0xffffffffu); }

  // Its inferred type: dtype, rank, dims (dense).
  dlrt_tensor_desc desc() const {
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    check(dlrt_graph_value_desc(graph_, value_, &d));
    return d;
  }
  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(desc().dtype); }
  std::vector<int64_t> dims() const {
    const dlrt_tensor_desc d = desc();
    return std::vector<int64_t>(d.dims, d.dims + d.rank);
  }

  friend bool operator==(const Value& a, const Value& b) noexcept {
    return a.graph_ == b.graph_ && a.value_ == b.value_;
  }
  friend bool operator!=(const Value& a, const Value& b) noexcept { return !(a == b); }

 private:
  dlrt_graph* graph_ = nullptr;
  dlrt_value value_ = DLRT_INVALID_VALUE;
};

}  // namespace dlrt

#endif  // DLRT_VALUE_HPP_
