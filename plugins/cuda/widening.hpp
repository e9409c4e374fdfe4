// widening.hpp: f16/bf16 ops on the CUDA plugin's f32 kernels.
//
// Most kernels of this plugin compute in f32 only (op_support.hpp). An op whose f16/bf16
// operands its own row declines (UNIMPLEMENTED) runs instead as the row's f32 kernel for the
// same op with every 16-bit operand made f32 (WideDesc), between conversions (narrow.cu):
// each run widens the 16-bit inputs into f32 buffers in the workspace, runs the f32 kernel on
// them, and rounds its f32 results into the 16-bit outputs (once, to nearest, ties to even).
// Everything is enqueued on the kernel's stream; nothing synchronises. An output that aliases
// a 16-bit input (the in-place optimizer updates) is written into that input's f32 buffer.
// docs/ops.md, "16-bit floats". Tensor-core kernels that read 16-bit operands directly
// (cuDNN, cuBLASLt) are the rows' own business and come before this in ops.cc.
#pragma once

#include <cuda_runtime_api.h>
#include <dlrt/plugin.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ops.hpp"

namespace dlrt::cuda {

// An owned copy of a dlrt_op_desc with every f16/bf16 operand, and every dtype attribute
// naming f16/bf16, made f32. desc() stays valid as long as this object.
class WideDesc {
 public:
  explicit WideDesc(const dlrt_op_desc& narrow);
  WideDesc(const WideDesc&) = delete;
  WideDesc& operator=(const WideDesc&) = delete;
  const dlrt_op_desc& desc() const { return desc_; }

 private:
  std::string op_;
  std::vector<dlrt_tensor_desc> inputs_, outputs_;
  std::vector<const dlrt_tensor_desc*> input_ptrs_, output_ptrs_;
  std::vector<dlrt_attr> attrs_;
  std::vector<const dlrt_attr*> attr_ptrs_;
  dlrt_op_desc desc_{};
};

// Whether an operand of `op` is f16 or bf16.
bool has_narrow_operand(const dlrt_op_desc& op);

// The inner kernel (made from WideDesc(narrow).desc()) between conversions. `inner_workspace`:
// what the inner kernel's create asked for; *workspace_bytes gets the total.
std::unique_ptr<Kernel> make_widening_kernel(const dlrt_op_desc& narrow,
                                             std::unique_ptr<Kernel> inner, size_t inner_workspace,
                                             size_t* workspace_bytes);

// narrow.cu: n elements converted on `stream`.
void launch_widen(cudaStream_t stream, const void* x, int32_t dtype, float* y, int64_t n);
void launch_narrow(cudaStream_t stream, const float* x, int32_t dtype, void* y, int64_t n);

}  // namespace dlrt::cuda
