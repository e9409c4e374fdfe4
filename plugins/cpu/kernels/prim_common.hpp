// prim_common.hpp: what the cpu plugin's oneDNN-primitive kernels (kernels/prim_*.cc) share:
// operand checks for `check`, memory descriptors for dlrt's dense tensors, the cost
// estimate, and PrimKernel, the Kernel made of a fixed sequence of primitives.
//
// What it is not: a graph of primitives or a layout planner. Activations stay in dlrt's plain
// row-major layouts (nhwc/nchw, HWIO filters); a primitive that prefers another layout (a
// blocked weight layout) gets an owned buffer and a reorder step, made in create.
//
// How a PrimKernel runs (docs/design.md section 9: made once, run many times, nothing allocated):
//   create: build each primitive_desc with scratchpad_mode::user, the primitive, and its args
//           map over dnnl::memory objects made now with no data handle (DNNL_MEMORY_NONE) for
//           the host's buffers, owned memory for internal buffers (reorders, pool workspace);
//   run:    set_data_handle on the input/output/scratchpad memories (no copies: device memory
//           is host memory) and execute the steps in order on the stream.
// The scratchpad of every step lives in the host's workspace (the steps run one after the
// other, so the workspace is the largest scratchpad, not the sum). Temporaries that live for
// one run only (an image reordered into a blocked layout and back) live there too, after the
// scratchpad region, each in its own slice: they outlive single steps, so they add up. Owned buffers make a
// kernel stateful; plugin.h has kernels externally synchronised, so that is allowed.
//
// Threads: the plugin's `threads` option (cpu.hpp) is applied around each create and each run
// with omp_set_num_threads on the calling thread, and the previous value restored afterwards,
// so the rest of the host's threading is untouched (oneDNN here uses an OpenMP runtime:
// openmp_runtime.hpp).
// Create needs it too: oneDNN sizes the scratchpad for the thread count it sees then.
#pragma once

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../dnnl_status.hpp"
#include "../openmp_runtime.hpp"
#include "../ops.hpp"

namespace dlrt::cpu::prim {

using dnnl::memory;
using plugin::OpView;
using plugin::TensorView;
using Tag = memory::format_tag;

// ---- check helpers -----------------------------------------------------------------------
// Only what a primitive can run: the schema checked counts, dims and attributes before the
// descriptor arrived (docs/design.md, "What a plugin may trust").

// UNIMPLEMENTED unless every operand is dense f32: "cpu: conv2d supports f32 only, got f16
// (input 0)".
inline void require_f32(const OpView& op) {
  auto one = [&](const TensorView& t, const char* what, size_t i) {
    const std::string where = std::string(" (") + what + " " + std::to_string(i) + ")";
    if (t.dtype != DLRT_F32)
      plugin::fail(DLRT_UNIMPLEMENTED, prefix() + op.name() + " supports f32 only, got " +
                                           plugin::dtype_name(t.dtype) + where);
    if (!t.dense())
      plugin::fail(DLRT_UNIMPLEMENTED, prefix() + op.name() +
                                           " supports the dense layout only, got layout " +
                                           std::to_string(t.layout) + where);
  };
  for (size_t i = 0; i < op.num_inputs(); ++i) one(op.input(i), "input", i);
  for (size_t i = 0; i < op.num_outputs(); ++i) one(op.output(i), "output", i);
}

// The dtype every float operand of a convolution or matmul row has: f32, or bf16 where
// oneDNN runs bf16 primitives natively (dlrt_plugin::onednn_bf16) and every operand is bf16.
// Anything else is UNIMPLEMENTED here, and ops.cc runs the op's f32 kernel between
// conversions instead (widening_kernel.hpp).
inline memory::data_type require_f32_or_native_bf16(const OpView& op, const dlrt_plugin& p) {
  bool all_bf16 = true;
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list) all_bf16 = all_bf16 && t.dtype == DLRT_BF16 && t.dense();
  if (all_bf16 && p.onednn_bf16) return memory::data_type::bf16;
  require_f32(op);
  return memory::data_type::f32;
}

// flops given; bytes = every operand read or written once; estimated_us from the device's
// peak (an arithmetic floor: memory-bound ops will take longer, the bandwidth is unknown).
inline void fill_cost(const OpView& op, const dlrt_plugin& p, double flops, dlrt_op_cost* cost) {
  double bytes = 0;
  for (const auto& t : op.inputs()) bytes += static_cast<double>(t.bytes);
  for (const auto& t : op.outputs()) bytes += static_cast<double>(t.bytes);
  cost->flops = flops;
  cost->bytes = bytes;
  const double peak = p.info.desc.peak_gflops;
  cost->estimated_us = peak > 0 ? flops / (peak * 1e3) : 0.0;
}

// "none" | "relu" | "sigmoid" | "tanh" (the fused ops' `activation`); INVALID_ARGUMENT
// otherwise. Returns false for "none", else the eltwise algorithm in *alg.
inline bool activation(const OpView& op, dnnl::algorithm* alg) {
  const std::string& a = op.get_string("activation");
  if (a == "none") return false;
  if (a == "relu") *alg = dnnl::algorithm::eltwise_relu;
  else if (a == "sigmoid") *alg = dnnl::algorithm::eltwise_logistic;
  else if (a == "tanh") *alg = dnnl::algorithm::eltwise_tanh;
  else
    op.invalid("activation is '" + a + "', expected \"none\", \"relu\", \"sigmoid\" or \"tanh\"");
  return true;
}

// ---- memory descriptors ------------------------------------------------------------------

inline memory::dims to_dims(const std::vector<int64_t>& d) {
  return memory::dims(d.begin(), d.end());
}

// A dense row-major tensor of these dims (f32 unless `dt` says otherwise; the descriptors below
// likewise); a scalar (rank 0) is seen as (1).
inline memory::desc plain_md(const std::vector<int64_t>& dims,
                             memory::data_type dt = memory::data_type::f32) {
  if (dims.empty()) return memory::desc({1}, dt, Tag::a);
  return memory::desc(to_dims(dims), dt, to_dims(plugin::row_major_strides(dims)));
}

// The same elements seen as one flat vector (element-wise ops don't care about shape).
inline memory::desc flat_md(const TensorView& t) {
  return memory::desc({t.numel}, memory::data_type::f32, Tag::a);
}

// An image: oneDNN orders the dims (N,C,H,W) whatever the layout; the tag says how it is stored.
inline memory::desc image_md(const plugin::ImageShape& s,
                             memory::data_type dt = memory::data_type::f32) {
  return memory::desc({s.n, s.c, s.h, s.w}, dt, s.nchw ? Tag::nchw : Tag::nhwc);
}

// A filter stored HWIO (KH,KW,Ci,Co): oneDNN's dims are (O,I,H,W), its tag `hwio`. `any` lets
// the primitive choose its own (blocked) layout; the kernel then reorders.
inline memory::desc filter_md(int64_t kh, int64_t kw, int64_t ci, int64_t co, Tag tag = Tag::hwio,
                              memory::data_type dt = memory::data_type::f32) {
  return memory::desc({co, ci, kh, kw}, dt, tag);
}

// primitive_attr with the scratchpad in the host's workspace.
inline dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// user_scratchpad(), plus the fused op's activation (`fused`: the op has its bias input, so it
// is conv2d_bias_act / matmul_bias_act with an `activation` attribute) as an eltwise post-op,
// so bias and activation are one pass over the output.
inline dnnl::primitive_attr scratchpad_and_activation(const OpView& op, bool fused) {
  dnnl::primitive_attr attr = user_scratchpad();
  dnnl::algorithm act{};
  if (fused && activation(op, &act)) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, act, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  return attr;
}

// ---- the kernel --------------------------------------------------------------------------

// Sets oneDNN's OpenMP thread count for the scope and restores it (openmp_runtime.hpp: on
// Windows oneDNN's runtime is not the loops' one).
using ThreadScope = OnednnThreadScope;

// Builds kernel K under the plugin's thread count: oneDNN sizes a primitive's scratchpad for
// the threads it may use at execution, read when the primitive_desc is made, so create and
// run must see the same count (a larger count at run than at create would overrun it).
template <typename K, typename... Args>
std::unique_ptr<Kernel> make_kernel(const dlrt_plugin& p, Args&&... args) {
  ThreadScope threads(p.threads);
  return std::make_unique<K>(p, std::forward<Args>(args)...);
}

// A kernel made of primitives executed in order. Subclasses build everything in their
// constructor through input()/output()/owned()/add_step()/reorder_*.
class PrimKernel : public Kernel {
 public:
  PrimKernel(const dlrt_plugin& p, const OpView& op)
      : engine_(p.engine),
        threads_(p.threads),
        inputs_(op.num_inputs()),
        outputs_(op.num_outputs()) {
    for (size_t i = 0; i < op.num_inputs(); ++i) constant_.push_back(op.input_is_constant(i));
  }

  // [scratchpad region (the largest step's), 64-byte aligned][temporaries, one after another]
  size_t workspace_bytes() const override { return temps_start() + temp_bytes_; }

  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override {
    ThreadScope threads(threads_);
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i]) inputs_[i].set_data_handle(const_cast<void*>(args.inputs[i]));
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (outputs_[i]) outputs_[i].set_data_handle(args.outputs[i]);
    for (memory& m : scratch_) m.set_data_handle(args.workspace);
    char* temps = static_cast<char*>(args.workspace) + temps_start();
    for (auto& [m, offset] : temps_) m.set_data_handle(temps + offset);
    for (Step& s : steps_)
      if (!s.once || !ran_) s.prim.execute(stream, s.args);
    ran_ = true;
  }

 protected:
  // The memory of input/output `i`, seen with `md`; its data handle is set in run.
  memory input(size_t i, const memory::desc& md) { return inputs_.at(i) = unbound(md); }
  memory output(size_t i, const memory::desc& md) { return outputs_.at(i) = unbound(md); }
  // A buffer the kernel owns (allocated now, by oneDNN, freed with the kernel).
  memory owned(const memory::desc& md) const { return memory(md, engine_); }
  // A buffer for this run only, in the host's workspace (file comment): what a kernel needs
  // between its own steps, at no memory cost while other kernels run.
  memory temporary(const memory::desc& md) {
    memory m = unbound(md);
    temps_.emplace_back(m, temp_bytes_);
    temp_bytes_ += (md.get_size() + 63) / 64 * 64;
    return m;
  }

  // Appends a step; its scratchpad (if any) is bound to the host's workspace.
  // The scratchpad region is kScratchpadSlack bytes longer than oneDNN asks for: Debian's
  // oneDNN 2.7 on AVX2 CPUs (jit_1x1:avx2 convolution backward_weights with ic 1, mb32 ic1 oc6
  // 1x1 stride 2) writes and reads a few floats past the end of its 256-byte scratchpad
  // (valgrind on a Zen 3 EPYC): that corrupted the heap, or with two threads another buffer's
  // bits (a training run differing in the last bits from an identical one). The slack keeps
  // such an overrun inside the workspace.
  static constexpr size_t kScratchpadSlack = 4096;
  void add_step(const dnnl::primitive& prim, std::unordered_map<int, memory> args,
                const memory::desc& scratchpad) {
    if (scratchpad.get_size() > 0) {
      memory m = unbound(scratchpad);
      scratch_.push_back(m);
      args.emplace(DNNL_ARG_SCRATCHPAD, m);
      scratch_bytes_ = std::max(scratch_bytes_, scratchpad.get_size() + kScratchpadSlack);
    }
    steps_.push_back({prim, std::move(args)});
  }

  // `user` as the layout `want` a primitive chose: `user` itself when the layouts agree,
  // otherwise an owned buffer that a reorder step (added now, so it runs before the primitive
  // added next) fills from `user` on every run.
  // When `user` is an input the host marked constant (dlrt_op_desc.constant_inputs), the
  // reorder runs on the first run only and its result is kept: a constant filter is
  // reordered once, not on every run.
  memory reorder_in(const memory& user, const memory::desc& want) {
    if (user.get_desc() == want) return user;
    memory m = owned(want);
    add_reorder(user, m);
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (constant_[i] && inputs_[i] && inputs_[i].get() == user.get()) steps_.back().once = true;
    return m;
  }
  // A buffer of layout `have` for a primitive to write, which finish_reorder_out copies into
  // `user` (call it after adding the primitive's step); `user` itself when the layouts agree.
  memory reorder_out_buffer(const memory& user, const memory::desc& have) const {
    return user.get_desc() == have ? user : owned(have);
  }
  void finish_reorder_out(const memory& buffer, const memory& user) {
    if (buffer.get() != user.get()) add_reorder(buffer, user);
  }
  // reorder_in and reorder_out_buffer with the other layout's copy a temporary (an image
  // each run brings anew, where an owned copy would only hold memory between runs).
  memory reorder_in_temporary(const memory& user, const memory::desc& want) {
    if (user.get_desc() == want) return user;
    memory m = temporary(want);
    add_reorder(user, m);
    return m;
  }
  memory reorder_out_temporary(const memory& user, const memory::desc& have) {
    return user.get_desc() == have ? user : temporary(have);
  }

  dnnl::engine engine_;

 private:
  struct Step {
    dnnl::primitive prim;
    std::unordered_map<int, memory> args;
    bool once = false;  // runs on the first run only (a reorder of a constant input)
  };

  memory unbound(const memory::desc& md) const { return memory(md, engine_, DNNL_MEMORY_NONE); }
  size_t temps_start() const {
    return temp_bytes_ == 0 ? scratch_bytes_ : (scratch_bytes_ + 63) / 64 * 64;
  }
  void add_reorder(const memory& from, const memory& to) {
    dnnl::reorder::primitive_desc pd(engine_, from.get_desc(), engine_, to.get_desc(),
                                     user_scratchpad());
    add_step(dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, pd.scratchpad_desc());
  }

  int threads_;
  std::vector<bool> constant_;  // per input: the host says it never changes (ABI 1.3)
  bool ran_ = false;            // the once-steps have run
  std::vector<memory> inputs_, outputs_, scratch_;
  std::vector<Step> steps_;
  size_t scratch_bytes_ = 0;
  std::vector<std::pair<memory, size_t>> temps_;  // temporaries, at their offset in the region
  size_t temp_bytes_ = 0;
};

}  // namespace dlrt::cpu::prim
