// symbolic.cc: symbolic tensors; the node counter, once per process (dlrt/nn/symbolic.hpp).
#include "dlrt/nn/symbolic.hpp"

#include <atomic>

namespace dlrt::nn {

uint64_t Node::next_sequence() {
  static std::atomic<uint64_t> counter{0};
  return counter++;
}

const Shape& SymbolicTensor::shape() const {
  if (!node_ || index_ >= node_->outputs.size())
    throw Error(
        DLRT_FAILED_PRECONDITION,
        "SymbolicTensor: refers to no layer output; make it with nn::Input or a layer call");
  return node_->outputs[index_];
}

}  // namespace dlrt::nn
