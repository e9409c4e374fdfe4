// prim_conv.cc: the convolution family on oneDNN's convolution primitives.
//
//   conv2d                  x (N,H,W,Ci), w (KH,KW,Ci,Co)        -> y (N,OH,OW,Co)
//   conv2d_bias_act         x, w, b (Co)                          -> y = act(conv2d(x,w) + b)
//   conv2d_backward_data    dy (N,OH,OW,Co), w                    -> dx (N,H,W,Ci) (input_shape)
//   conv2d_backward_filter  x, dy                                 -> dw (KH,KW,Ci,Co) (filter_shape)
// (NCHW images when data_format is "NCHW"; filters are HWIO in both formats.)
//
// oneDNN sees images as (N,C,H,W) dims with tag nhwc/nchw and filters as (O,I,H,W) dims with
// tag hwio; SAME/VALID become explicit padding_l/padding_r (docs/ops.md: before = total/2),
// dilation d becomes oneDNN's d-1. The bias and the activation of conv2d_bias_act are the
// primitive's bias argument and an eltwise post-op, so the fused op is one pass over y.
//
// Weights are given to oneDNN as `any`: its fast (jit) convolutions want a blocked filter
// layout, so the kernel reorders w from HWIO into an owned buffer before each run (forward,
// backward data) or dw out of one after it (backward filter); oneDNN's gemm-based fallback
// takes HWIO directly and then no reorder is added.
//
// Backward filter with NHWC activations: oneDNN 2.6 picks its direct jit:avx2 kernel, which on
// the reference workload's middle layer (64x13x13x32 -> 64, 3x3) ran at ~58 GFLOP/s against
// ~65 for its gemm-based implementation (im2col per image, then one GEMM of Co x OH*OW by
// OH*OW x KH*KW*Ci), 4.9 vs 4.4 ms on one thread. The kernel takes the gemm implementation
// when oneDNN's first choice is a jit kernel no wider than AVX2 (what was measured) and both
// GEMM dimensions that vary with the layer are large (OH*OW >= 64 and KH*KW*Ci >= 64): with
// Ci = 1 (KH*KW*Ci = 9) or a 3x3 output (OH*OW = 9) the GEMMs are thin and the jit kernel wins
// (conv1 0.53 vs 1.2 ms, conv3 0.96 vs 1.0 ms). Blocked activations (`any`, nChw8c plus
// reorders) gave 4.7 ms; the forward and backward-data kernels stay as oneDNN picks them
// (blocked layouts or gemm were within noise there). docs/benchmarks.md, 2026-12-01.
//
// Ci = 1 (the first layer of the MNIST CNN, batch 64, 28x28x1 -> 26x26x32): oneDNN 2.6 picks
// jit:avx2, and on one thread it runs forward and backward filter at 30-55 GFLOP/s, as fast per
// FLOP as the 32 -> 64 layer (docs/benchmarks.md; an earlier 1-2 GFLOP/s figure was two threads
// on a loaded machine). Backward data is slow for it (3-4 GFLOP/s), but training never needs
// the image's gradient.
#include "prim_conv.hpp"

#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;
using dnnl::convolution_forward;
using dnnl::prop_kind;
using plugin::ImageShape;
using plugin::Window1D;

enum class ConvKind { forward, backward_data, backward_filter };

ConvKind kind_of(const OpView& op) {
  if (op.name() == "conv2d_backward_data") return ConvKind::backward_data;
  if (op.name() == "conv2d_backward_filter") return ConvKind::backward_filter;
  return ConvKind::forward;  // conv2d, conv2d_bias_act
}

// The forward convolution an op is about, read from its operands and attributes.
struct ConvGeom {
  ImageShape x, y;  // the forward op's input and output
  int64_t kh = 0, kw = 0, ci = 0, co = 0;
  Window1D h, w;

  memory::dims strides() const { return {h.stride, w.stride}; }
  memory::dims dilates() const { return {h.dilation - 1, w.dilation - 1}; }
  memory::dims pad_l() const { return {h.pad_before, w.pad_before}; }
  memory::dims pad_r() const { return {h.pad_after, w.pad_after}; }
  double flops() const { return 2.0 * y.n * y.h * y.w * co * kh * kw * ci; }
};

// Checks the operands against each other (INVALID_ARGUMENT naming the op) and returns the
// geometry.
ConvGeom conv_geom(const OpView& op) {
  const ConvKind kind = kind_of(op);
  require_arity(op, op.name() == "conv2d_bias_act" ? 3 : 2, 1);
  const bool nchw = plugin::is_nchw(op.get_string("data_format"), op.name());
  const auto& strides = op.get_ints("strides", 2);
  const auto& dilations = op.get_ints("dilations", 2);
  const std::string& padding = op.get_string("padding");

  ConvGeom g;
  std::vector<int64_t> filter;
  switch (kind) {
    case ConvKind::forward:
      g.x = plugin::image_shape(op.input(0).dims, nchw, op.name(), "input 0 (x)");
      filter = op.input(1).dims;
      break;
    case ConvKind::backward_data:
      g.x = plugin::image_shape(op.get_ints("input_shape", 4), nchw, op.name(), "input_shape");
      filter = op.input(1).dims;
      break;
    case ConvKind::backward_filter:
      g.x = plugin::image_shape(op.input(0).dims, nchw, op.name(), "input 0 (x)");
      filter = op.get_ints("filter_shape", 4);
      break;
  }
  if (filter.size() != 4) op.invalid("the filter must have rank 4 (KH,KW,Ci,Co), has dims " + plugin::dims_string(filter));
  g.kh = filter[0], g.kw = filter[1], g.ci = filter[2], g.co = filter[3];
  if (g.ci != g.x.c)
    op.invalid("the filter has Ci = " + std::to_string(g.ci) + " but the image has " + std::to_string(g.x.c) +
               " channels");
  g.h = plugin::window_1d(g.x.h, g.kh, strides[0], dilations[0], padding, op.name(), "h");
  g.w = plugin::window_1d(g.x.w, g.kw, strides[1], dilations[1], padding, op.name(), "w");
  g.y = plugin::image_shape(g.x.n, g.h.out, g.w.out, g.co, nchw);

  switch (kind) {
    case ConvKind::forward:
      require_output_dims(op, 0, g.y.dims());
      if (op.num_inputs() == 3 && op.input(2).dims != std::vector<int64_t>{g.co})
        op.invalid("input 2 (b) has dims " + plugin::dims_string(op.input(2).dims) + ", expected (" +
                   std::to_string(g.co) + ",)");
      break;
    case ConvKind::backward_data:
      if (op.input(0).dims != g.y.dims())
        op.invalid("input 0 (dy) has dims " + plugin::dims_string(op.input(0).dims) + ", expected " +
                   plugin::dims_string(g.y.dims()));
      require_output_dims(op, 0, g.x.dims());
      break;
    case ConvKind::backward_filter:
      if (op.input(1).dims != g.y.dims())
        op.invalid("input 1 (dy) has dims " + plugin::dims_string(op.input(1).dims) + ", expected " +
                   plugin::dims_string(g.y.dims()));
      require_output_dims(op, 0, filter);
      break;
  }
  return g;
}

convolution_forward::desc forward_desc(prop_kind prop, const ConvGeom& g, bool bias) {
  const memory::desc x = image_md(g.x), y = image_md(g.y);
  const memory::desc w = filter_md(g.kh, g.kw, g.ci, g.co, Tag::any);
  if (bias) {
    const memory::desc b({g.co}, memory::data_type::f32, Tag::a);
    return convolution_forward::desc(prop, algorithm::convolution_direct, x, w, b, y, g.strides(),
                                     g.dilates(), g.pad_l(), g.pad_r());
  }
  return convolution_forward::desc(prop, algorithm::convolution_direct, x, w, y, g.strides(), g.dilates(),
                                   g.pad_l(), g.pad_r());
}

// conv2d, conv2d_bias_act.
class ConvForward : public PrimKernel {
 public:
  ConvForward(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) : PrimKernel(p, op) {
    const bool bias = op.num_inputs() == 3;
    dnnl::primitive_attr attr = user_scratchpad();
    dnnl::algorithm act{};
    if (bias && activation(op, &act)) {
      dnnl::post_ops po;
      po.append_eltwise(1.0f, act, 0.0f, 0.0f);
      attr.set_post_ops(po);
    }
    convolution_forward::primitive_desc pd(forward_desc(prop_kind::forward_inference, g, bias), attr, engine_);
    memory x = input(0, image_md(g.x));
    // A blocked weight layout chosen by oneDNN: reorder HWIO into it (owned buffer) first.
    memory w = reorder_in(input(1, filter_md(g.kh, g.kw, g.ci, g.co)), pd.weights_desc());
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, output(0, image_md(g.y))}};
    if (bias) args.emplace(DNNL_ARG_BIAS, input(2, memory::desc({g.co}, memory::data_type::f32, Tag::a)));
    add_step(convolution_forward(pd), std::move(args), pd.scratchpad_desc());
  }
};

class ConvBackwardData : public PrimKernel {
 public:
  ConvBackwardData(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) : PrimKernel(p, op) {
    convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training, g, false), engine_);
    convolution_backward_data::desc d(algorithm::convolution_direct, image_md(g.x),
                                      filter_md(g.kh, g.kw, g.ci, g.co, Tag::any), image_md(g.y), g.strides(),
                                      g.dilates(), g.pad_l(), g.pad_r());
    convolution_backward_data::primitive_desc pd(d, user_scratchpad(), engine_, hint);
    memory dy = input(0, image_md(g.y));
    // A blocked weight layout chosen by oneDNN: reorder HWIO into it (owned buffer) first.
    memory w = reorder_in(input(1, filter_md(g.kh, g.kw, g.ci, g.co)), pd.weights_desc());
    add_step(convolution_backward_data(pd),
             {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, output(0, image_md(g.x))}},
             pd.scratchpad_desc());
  }
};

// Whether backward filter should run oneDNN's gemm-based implementation rather than its first
// choice `first` (see the file comment): a jit kernel of at most AVX2 and GEMMs that are not thin.
bool prefer_gemm_backward_filter(const ConvGeom& g, const std::string& first) {
  const bool jit_up_to_avx2 = first.rfind("jit:", 0) == 0 && first.find("avx512") == std::string::npos &&
                              first.find("amx") == std::string::npos;
  return jit_up_to_avx2 && g.y.h * g.y.w >= 64 && g.kh * g.kw * g.ci >= 64;
}

class ConvBackwardFilter : public PrimKernel {
 public:
  ConvBackwardFilter(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) : PrimKernel(p, op) {
    convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training, g, false), engine_);
    convolution_backward_weights::desc d(algorithm::convolution_direct, image_md(g.x),
                                         filter_md(g.kh, g.kw, g.ci, g.co, Tag::any), image_md(g.y),
                                         g.strides(), g.dilates(), g.pad_l(), g.pad_r());
    convolution_backward_weights::primitive_desc pd(d, user_scratchpad(), engine_, hint);
    if (prefer_gemm_backward_filter(g, pd.impl_info_str())) {
      // Walk a second descriptor through oneDNN's list (next_impl changes it in place, and
      // stays on the last entry when nothing matches); keep the first choice without a gemm one.
      convolution_backward_weights::primitive_desc probe(d, user_scratchpad(), engine_, hint);
      while (std::string(probe.impl_info_str()).find("gemm") == std::string::npos && probe.next_impl()) {
      }
      if (std::string(probe.impl_info_str()).find("gemm") != std::string::npos) pd = probe;
    }
    memory x = input(0, image_md(g.x));
    memory dy = input(1, image_md(g.y));
    memory dw_user = output(0, filter_md(g.kh, g.kw, g.ci, g.co));
    // A blocked weight layout chosen by oneDNN: dw is computed into an owned buffer of that
    // layout and reordered to HWIO after.
    memory dw = reorder_out_buffer(dw_user, pd.diff_weights_desc());
    add_step(convolution_backward_weights(pd),
             {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}}, pd.scratchpad_desc());
    finish_reorder_out(dw, dw_user);
  }
};

}  // namespace

void conv_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  const ConvGeom g = conv_geom(op);
  if (op.name() == "conv2d_bias_act") {
    dnnl::algorithm unused{};
    activation(op, &unused);
  }
  fill_cost(op, p, g.flops(), cost);
}

std::unique_ptr<Kernel> conv_create(const dlrt_plugin& p, const OpView& op) {
  const ConvGeom g = conv_geom(op);
  switch (kind_of(op)) {
    case ConvKind::backward_data: return make_kernel<ConvBackwardData>(p, op, g);
    case ConvKind::backward_filter: return make_kernel<ConvBackwardFilter>(p, op, g);
    case ConvKind::forward: break;
  }
  return make_kernel<ConvForward>(p, op, g);
}

}  // namespace dlrt::cpu::prim
