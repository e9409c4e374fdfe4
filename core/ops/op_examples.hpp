// core/ops/op_examples.hpp: one small, valid set of operands per op: the first sample the op's
// schema entry declares (sample.hpp), so a new op has its example with nothing else to write.
//
// What it is for: asking a device "can you run this op at all?" without a graph — what
// `dlrt_op_probe` and `dlprobe --ops` show. A device that answers yes here may still decline
// other shapes, dtypes or attributes; the exact question is dlrt_op_supported with the real
// operands. The conformance suite (tests/conformance) runs every sample, not just this one.
#pragma once

#include <string_view>
#include <vector>

#include "op_instance.hpp"

namespace dlrt::ops {

struct OpExample {
  std::vector<TensorType> inputs;
  AttrMap attrs;  // what the sample gives; defaults fill the rest
};

// The example of `op`, or nullptr when the op has none (every op of all_ops() has one; the
// registry's tests check that).
const OpExample* find_example(std::string_view op);

// `op` instantiated on its example operands. NOT_FOUND for an unknown op or one without an
// example.
Result<OpInstance> instantiate_example(std::string_view op);

}  // namespace dlrt::ops
