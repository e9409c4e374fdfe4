// ops.hpp: how per-op kernels plug into the CUDA plugin.
//
// An op this plugin runs is one OpEntry in the op table: its name (the core's op registry
// name, e.g. "conv2d_bias_act"), a `check` that decides whether one instance (dtypes, shapes,
// layout, attributes, this GPU's compute capability) can run here, and a `create` that
// prepares it once (cuDNN plan, cuBLASLt heuristic, launch geometry) and returns a Kernel.
// Kernels live in their own files (conv.cc, activation.cu, ...), one family each, and each file
// adds the rows of the ops it runs with one block at namespace scope, which nothing else lists:
//   DLRT_CUDA_OPS(t) { t.push_back({"where", &check_where, &create_where}); }
// (plugins/common/kernel_registry.hpp).
//
// Until an op has an entry, op_supported and kernel_create answer
// UNIMPLEMENTED "cuda: no kernel for op '<name>' yet".
#pragma once

#include <cuda_runtime_api.h>
#include <dlrt/plugin.h>

#include <cstddef>
#include <memory>

#include "kernel_registry.hpp"

namespace dlrt::cuda {

// One prepared op instance. Externally synchronised (plugin.h): one run at a time.
class Kernel {
 public:
  virtual ~Kernel() = default;
  // Enqueue one execution on `stream`; the kernel's device is current. Must not allocate
  // device memory (scratch comes in args.workspace) nor synchronise: it may be captured.
  virtual void run(cudaStream_t stream, const dlrt_kernel_args& args) = 0;
};

struct OpEntry {
  const char* op;
  // Throws plugin::Error(UNIMPLEMENTED, reason) when this instance cannot run on a device
  // described by `device`, INVALID_ARGUMENT when the descriptor is malformed; fills `cost`
  // (may be NULL) otherwise.
  void (*check)(const dlrt_op_desc& op, const dlrt_device_desc& device, dlrt_op_cost* cost);
  // Prepare the op once on `device` (current); sets the workspace each run needs.
  std::unique_ptr<Kernel> (*create)(const dlrt_op_desc& op, const dlrt_device_desc& device,
                                    size_t* workspace_bytes);
};

using OpRegistry = plugin::KernelRegistry<OpEntry, &OpEntry::op>;
#define DLRT_CUDA_OPS(rows) DLRT_KERNEL_ROWS(::dlrt::cuda::OpRegistry, rows)

// The entry for `op`, or NULL when this plugin has no kernel for it.
const OpEntry* find_op(const char* op);

}  // namespace dlrt::cuda
