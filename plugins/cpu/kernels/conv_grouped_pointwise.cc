// conv_grouped_pointwise.cc: a grouped 1x1 convolution as G matmuls.
//
//   x (N,H,W,Ci), w (1,1,Ci/G,Co), [b (Co)] -> y (N,H,W,Co), output channel o in group o/(Co/G)
//
// In NHWC a 1x1 convolution at stride 1 is a matmul of the image's rows, (N*H*W, Ci) x (Ci, Co),
// and group g's part is the columns [g*Ci/G, (g+1)*Ci/G) of x times the columns
// [g*Co/G, (g+1)*Co/G) of w's (Ci/G, Co) matrix into the same columns of y: G matmuls on
// strided views, nothing copied. oneDNN 2.6 runs grouped NHWC 1x1 convolutions on AVX2 with
// its direct jit kernel at 25-33 GFLOP/s on one Zen 3 thread, and the first one of ShuffleNet
// (24 -> 112 channels in 4 groups of 6 inputs) with its gemm fallback at ~1 GFLOP/s: 3.9 ms, a
// quarter of the whole model's run. As matmuls (oneDNN's gemm:jit on the views), measured on
// ShuffleNet's light model at batch 1 on one Zen 3 thread (2026-12-08): that first one 3.9 ->
// 0.28 ms, the others 0.22 -> 0.13 (272 channels at 14x14), 0.25 -> 0.19 (136 at 28x28),
// 0.28 -> 0.10 ms (544 at 7x7); the model 15.8 -> 7.7 ms.
//
// One primitive serves every group (the views differ only in where they start): each run
// points G memory objects per operand at the group's first element and executes it G times,
// on the calling thread in order (cpu.hpp), sharing one scratchpad.
#include "conv_grouped_pointwise.hpp"

#include <vector>

#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

class GroupedPointwiseConv : public Kernel {
 public:
  GroupedPointwiseConv(const dlrt_plugin& p, const OpView& op)
      : engine_(p.engine), threads_(p.threads) {
    const TensorView& x = op.input(0);
    const TensorView& w = op.input(1);
    rows_ = x.dims[0] * x.dims[1] * x.dims[2];
    ci_ = x.dims[3];
    co_ = w.dims[3];
    groups_ = op.get_int("groups");
    cig_ = ci_ / groups_;
    cog_ = co_ / groups_;
    bias_ = op.num_inputs() == 3;
    const auto f32 = memory::data_type::f32;
    // Group 0's views; the others are the same shapes and strides further along each row.
    const memory::desc a({rows_, cig_}, f32, memory::dims{ci_, 1});
    const memory::desc b({cig_, cog_}, f32, memory::dims{co_, 1});
    const memory::desc c({rows_, cog_}, f32, memory::dims{co_, 1});
    const dnnl::primitive_attr attr = scratchpad_and_activation(op, bias_);
    dnnl::matmul::primitive_desc pd;
    if (bias_) {
      const memory::desc bias({1, cog_}, f32, memory::dims{co_, 1});
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, engine_);
    } else {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine_);
    }
    matmul_ = dnnl::matmul(pd);
    scratch_bytes_ = pd.scratchpad_desc().get_size();
    if (scratch_bytes_ > 0) scratch_bytes_ += 4096;  // PrimKernel's slack (prim_common.hpp)
    // Each group's memory objects and execute arguments, made once: a run only points the
    // objects at its buffers (the maps hold the same objects), nothing is allocated per run.
    for (int64_t g = 0; g < groups_; ++g) {
      Group m;
      m.a = unbound(pd.src_desc());
      m.b = unbound(pd.weights_desc());
      m.c = unbound(pd.dst_desc());
      m.args = {{DNNL_ARG_SRC, m.a}, {DNNL_ARG_WEIGHTS, m.b}, {DNNL_ARG_DST, m.c}};
      if (bias_) {
        m.bias = unbound(pd.bias_desc());
        m.args.emplace(DNNL_ARG_BIAS, m.bias);
      }
      if (scratch_bytes_ > 0) {
        m.scratch = unbound(pd.scratchpad_desc());
        m.args.emplace(DNNL_ARG_SCRATCHPAD, m.scratch);
      }
      groups_mem_.push_back(std::move(m));
    }
  }

  size_t workspace_bytes() const override { return scratch_bytes_; }

  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override {
    ThreadScope threads(threads_);
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    const float* bias = bias_ ? static_cast<const float*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    for (int64_t g = 0; g < groups_; ++g) {
      Group& m = groups_mem_[static_cast<size_t>(g)];
      m.a.set_data_handle(const_cast<float*>(x + g * cig_));
      m.b.set_data_handle(const_cast<float*>(w + g * cog_));
      m.c.set_data_handle(y + g * cog_);
      if (bias_) m.bias.set_data_handle(const_cast<float*>(bias + g * cog_));
      if (scratch_bytes_ > 0) m.scratch.set_data_handle(args.workspace);
      matmul_.execute(stream, m.args);
    }
  }

 private:
  struct Group {
    memory a, b, c, bias, scratch;
    std::unordered_map<int, memory> args;  // the execute arguments, holding the objects above
  };
  memory unbound(const memory::desc& md) const { return memory(md, engine_, DNNL_MEMORY_NONE); }

  dnnl::engine engine_;
  int threads_;
  int64_t rows_ = 0, ci_ = 0, co_ = 0, groups_ = 1, cig_ = 0, cog_ = 0;
  bool bias_ = false;
  dnnl::matmul matmul_;
  size_t scratch_bytes_ = 0;
  std::vector<Group> groups_mem_;
};

}  // namespace

bool grouped_pointwise_fits(const OpView& op) {
  if (op.name() != "conv2d" && op.name() != "conv2d_bias_act") return false;
  if (op.get_string("data_format") != "NHWC" || plugin::conv_groups(op) <= 1) return false;
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list)
      if (t.dtype != DLRT_F32 || !t.dense()) return false;
  const TensorView& x = op.input(0);
  const TensorView& w = op.input(1);
  const TensorView& y = op.output(0);
  if (w.dims[0] != 1 || w.dims[1] != 1) return false;
  if (op.get_ints("strides", 2) != std::vector<int64_t>{1, 1}) return false;
  if (!op.has("pads") || op.get_ints("pads", 4) != std::vector<int64_t>{0, 0, 0, 0}) return false;
  if (y.dims[1] != x.dims[1] || y.dims[2] != x.dims[2]) return false;
  const int64_t groups = plugin::conv_groups(op);
  const int64_t cig = w.dims[2], cog = w.dims[3] / groups;
  return cig > 1 || cog > 1;  // depthwise (one in, one out per group): oneDNN's jit_dw
}

std::unique_ptr<Kernel> make_grouped_pointwise(const dlrt_plugin& p, const OpView& op) {
  return make_kernel<GroupedPointwiseConv>(p, op);
}

}  // namespace dlrt::cpu::prim
