// dlrt/nn/runner.hpp: Runner, one compiled executable with the tensors it is fed and fetches
// into, kept from run to run so a step copies its inputs in and allocates nothing. Namespace
// nn::detail: what Sessions and custom steps run, and what programs that build their own
// graphs next to a model use (samples/char_transformer).
#ifndef DLRT_NN_RUNNER_HPP_
#define DLRT_NN_RUNNER_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn::detail {

// An executable with its feed tensors (made on the device each placeholder was placed on, so
// a run copies nothing in) and fetch tensors (made by the first run, reused after).
struct Runner {
  Executable exe;
  std::vector<Tensor> feeds;
  std::vector<Tensor> fetches;

  Runner(const Context& ctx, Graph& g, const std::vector<Value>& placeholders,
         const std::vector<std::string>& names, const std::vector<Value>& outputs,
         const dlrt::CompileOptions& options);

  void make_feeds(const Context& ctx, const std::vector<Value>& placeholders,
                  const std::vector<std::string>& names);
  void run();
  float scalar(size_t fetch) const { return fetches.at(fetch).read<float>().at(0); }
};

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_RUNNER_HPP_
