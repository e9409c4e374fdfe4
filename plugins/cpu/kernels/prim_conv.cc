// prim_conv.cc: the convolution family on oneDNN's convolution primitives.
//
//   conv2d                  x (N,H,W,Ci), w (KH,KW,Ci,Co)        -> y (N,OH,OW,Co)
//   conv2d_bias_act         x, w, b (Co)                          -> y = act(conv2d(x,w) + b)
//   conv2d_backward_data    dy (N,OH,OW,Co), w                    -> dx (N,H,W,Ci) (input_shape)
//   conv2d_backward_data_add  dy, w, addend (N,H,W,Ci)            -> dx = addend + that
//   conv2d_backward_filter  x, dy                                 -> dw (KH,KW,Ci,Co) (filter_shape)
//   conv2d_backward         dy, x, w                              -> dx, dw (both of the above:
//                           one Winograd sweep that transforms dy once where Winograd runs both
//                           passes, else the two passes' own kernels one after the other)
// (NCHW images when data_format is "NCHW"; filters are HWIO in both formats.)
// With groups G > 1 the filter is (KH,KW,Ci/G,Co), output channel o in group o / (Co/G).
//
// oneDNN sees images as (N,C,H,W) dims with tag nhwc/nchw and filters as (O,I,H,W) dims with
// tag hwio, or, grouped, as (G,O/G,I/G,H,W) dims with tag hwigo — the same bytes as dlrt's
// (KH,KW,Ci/G,Co), since Co = (G, Co/G) with the group outer; oneDNN takes a 5-D weights desc
// as a grouped (depthwise when I/G = 1) convolution. SAME/VALID become explicit
// padding_l/padding_r (docs/ops.md: before = total/2), dilation d becomes oneDNN's d-1. The bias and the activation of conv2d_bias_act are the
// primitive's bias argument and an eltwise post-op, so the fused op is one pass over y.
//
// Weights are given to oneDNN as `any`: its fast (jit) convolutions want a blocked filter
// layout, so the kernel reorders w from HWIO into an owned buffer before each run (forward,
// backward data) or dw out of one after it (backward filter); oneDNN's gemm-based fallback
// takes HWIO directly and then no reorder is added. A filter the host marks constant
// (dlrt_op_desc.constant_inputs: an inference session's weights) is reordered on the first
// run only (prim_common.hpp, reorder_in): at batch 1 that reorder was a quarter of
// ResNet-50's time.
//
// Backward filter, NHWC, Ci >= 8 (ConvBackwardFilterGemm): oneDNN's own choices (its direct
// jit:avx2 kernel, or one im2col and one GEMM per image, whose K = OH*OW is small: 121, 9)
// are slow on the reference workload's middle and last layers. Here the im2col rows of a
// chunk of images (~2 MiB) feed one matmul primitive, dw (KH*KW*Ci, Co) += cols^T (.., rows) x
// dy (rows, Co), whose K is the chunk's rows (1936, 144), which is faster (docs/benchmarks.md,
// "Kernel choices"). The rows of an NHWC window are contiguous runs of KW*Ci floats (no
// dilation along w), so the im2col is one copy per window row, and dw comes out in HWIO,
// dlrt's own filter layout (no reorder). Taken when oneDNN's own first choice is a jit kernel
// no wider than AVX2 (what was measured); with Ci = 1 (conv1: 9-float rows, a 9 x 32 result)
// the jit kernel is faster and stays.
//
// 3x3 stride-1 NHWC convolutions without groups with channel counts in multiples of 16 (the
// MNIST CNN's middle and last layers) run, in all three passes, as Winograd F(4x4, 3x3) on
// AVX2+FMA CPUs, in its 16-lane build where oneDNN runs AVX-512 (winograd_conv.hpp;
// winograd_applies below), unless the plugin's `winograd` option is 0: two to three times
// faster than oneDNN's direct kernels there (docs/benchmarks.md, "Kernel choices", and
// winograd_conv.hpp for AVX-512).
//
// Grouped 1x1 forward convolutions at stride 1 in NHWC (ShuffleNet's) run as one matmul per
// group on strided views of x, w and y (conv_grouped_pointwise.cc): oneDNN's grouped direct
// kernels were 2-14x slower there.
//
// Where oneDNN runs AVX-512, forward 3x3 stride-1 convolutions of more than 64 x 64 channel
// pairs (past which dlrt's kernel leaves them: wino::kMaxForwardPairsAvx512) take oneDNN's
// own Winograd F(4x4, 3x3) kernel (jit_wino_4x3:avx512_core) instead: it takes only nChw16c images, so x is reordered
// into a temporary of that layout and y out of one (both in the host's workspace), and its
// filter layout is the filter already transformed, so a constant filter is transformed once.
// Measured on a 2-core Zen 4 EPYC (two threads, relu post-op, reorders included, filter
// transformed beforehand): ResNet-50's 3x3 layers at batch 64 1.5-1.7x faster than direct
// (56x56x64: 78 vs 131 ms), at batch 1 1.3-2.9x (7x7x512: 0.62 vs 0.82 ms; 28x28x128: 0.33
// vs 0.94); 16-channel layers only 1.0-1.3x, so it needs 32 channels each side, and small
// convolutions stay direct (onednn_winograd_applies). oneDNN's
// filter transform is slow (17.5 ms for 512 x 512, against 0.8 ms for the direct conv of one
// image), so a variable filter, transformed on every run, needs a large batch
// (onednn_winograd_applies). light_resnet50 at batch 64: 2.30 s, against 2.61 s direct and
// onnxruntime's 2.44 s; light_vgg19 at batch 1: 96 vs 191 ms.
//
// Ci = 1 (the first layer of the MNIST CNN, batch 64, 28x28x1 -> 26x26x32): oneDNN 2.6 picks
// jit:avx2, which runs forward and backward filter as fast per FLOP as the 32 -> 64 layer
// (docs/benchmarks.md, "Kernel choices"). Backward data is slow for it, but training never
// needs the image's gradient.

#include <cstring>
#include <string>

#include "conv_grouped_pointwise.hpp"
#include "conv_one_channel.hpp"
#include "prim_common.hpp"
#include "prim_conv.hpp"
#include "winograd_conv.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;
using dnnl::convolution_forward;
using dnnl::prop_kind;
using plugin::ImageShape;
using plugin::Window1D;

enum class ConvKind { forward, backward_data, backward_filter, backward_both };

ConvKind kind_of(const OpView& op) {
  if (op.name() == "conv2d_backward_data" || op.name() == "conv2d_backward_data_add")
    return ConvKind::backward_data;
  // conv2d_transpose(x, w) is conv2d_backward_data(dy = x, w) into y: w is that convolution's
  // HWIO filter and "pads" its pads (core/ops/infer_conv_transpose.cc), so it is run as one.
  if (op.name() == "conv2d_transpose") return ConvKind::backward_data;
  if (op.name() == "conv2d_backward_filter") return ConvKind::backward_filter;
  if (op.name() == "conv2d_backward") return ConvKind::backward_both;
  return ConvKind::forward;  // conv2d, conv2d_bias_act
}

// The forward convolution an op is about, read from its operands and attributes.
struct ConvGeom {
  ImageShape x, y;                         // the forward op's input and output
  int64_t kh = 0, kw = 0, ci = 0, co = 0;  // the filter's dims: ci is Ci/groups
  int64_t groups = 1;
  Window1D h, w;
  // Every operand's: f32, or bf16 where the check let a bf16 op through (oneDNN with
  // AVX512-BF16: bf16 primitives, f32 accumulation; require_f32_or_native_bf16).
  memory::data_type dt = memory::data_type::f32;

  memory::dims strides() const { return {h.stride, w.stride}; }
  memory::dims dilates() const { return {h.dilation - 1, w.dilation - 1}; }
  memory::dims pad_l() const { return {h.pad_before, w.pad_before}; }
  memory::dims pad_r() const { return {h.pad_after, w.pad_after}; }
  double flops() const { return 2.0 * y.n * y.h * y.w * co * kh * kw * ci; }
};

// The geometry as the core's descriptor states it: x, w and y (dy for the backward passes)
// with their dims, and the explicit pads. Nothing is derived or re-checked: the schema did
// both (docs/design.md, "What a plugin may trust").
ConvGeom conv_geom(const OpView& op) {
  const ConvKind kind = kind_of(op);
  const bool nchw = op.get_string("data_format") == "NCHW";
  const auto& strides = op.get_ints("strides", 2);
  const auto& dilations = op.get_ints("dilations", 2);

  ConvGeom g;
  std::vector<int64_t> filter;
  switch (kind) {
    case ConvKind::forward:  // x, w -> y
      g.x = plugin::image_shape(op.input(0).dims, nchw);
      filter = op.input(1).dims;
      g.y = plugin::image_shape(op.output(0).dims, nchw);
      break;
    case ConvKind::backward_data:  // dy, w -> dx
      g.x = plugin::image_shape(op.output(0).dims, nchw);
      filter = op.input(1).dims;
      g.y = plugin::image_shape(op.input(0).dims, nchw);
      break;
    case ConvKind::backward_filter:  // x, dy -> dw
      g.x = plugin::image_shape(op.input(0).dims, nchw);
      filter = op.output(0).dims;
      g.y = plugin::image_shape(op.input(1).dims, nchw);
      break;
    case ConvKind::backward_both:  // dy, x, w -> dx, dw
      g.x = plugin::image_shape(op.input(1).dims, nchw);
      filter = op.input(2).dims;
      g.y = plugin::image_shape(op.input(0).dims, nchw);
      break;
  }
  g.kh = filter[0], g.kw = filter[1], g.ci = filter[2], g.co = filter[3];
  g.groups = plugin::conv_groups(op);
  g.h = plugin::window_of(op, 0, g.x.h, g.kh, strides[0], dilations[0], g.y.h);
  g.w = plugin::window_of(op, 1, g.x.w, g.kw, strides[1], dilations[1], g.y.w);
  if (op.input(0).dtype == DLRT_BF16) g.dt = memory::data_type::bf16;
  return g;
}

// The filter's desc: HWIO (O,I,H,W) dims, or grouped (G,O/G,I/G,H,W) with hwigo; `any` lets
// oneDNN choose the layout.
memory::desc weights_md(const ConvGeom& g, bool any = false) {
  if (g.groups == 1) return filter_md(g.kh, g.kw, g.ci, g.co, any ? Tag::any : Tag::hwio, g.dt);
  return memory::desc({g.groups, g.co / g.groups, g.ci, g.kh, g.kw}, g.dt,
                      any ? Tag::any : Tag::hwigo);
}

// An image in oneDNN's nChw16c layout (channels in blocks of 16, innermost), f32.
memory::desc blocked16_md(const plugin::ImageShape& s) {
  return memory::desc({s.n, s.c, s.h, s.w}, memory::data_type::f32, Tag::nChw16c);
}

// The forward convolution's desc: direct on dlrt's image layout, or (`winograd`) oneDNN's
// Winograd algorithm on nChw16c images (the only layout its kernel takes).
convolution_forward::desc forward_desc(prop_kind prop, const ConvGeom& g, bool bias,
                                       bool winograd = false) {
  const memory::desc x = winograd ? blocked16_md(g.x) : image_md(g.x, g.dt);
  const memory::desc y = winograd ? blocked16_md(g.y) : image_md(g.y, g.dt);
  const memory::desc w = weights_md(g, true);
  const algorithm alg = winograd ? algorithm::convolution_winograd : algorithm::convolution_direct;
  if (bias) {
    const memory::desc b({g.co}, g.dt, Tag::a);
    return convolution_forward::desc(prop, alg, x, w, b, y, g.strides(), g.dilates(), g.pad_l(),
                                     g.pad_r());
  }
  return convolution_forward::desc(prop, alg, x, w, y, g.strides(), g.dilates(), g.pad_l(),
                                   g.pad_r());
}

// conv2d, conv2d_bias_act. With `winograd` (onednn_winograd_applies), oneDNN's Winograd
// kernel between two reorders: x into an nChw16c temporary, y out of one.
class ConvForward : public PrimKernel {
 public:
  ConvForward(const dlrt_plugin& p, const OpView& op, const ConvGeom& g, bool winograd = false)
      : PrimKernel(p, op) {
    const bool bias = op.num_inputs() == 3;
    const dnnl::primitive_attr attr = scratchpad_and_activation(op, bias);
    convolution_forward::primitive_desc pd(
        forward_desc(prop_kind::forward_inference, g, bias, winograd), attr, engine_);
    memory x = reorder_in_temporary(input(0, image_md(g.x, g.dt)), pd.src_desc());
    // A blocked weight layout chosen by oneDNN: reorder HWIO into it (owned buffer) first.
    memory w = reorder_in(input(1, weights_md(g)), pd.weights_desc());
    const memory y_user = output(0, image_md(g.y, g.dt));
    const memory y = reorder_out_temporary(y_user, pd.dst_desc());
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}};
    if (bias) args.emplace(DNNL_ARG_BIAS, input(2, memory::desc({g.co}, g.dt, Tag::a)));
    add_step(convolution_forward(pd), std::move(args), pd.scratchpad_desc());
    finish_reorder_out(y, y_user);
  }
};

class ConvBackwardData : public PrimKernel {
 public:
  ConvBackwardData(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) : PrimKernel(p, op) {
    convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training, g, false),
                                             engine_);
    convolution_backward_data::desc d(algorithm::convolution_direct, image_md(g.x, g.dt),
                                      weights_md(g, true), image_md(g.y, g.dt), g.strides(),
                                      g.dilates(), g.pad_l(), g.pad_r());
    convolution_backward_data::primitive_desc pd(d, user_scratchpad(), engine_, hint);
    memory dy = input(0, image_md(g.y, g.dt));
    // A blocked weight layout chosen by oneDNN: reorder HWIO into it (owned buffer) first.
    memory w = reorder_in(input(1, weights_md(g)), pd.weights_desc());
    const memory::desc x_md = image_md(g.x, g.dt);
    memory dx = output(0, x_md);
    add_step(convolution_backward_data(pd),
             {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, dx}},
             pd.scratchpad_desc());
    // conv2d_backward_data_add: dx += addend, a binary step in place (oneDNN's backward-data
    // pass takes no sum post-op). dlrt's Winograd kernel starts dx from the addend instead.
    if (op.name() == "conv2d_backward_data_add") {
      dnnl::binary::primitive_desc add(dnnl::binary::desc(algorithm::binary_add, x_md, x_md, x_md),
                                       user_scratchpad(), engine_);
      add_step(dnnl::binary(add),
               {{DNNL_ARG_SRC_0, dx}, {DNNL_ARG_SRC_1, input(2, x_md)}, {DNNL_ARG_DST, dx}},
               add.scratchpad_desc());
    }
  }
};

// The forward convolution's backward-weights primitive_desc as oneDNN picks it (activations
// in dlrt's layout, weights `any`): ConvBackwardFilter's, and what conv_create asks about
// (im2col_backward_filter).
convolution_backward_weights::primitive_desc backward_filter_pd(const dnnl::engine& engine,
                                                                const ConvGeom& g) {
  convolution_forward::primitive_desc hint(forward_desc(prop_kind::forward_training, g, false),
                                           engine);
  convolution_backward_weights::desc d(algorithm::convolution_direct, image_md(g.x, g.dt),
                                       weights_md(g, true), image_md(g.y, g.dt), g.strides(),
                                       g.dilates(), g.pad_l(), g.pad_r());
  return convolution_backward_weights::primitive_desc(d, user_scratchpad(), engine, hint);
}

class ConvBackwardFilter : public PrimKernel {
 public:
  ConvBackwardFilter(const dlrt_plugin& p, const OpView& op, const ConvGeom& g)
      : PrimKernel(p, op) {
    const convolution_backward_weights::primitive_desc pd = backward_filter_pd(engine_, g);
    memory x = input(0, image_md(g.x, g.dt));
    memory dy = input(1, image_md(g.y, g.dt));
    memory dw_user = output(0, weights_md(g));
    // A blocked weight layout chosen by oneDNN: dw is computed into an owned buffer of that
    // layout and reordered to HWIO after.
    memory dw = reorder_out_buffer(dw_user, pd.diff_weights_desc());
    add_step(convolution_backward_weights(pd),
             {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}},
             pd.scratchpad_desc());
    finish_reorder_out(dw, dw_user);
  }
};

// ---- backward filter as im2col + matmul (NHWC) -------------------------------------------

constexpr size_t kColChunkBytes = size_t{2} << 20;     // im2col rows of one chunk of images
constexpr size_t kColMaxImageBytes = size_t{8} << 20;  // larger images keep oneDNN's kernel

// Whether conv2d_backward_filter runs as ConvBackwardFilterGemm (file comment): no groups,
// NHWC, no dilation along w, Ci >= 8, one image's im2col rows <= kColMaxImageBytes, and oneDNN's first
// choice a jit kernel no wider than AVX2.
bool im2col_backward_filter(const dnnl::engine& engine, const ConvGeom& g) {
  if (g.groups != 1 || g.x.nchw || g.w.dilation != 1 || g.ci < 8) return false;
  if (g.dt != memory::data_type::f32) return false;  // the im2col rows are f32
  if (static_cast<size_t>(g.y.h * g.y.w * g.kh * g.kw * g.ci) * sizeof(float) > kColMaxImageBytes)
    return false;
  const std::string first = backward_filter_pd(engine, g).impl_info_str();
  return first.rfind("jit:", 0) == 0 && first.find("avx512") == std::string::npos &&
         first.find("amx") == std::string::npos;
}

// x (N,H,W,Ci), dy (N,OH,OW,Co) -> dw (KH,KW,Ci,Co): for each chunk of images, the im2col rows
// (one per output pixel: the window's KH*KW*Ci inputs, in HWI order, zeros where the window
// leaves the image) go to the workspace, and a matmul adds their product with the chunk's dy
// into dw (the first chunk writes it). Matmul primitives (one per chunk size, made here) have
// their scratchpad at the start of the host's workspace, the rows after it.
class ConvBackwardFilterGemm : public Kernel {
 public:
  ConvBackwardFilterGemm(const dlrt_plugin& p, const ConvGeom& g) : threads_(p.threads), g_(g) {
    rows_per_image_ = g.y.h * g.y.w;
    m_ = g.kh * g.kw * g.ci;
    const size_t image_bytes = static_cast<size_t>(rows_per_image_ * m_) * sizeof(float);
    const int64_t n = g.x.n;
    const int64_t most =
        std::clamp<int64_t>(static_cast<int64_t>(kColChunkBytes / image_bytes), 1, n);
    chunk_ = (n + (n + most - 1) / most - 1) /
             ((n + most - 1) / most);  // as many chunks, sizes balanced
    const int64_t chunks = (n + chunk_ - 1) / chunk_, tail = n - (chunks - 1) * chunk_;
    first_ = make(p.engine, chunk_, false);
    if (chunks > 1) rest_ = make(p.engine, chunk_, true);
    if (tail != chunk_) tail_ = make(p.engine, tail, true);
    scratch_bytes_ = (scratch_bytes_ + 63) / 64 * 64;
    col_bytes_ = static_cast<size_t>(chunk_) * image_bytes;
  }

  size_t workspace_bytes() const override { return scratch_bytes_ + col_bytes_; }

  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override {
    ThreadScope threads(threads_);
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* dy = static_cast<float*>(const_cast<void*>(args.inputs[1]));
    char* ws = static_cast<char*>(args.workspace);
    float* cols = reinterpret_cast<float*>(ws + scratch_bytes_);
    const int64_t n = g_.x.n;
    for (int64_t n0 = 0; n0 < n; n0 += chunk_) {
      const int64_t count = std::min(chunk_, n - n0);
      im2col(x, n0, count, cols);
      Matmul& mm = n0 == 0 ? first_ : count == chunk_ ? rest_ : tail_;
      mm.a.set_data_handle(cols);
      mm.b.set_data_handle(dy + n0 * rows_per_image_ * g_.co);
      mm.c.set_data_handle(args.outputs[0]);
      if (mm.scratch) mm.scratch.set_data_handle(ws);
      mm.prim.execute(stream, mm.args);
    }
  }

 private:
  struct Matmul {
    dnnl::primitive prim;
    memory a, b, c, scratch;
    std::unordered_map<int, memory> args;
  };

  // c (M, Co) [+]= a (M, images*rows) x b (images*rows, Co); a is the rows buffer read
  // transposed (strides (1, M)), b dy's rows, c dw in HWIO.
  Matmul make(const dnnl::engine& engine, int64_t images, bool accumulate) {
    const int64_t k = images * rows_per_image_;
    const memory::desc a({m_, k}, memory::data_type::f32, memory::dims{1, m_});
    const memory::desc b({k, g_.co}, memory::data_type::f32, memory::dims{g_.co, 1});
    const memory::desc c({m_, g_.co}, memory::data_type::f32, memory::dims{g_.co, 1});
    dnnl::primitive_attr attr = user_scratchpad();
    if (accumulate) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      attr.set_post_ops(po);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine);
    Matmul mm;
    mm.prim = dnnl::matmul(pd);
    mm.a = memory(a, engine, DNNL_MEMORY_NONE);
    mm.b = memory(b, engine, DNNL_MEMORY_NONE);
    mm.c = memory(c, engine, DNNL_MEMORY_NONE);
    mm.args = {{DNNL_ARG_SRC, mm.a}, {DNNL_ARG_WEIGHTS, mm.b}, {DNNL_ARG_DST, mm.c}};
    if (pd.scratchpad_desc().get_size() > 0) {
      mm.scratch = memory(pd.scratchpad_desc(), engine, DNNL_MEMORY_NONE);
      mm.args.emplace(DNNL_ARG_SCRATCHPAD, mm.scratch);
      scratch_bytes_ = std::max(scratch_bytes_, pd.scratchpad_desc().get_size());
    }
    return mm;
  }

  // The rows of images [n0, n0+count), one per output pixel (n, oh, ow): for each kh the KW*Ci
  // inputs x[n, ih, iw0 .. iw0+KW-1, :] (contiguous: no dilation along w), 0 outside the image.
  void im2col(const float* x, int64_t n0, int64_t count, float* cols) const {
    const plugin::ImageShape& xs = g_.x;
    const int64_t c = xs.c, kw = g_.kw, run = kw * c, oh_n = g_.y.h, ow_n = g_.y.w;
    const int64_t lines = count * oh_n;  // (image, output row) pairs
    const int nt = static_cast<int>(std::min<int64_t>(std::max(threads_, 1), lines));
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (int64_t l = 0; l < lines; ++l) {
      const int64_t n = n0 + l / oh_n, oh = l % oh_n;
      float* dst = cols + l * ow_n * m_;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const int64_t iw0 = g_.w.input_at(ow, 0);
        for (int64_t kh = 0; kh < g_.kh; ++kh, dst += run) {
          const int64_t ih = g_.h.input_at(oh, kh);
          if (ih < 0 || ih >= xs.h) {
            std::memset(dst, 0, static_cast<size_t>(run) * sizeof(float));
            continue;
          }
          const float* src = x + ((n * xs.h + ih) * xs.w) * c;
          if (iw0 >= 0 && iw0 + kw <= xs.w) {
            std::memcpy(dst, src + iw0 * c, static_cast<size_t>(run) * sizeof(float));
            continue;
          }
          for (int64_t t = 0; t < kw; ++t) {
            const int64_t iw = iw0 + t;
            if (iw < 0 || iw >= xs.w)
              std::memset(dst + t * c, 0, static_cast<size_t>(c) * sizeof(float));
            else std::memcpy(dst + t * c, src + iw * c, static_cast<size_t>(c) * sizeof(float));
          }
        }
      }
    }
  }

  int threads_;
  ConvGeom g_;
  int64_t rows_per_image_ = 0, m_ = 0, chunk_ = 0;
  size_t scratch_bytes_ = 0, col_bytes_ = 0;
  Matmul first_, rest_, tail_;
};

// ---- Winograd F(4x4, 3x3) (winograd_conv.hpp) --------------------------------------------

// The op's geometry; a forward op's filter (input 1) marked constant by the host lets the
// kernel keep its transform (winograd_conv.hpp, Geometry::filter_constant).
wino::Geometry winograd_geometry(const OpView& op, const ConvGeom& g) {
  wino::Geometry wg;
  wg.n = g.x.n, wg.h = g.x.h, wg.w = g.x.w, wg.ci = g.ci;
  wg.oh = g.y.h, wg.ow = g.y.w, wg.co = g.co;
  wg.pad_h = g.h.pad_before, wg.pad_w = g.w.pad_before;
  wg.filter_constant = kind_of(op) == ConvKind::forward && op.input_is_constant(1);
  return wg;
}

wino::Pass winograd_pass(const OpView& op) {
  switch (kind_of(op)) {
    case ConvKind::backward_data:
      return wino::Pass::backward_data;
    case ConvKind::backward_filter:
      return wino::Pass::backward_filter;
    case ConvKind::backward_both:
      return wino::Pass::backward_both;
    case ConvKind::forward:
      break;
  }
  return wino::Pass::forward;
}

// The dtype every operand of the op has (all dense), else -1: what dlrt's own convolution
// kernels (Winograd, one channel) need, as they read and write one storage type throughout.
int32_t common_dtype(const OpView& op) {
  const int32_t dtype = op.input(0).dtype;
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list)
      if (t.dtype != dtype || !t.dense()) return -1;
  return dtype;
}

// Whether this CPU's calibration (kernel_choices.hpp) lets dlrt's Winograd run `pass` at
// `pairs` channel pairs: measured faster than oneDNN's direct kernel at the nearer of the two
// calibrated shapes, or not measured (calibrate=skip: the rules below decide alone). Both
// gradients in one sweep need both passes' verdicts.
bool calibrated_winograd(const dlrt_plugin& p, wino::Pass pass, int64_t pairs) {
  const KernelChoices& c = p.choices;
  switch (pass) {
    case wino::Pass::forward:
      return c.winograd_allowed(ChoicePass::forward, pairs);
    case wino::Pass::backward_data:
      return c.winograd_allowed(ChoicePass::backward_data, pairs);
    case wino::Pass::backward_filter:
      return c.winograd_allowed(ChoicePass::backward_filter, pairs);
    case wino::Pass::backward_both:
      return c.winograd_allowed(ChoicePass::backward_data, pairs) &&
             c.winograd_allowed(ChoicePass::backward_filter, pairs);
  }
  return true;
}

// Whether the op runs as Winograd: the plugin's `winograd` option on, an AVX2+FMA CPU, no
// groups (winograd_kernel.inc is a dense convolution; grouped ones go to oneDNN), NHWC, a 3x3 filter at stride 1 without dilation, channel counts the kernel handles, no activation
// other than relu, and an output that the 4x4 tiles cover without much waste: tiles at most
// 2.4x the output's area (3x3 outputs take one tile, 16/9; 2x2 or 1x1 outputs stay direct),
// so the 36 products per tile stay well under the direct 9 per output cell, and enough tiles
// to pay for the filter transform of every run, on a pass the ISA makes worth it
// (wino::worth_it) and that this CPU's calibration found faster than oneDNN's direct kernel
// (calibrated_winograd); option winograd=2 (winograd_force) skips all three. Its operands
// share one dtype the kernel reads and writes itself (f32; bf16; f16 with F16C:
// wino::storage_supported).
bool winograd_applies(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) {
  if (!wino::storage_supported(common_dtype(op))) return false;
  if (!p.winograd || !wino::cpu_supported(p) || g.groups != 1) return false;
  if (g.x.nchw || g.kh != 3 || g.kw != 3 || g.h.stride != 1 || g.w.stride != 1 ||
      g.h.dilation != 1 || g.w.dilation != 1)
    return false;
  if (!wino::channels_fit(g.ci, g.co)) return false;
  if (op.name() == "conv2d_bias_act") {
    const std::string& a = op.get_string("activation");
    if (a != "none" && a != "relu") return false;
  }
  if (p.winograd_force) return true;
  if (!calibrated_winograd(p, winograd_pass(op), g.ci * g.co)) return false;
  const int64_t tiled = (g.y.h + 3) / 4 * 4 * ((g.y.w + 3) / 4 * 4);
  return tiled * 10 <= g.y.h * g.y.w * 24 &&
         wino::worth_it(winograd_geometry(op, g), winograd_pass(op), p.onednn_avx512);
}

std::unique_ptr<Kernel> winograd_kernel(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) {
  const wino::Geometry wg = winograd_geometry(op, g);
  const int32_t storage = common_dtype(op);
  switch (kind_of(op)) {
    case ConvKind::backward_data:  // conv2d_backward_data_add: dx starts from input 2
      return wino::make_kernel(p, wg, wino::Pass::backward_data,
                               op.name() == "conv2d_backward_data_add", false, storage);
    case ConvKind::backward_filter:
      return wino::make_kernel(p, wg, wino::Pass::backward_filter, false, false, storage);
    case ConvKind::backward_both:
      return wino::make_kernel(p, wg, wino::Pass::backward_both, false, false, storage);
    case ConvKind::forward:
      break;
  }
  const bool bias = op.num_inputs() == 3;
  return wino::make_kernel(p, wg, wino::Pass::forward, bias,
                           bias && op.get_string("activation") == "relu", storage);
}

// Whether an op with 16-bit operands would, run as f32 (ops.cc's conversions), take dlrt's
// Winograd kernel.
bool winograd_applies_widened(const dlrt_plugin& p, const OpView& op) {
  const OpView wide = op.with_narrow_floats_as(DLRT_F32);
  return winograd_applies(p, wide, conv_geom(wide));
}

// conv2d_backward off the Winograd sweep: its two parts' kernels (conv2d_backward_data on
// dy, w -> dx and conv2d_backward_filter on x, dy -> dw, each whatever conv_create picks for
// it), run one after the other on the op's operands, sharing the workspace.
class ConvBackwardPair : public Kernel {
 public:
  ConvBackwardPair(std::unique_ptr<Kernel> data, std::unique_ptr<Kernel> filter)
      : data_(std::move(data)), filter_(std::move(filter)) {}
  size_t workspace_bytes() const override {
    return std::max(data_->workspace_bytes(), filter_->workspace_bytes());
  }
  void run(dnnl::stream& stream, const dlrt_kernel_args& args) override {
    const void* data_in[2] = {args.inputs[0], args.inputs[2]};  // dy, w
    void* data_out[1] = {args.outputs[0]};                      // dx
    dlrt_kernel_args a = args;
    a.num_inputs = 2, a.inputs = data_in, a.num_outputs = 1, a.outputs = data_out;
    data_->run(stream, a);
    stream.wait();  // the filter pass reuses the workspace
    const void* filter_in[2] = {args.inputs[1], args.inputs[0]};  // x, dy
    void* filter_out[1] = {args.outputs[1]};                      // dw
    a.inputs = filter_in, a.outputs = filter_out;
    filter_->run(stream, a);
  }

 private:
  std::unique_ptr<Kernel> data_, filter_;
};

OpView data_part(const OpView& op) { return op.part("conv2d_backward_data", {0, 2}, {0}); }
OpView filter_part(const OpView& op) { return op.part("conv2d_backward_filter", {1, 0}, {1}); }

// ---- oneDNN's Winograd (AVX-512, forward) -------------------------------------------------

// Whether a forward convolution runs as oneDNN's Winograd F(4x4, 3x3) kernel
// (jit_wino_4x3:avx512_core; file comment): the `winograd` option on and not forcing dlrt's
// own kernel, oneDNN running AVX-512, f32, no groups, a 3x3 filter at stride 1 without
// dilation, channel counts in multiples of 16 and at least kMinWinogradChannels on each side,
// an output of at least 4x4 (a 3x3 output fills 9 of its one tile's 16 cells: 0.8x of direct
// at batch 64), and at least kMinWinogradFlops of direct work (below that the two reorders
// and the kernel's fixed costs outweigh the multiplications saved: the reference CNN's 11x11
// layer at batch 1, 4.5 MFLOP, took 0.024 ms against 0.020 direct; at batch 8, 36 MFLOP,
// 0.115 against 0.146). A filter the host marks constant (an inference session's weights)
// is transformed into the Winograd domain once (reorder_in); a variable filter is transformed
// on every run, which oneDNN does slowly (70-270 ns per channel pair, 17.5 ms for 512 x 512),
// so it also needs kMinWinogradCellsVariable output cells across the batch to pay for it.
constexpr int64_t kMinWinogradChannels = 32;
constexpr double kMinWinogradFlops = 32e6;
constexpr int64_t kMinWinogradCellsVariable = 16384;
bool onednn_winograd_applies(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) {
  if (kind_of(op) != ConvKind::forward || !p.winograd || p.winograd_force || !p.onednn_avx512)
    return false;
  if (g.dt != memory::data_type::f32 || g.groups != 1 || g.kh != 3 || g.kw != 3 ||
      g.h.stride != 1 || g.w.stride != 1 || g.h.dilation != 1 || g.w.dilation != 1)
    return false;
  if (g.ci % 16 != 0 || g.co % 16 != 0) return false;
  if (g.ci < kMinWinogradChannels || g.co < kMinWinogradChannels) return false;
  if (g.y.h < 4 || g.y.w < 4 || g.flops() < kMinWinogradFlops) return false;
  return op.input_is_constant(1) || g.y.n * g.y.h * g.y.w >= kMinWinogradCellsVariable;
}

// conv2d_backward's one Winograd sweep holds three blocks of planes, S and U' per thread where
// each pass alone holds two blocks and one of them: at 64 x 64 channel pairs that falls out of
// L2 and the sweep loses what sharing dy's transform saves (`dlbench ops --filter
// resnet20.conv`, 64 channels: 1560 us against 1483-1502 for the two passes; 16 channels 2406
// against 3453, 32 channels 1659 against 2041; in the reference CNN's step its 32 -> 64 layer
// 866-1029 us against 917-1197, its 64 -> 64 layer even). Past the cap the two passes run in
// turn.
constexpr int64_t kMaxBackwardBothPairs = 32 * 64;

// dlrt's Winograd kernel runs the op: its rule (winograd_applies), and for conv2d_backward the
// sweep's cap.
bool winograd_takes(const dlrt_plugin& p, const OpView& op, const ConvGeom& g) {
  if (kind_of(op) == ConvKind::backward_both && g.ci * g.co > kMaxBackwardBothPairs) return false;
  return winograd_applies(p, op, g);
}

// dlrt's one-input-channel kernels (conv_one_channel.cc) run the op: the forward pass (no
// activation or relu) or the filter gradient of an NHWC convolution without groups whose
// image has one channel, every operand f32 or every one bf16.
bool one_channel_takes(const OpView& op, const ConvGeom& g) {
  const ConvKind kind = kind_of(op);
  if (kind != ConvKind::forward && kind != ConvKind::backward_filter) return false;
  if (g.groups != 1 || op.name() == "conv2d_transpose") return false;
  if (op.name() == "conv2d_bias_act") {
    const std::string& a = op.get_string("activation");
    if (a != "none" && a != "relu") return false;
  }
  const int32_t dtype = common_dtype(op);
  if (dtype != DLRT_F32 && dtype != DLRT_BF16) return false;
  return conv1ch::fits({g.x, g.y, g.h, g.w});
}

std::unique_ptr<Kernel> one_channel_kernel(const dlrt_plugin& p, const OpView& op,
                                           const ConvGeom& g) {
  const bool bf16 = op.input(0).dtype == DLRT_BF16;
  if (kind_of(op) == ConvKind::backward_filter)
    return conv1ch::make_filter_grad(p, {g.x, g.y, g.h, g.w}, bf16);
  const bool bias = op.num_inputs() == 3;
  return conv1ch::make_forward(p, {g.x, g.y, g.h, g.w}, bias,
                               bias && op.get_string("activation") == "relu", bf16);
}

// Every operand bf16, or every one f16, and dlrt's Winograd kernel runs the op on that
// storage: itself, or for a conv2d_backward past the sweep's cap, both its parts
// (ConvBackwardPair of two such kernels).
bool winograd_on_16bit(const dlrt_plugin& p, const OpView& op) {
  const int32_t dtype = op.input(0).dtype;
  if (dtype != DLRT_BF16 && dtype != DLRT_F16) return false;
  if (winograd_takes(p, op, conv_geom(op))) return true;
  return kind_of(op) == ConvKind::backward_both && winograd_on_16bit(p, data_part(op)) &&
         winograd_on_16bit(p, filter_part(op));
}

}  // namespace

void conv_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  // 16-bit operands, in this order: dlrt's one-channel and Winograd kernels run them on their
  // own storage (bf16; f16 too for Winograd), f32 arithmetic, no conversion passes; Winograd's
  // 2-4x fewer multiplications beat oneDNN's bf16 direct kernels (docs/benchmarks.md, the
  // section on dlrt's Winograd in AVX-512). Other forward and backward-data passes take
  // oneDNN's bf16 primitives where the CPU has AVX512-BF16; any other filter gradient runs its
  // f32 kernel between conversions (ops.cc), whose im2col path beat oneDNN 2.6's bf16
  // backward-weights kernel (reference CNN: 129 vs 37 ms over 120 steps for the third
  // convolution); f16 elsewhere converts too.
  if (one_channel_takes(op, conv_geom(op))) {
    fill_cost(op, p, conv_geom(op).flops(), cost);
    return;
  }
  if (op.has_narrow_float() && winograd_on_16bit(p, op)) {
    fill_cost(op, p, conv_geom(op).flops() * (kind_of(op) == ConvKind::backward_both ? 2 : 1),
              cost);
    return;
  }
  if (kind_of(op) == ConvKind::backward_both) {
    // What its two parts need (f32: the filter pass's rule), and the flops of both.
    require_f32(op);
    dlrt_op_cost part{};
    conv_check(data_part(op), p, &part);
    conv_check(filter_part(op), p, cost);
    if (cost != nullptr) {
      cost->flops += part.flops, cost->bytes += part.bytes;
      cost->estimated_us += part.estimated_us;
    }
    return;
  }
  if (kind_of(op) == ConvKind::backward_filter) require_f32(op);
  else if (op.has_narrow_float() && winograd_applies_widened(p, op)) require_f32(op);
  else require_f32_or_native_bf16(op, p);
  const ConvGeom g = conv_geom(op);
  if (op.name() == "conv2d_bias_act") {
    dnnl::algorithm unused{};
    activation(op, &unused);
  }
  fill_cost(op, p, g.flops(), cost);
}

std::unique_ptr<Kernel> conv_create(const dlrt_plugin& p, const OpView& op) {
  const ConvGeom g = conv_geom(op);
  if (one_channel_takes(op, g)) return one_channel_kernel(p, op, g);
  if (winograd_takes(p, op, g)) return winograd_kernel(p, op, g);
  switch (kind_of(op)) {
    case ConvKind::backward_both:
      return std::make_unique<ConvBackwardPair>(conv_create(p, data_part(op)),
                                                conv_create(p, filter_part(op)));
    case ConvKind::backward_data:
      return make_kernel<ConvBackwardData>(p, op, g);
    case ConvKind::backward_filter: {
      bool gemm = false;
      {
        ThreadScope threads(p.threads);
        gemm = im2col_backward_filter(p.engine, g);
      }
      if (gemm) return make_kernel<ConvBackwardFilterGemm>(p, g);
      return make_kernel<ConvBackwardFilter>(p, op, g);
    }
    case ConvKind::forward:
      break;
  }
  if (grouped_pointwise_fits(op)) return make_grouped_pointwise(p, op);
  if (onednn_winograd_applies(p, op, g)) {
    // oneDNN may still refuse (a post-op its Winograd kernel lacks): then direct.
    try {
      return make_kernel<ConvForward>(p, op, g, true);
    } catch (const dnnl::error&) {
    }
  }
  return make_kernel<ConvForward>(p, op, g);
}

DLRT_CPU_KERNELS(t) {
  for (const char* op :
       {"conv2d", "conv2d_bias_act", "conv2d_backward_data", "conv2d_backward_data_add",
        "conv2d_backward", "conv2d_backward_filter", "conv2d_transpose"})
    t.push_back({op, conv_check, conv_create});
}

}  // namespace dlrt::cpu::prim
