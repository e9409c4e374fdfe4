// cuda_options.hpp: the CUDA plugin's options (plugin_create), parsed once per plugin
// instance, and how a kernel's create reaches them. CUDA-free, so the parsing is tested on
// machines without a GPU (plugin_test.cc).
//
//   deterministic       1 (default) | 0. 1: cuDNN convolution algorithms are chosen only
//                       among those cuDNN reports CUDNN_DETERMINISTIC (no atomics), so a
//                       gradient has the same bits on every run, which bit-exact resume needs.
//                       0: any algorithm, possibly faster, run-to-run differences allowed.
//   cudnn_workspace_mb  cap on the scratch one cuDNN convolution may ask for (default 256,
//                       range 0..65536 MiB). Candidates needing more are skipped (FFT
//                       algorithms can ask for gigabytes); 0 allows only workspace-free ones.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin_support.hpp"

namespace dlrt::cuda {

struct CudaOptions {
  bool deterministic = true;
  size_t cudnn_workspace_limit = size_t{256} << 20;  // bytes
};

// The option keys plugin_create accepts.
inline const std::set<std::string>& cuda_option_keys() {
  static const std::set<std::string> keys = {"deterministic", "cudnn_workspace_mb"};
  return keys;
}

// Reads and checks the options; a bad value is INVALID_ARGUMENT naming the key and range.
inline CudaOptions parse_cuda_options(const plugin::Options& o) {
  CudaOptions c;
  c.deterministic = o.get_int("deterministic", 1, 0, 1) == 1;
  c.cudnn_workspace_limit = static_cast<size_t>(o.get_int("cudnn_workspace_mb", 256, 0, 65536))
                            << 20;
  return c;
}

// kernel_create (ops.cc) runs an op's create on the calling thread inside a CreatingScope,
// so create functions read the options of the plugin instance creating them without every
// create signature carrying them. Outside a scope: the defaults.
const CudaOptions& creating_options();
class CreatingScope {
 public:
  explicit CreatingScope(const CudaOptions& options);
  ~CreatingScope();
  CreatingScope(const CreatingScope&) = delete;
  CreatingScope& operator=(const CreatingScope&) = delete;

 private:
  const CudaOptions* previous_;
};

}  // namespace dlrt::cuda
