// widening_kernel.hpp: f16/bf16 ops on the cpu plugin's f32 kernels.
//
// Where a kernel row has no 16-bit path of its own (every loop kernel, and the oneDNN rows on
// a CPU without native bf16; docs/ops.md "16-bit floats"), ops.cc builds the row's f32 kernel
// for the same op with every f16/bf16 operand made f32 (OpView::with_narrow_floats_as) and
// wraps it in a WideningKernel. Each run then
//   1. widens the 16-bit inputs into f32 buffers (exact),
//   2. runs the f32 kernel on them,
//   3. rounds its f32 results into the 16-bit outputs, once, to nearest (ties to even).
// So the arithmetic is f32's and the storage the dtype's: what PyTorch's CPU autocast and
// Keras' mixed precision give on CPUs without 16-bit units.
//
// Memory: the f32 buffers live in the host's workspace, after the inner kernel's own
// workspace (workspace_bytes is their sum), so nothing is allocated per run. An output that
// aliases a 16-bit input (the in-place optimizer updates) is written into that input's f32
// buffer, which is what the inner kernel would see with f32 operands.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "convert_16bit.hpp"
#include "ops.hpp"

namespace dlrt::cpu {

class WideningKernel : public Kernel {
 public:
  // `narrow`: the op as the host described it; `inner`: the kernel made for
  // narrow.with_narrow_floats_as(DLRT_F32). `threads`: the plugin's option (conversions run
  // on that many OpenMP threads, 0 = all); `convert`: the conversion loops' build.
  WideningKernel(const plugin::OpView& narrow, std::unique_ptr<Kernel> inner, int threads,
                 ConvertIsa convert);

  size_t workspace_bytes() const override { return total_bytes_; }
  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override;

 private:
  struct Operand {
    int32_t dtype = DLRT_F32;  // the host's dtype: f16/bf16 are widened, others pass through
    size_t numel = 0;
    size_t offset = 0;  // of its f32 buffer in the workspace (16-bit operands only)
  };
  std::unique_ptr<Kernel> inner_;
  int threads_;
  ConvertIsa convert_;
  std::vector<Operand> inputs_, outputs_;
  size_t inner_bytes_ = 0;  // the inner kernel's workspace, at the start of the host's
  size_t total_bytes_ = 0;
  std::vector<const void*> in_;  // the inner kernel's operands of one run (reused)
  std::vector<void*> out_;
};

}  // namespace dlrt::cpu
