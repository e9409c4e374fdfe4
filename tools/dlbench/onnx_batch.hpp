// onnx_batch.hpp: an ONNX model made to run at another batch size, for `dlbench infer`.
//
// Many published models (ONNX's light models among them) fix the batch at 1: the graph input
// is (1,3,224,224), the output (1,1000), and a Reshape before the classifier has the constant
// shape (1,2048). To time them at batch 64 beside onnxruntime, both runtimes load the same
// rewritten copy:
//   - every graph input (not an initializer) whose first dim is the fixed value b0 gets
//     `batch` there, and so does every graph output whose first dim is b0;
//   - every Reshape whose shape is an initializer or a Constant starting with b0 gets `batch`
//     there;
//   - value_info (shape hints for intermediate values) is dropped: it would say b0.
// That is a heuristic (a Reshape that starts with b0 for another reason would be changed too),
// so dlbench checks the rewrite on the numbers: the first sample of a batch-64 run must equal
// the batch-1 run of that sample (infer.cc, "batch_consistent").
#pragma once

#include <cstdint>
#include <string>

namespace dlbench {

struct BatchedModel {
  std::string bytes;        // the serialised ModelProto to load
  bool rewritten = false;   // false: the model's batch dims are already symbolic (or == batch)
  int64_t original_batch = 0;  // b0 (0 where every input's first dim is symbolic)
};

// Reads the model at `path` and returns it for `batch` as above. Throws std::runtime_error
// naming the file when it does not parse, or when inputs fix different first dims.
BatchedModel model_for_batch(const std::string& path, int64_t batch);

}  // namespace dlbench
