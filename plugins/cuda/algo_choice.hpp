// algo_choice.hpp: which cuDNN convolution algorithm a kernel takes from cuDNN's heuristic
// list (conv.cc), as plain data so the rule is tested without a GPU (algo_choice_test.cc).
//
// The rule: the first candidate, in cuDNN's order (its best guess first), that
//   - reported success for this problem,
//   - is not a tensor-op (TF32) kernel: f32 results must stay f32-accurate,
//   - is deterministic when the policy asks for it (option deterministic=1, the default):
//     an algorithm using atomics sums in a different order on every run,
//   - and whose workspace query succeeded with at most the policy's limit (option
//     cudnn_workspace_mb).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlrt::cuda {

struct AlgoCandidate {
  int algo = 0;
  bool succeeded = false;        // perf[i].status == CUDNN_STATUS_SUCCESS
  bool tensor_op = false;        // perf[i].mathType is a tensor-op math type
  bool deterministic = false;    // perf[i].determinism == CUDNN_DETERMINISTIC
  bool workspace_known = false;  // the workspace-size query succeeded
  size_t workspace_bytes = 0;
};

struct AlgoPolicy {
  bool require_deterministic = true;
  size_t workspace_limit = 0;
};

// The index of the chosen candidate, or -1; then `why_none` says what excluded them.
inline int choose_algo(const std::vector<AlgoCandidate>& candidates, const AlgoPolicy& policy,
                       std::string* why_none) {
  int failed = 0, tensor_op = 0, nondeterministic = 0, too_big = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const AlgoCandidate& c = candidates[i];
    if (!c.succeeded || !c.workspace_known) {
      ++failed;
    } else if (c.tensor_op) {
      ++tensor_op;
    } else if (policy.require_deterministic && !c.deterministic) {
      ++nondeterministic;
    } else if (c.workspace_bytes > policy.workspace_limit) {
      ++too_big;
    } else {
      return static_cast<int>(i);
    }
  }
  if (why_none != nullptr)
    *why_none = std::to_string(candidates.size()) + " candidate(s): " + std::to_string(failed) +
                " not usable for this problem, " + std::to_string(tensor_op) + " TF32 only, " +
                std::to_string(nondeterministic) +
                " not deterministic (option deterministic=0 allows them), " +
                std::to_string(too_big) + " over the workspace limit of " +
                std::to_string(policy.workspace_limit >> 20) + " MiB (option cudnn_workspace_mb)";
  return -1;
}

}  // namespace dlrt::cuda
