// host_path.cc: see host_path.hpp.
#include "distribute/host_path.hpp"

#include "distribute/worker_group.hpp"
#include "tensor.hpp"

namespace dlrt::core::distribute {
namespace {

// Replica r's tensors, packed: tensor k at layout.offsets[k].
void read_replica(const Layout& layout, size_t r, void* packed) {
  for (size_t k = 0; k < layout.per_replica; ++k)
    layout.at(r, k).read(static_cast<unsigned char*>(packed) + layout.offsets[k], layout.bytes[k]);
}

void write_replica(const Layout& layout, size_t r, const void* packed) {
  for (size_t k = 0; k < layout.per_replica; ++k)
    layout.at(r, k).write(static_cast<const unsigned char*>(packed) + layout.offsets[k],
                          layout.bytes[k]);
}

}  // namespace

void HostPath::all_reduce(const Layout& layout) {
  const size_t n = layout.total_elements;
  sum_.resize(n);
  scratch_.resize(n);
  read_replica(layout, 0, sum_.data());
  for (size_t r = 1; r < layout.num_replicas; ++r) {
    read_replica(layout, r, scratch_.data());
    for (size_t i = 0; i < n; ++i) sum_[i] += scratch_[i];
  }
  if (workers_ != nullptr) workers_->all_reduce_sum(sum_.data(), n);
  for (size_t r = 0; r < layout.num_replicas; ++r) write_replica(layout, r, sum_.data());
}

void HostPath::broadcast(const Layout& layout) {
  const bool is_source = workers_ == nullptr || workers_->rank() == 0;
  bytes_.resize(layout.total_bytes);
  if (is_source) read_replica(layout, 0, bytes_.data());
  if (workers_ != nullptr) workers_->broadcast(bytes_.data(), layout.total_bytes);
  for (size_t r = is_source ? 1 : 0; r < layout.num_replicas; ++r)
    write_replica(layout, r, bytes_.data());
}

}  // namespace dlrt::core::distribute
