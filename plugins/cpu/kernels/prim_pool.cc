// prim_pool.cc: the pooling family on oneDNN's pooling primitives.
//
//   max_pool2d           x (N,H,W,C)       -> y (N,OH,OW,C)   padded cells are -inf
//   avg_pool2d           x                 -> y               padded cells excluded from the count
//   max_pool2d_backward  x, dy (N,OH,OW,C) -> dx (shape of x) gradient to the first max
//   max_pool2d_backward_relu_bias  x, dy -> dz (masked by x > 0), db (C)   (loop_pool.cc)
//   avg_pool2d_backward  dy                -> dx (input_shape)
// (NCHW images when data_format is "NCHW".)
//
// SAME/VALID become explicit padding_l/padding_r (docs/ops.md: before = total/2). TF's SAME
// average counts only the cells inside the image: oneDNN's pooling_avg_exclude_padding.
//
// Max pooling (forward and backward, both layouts) runs as loops instead (loop_pool.cc): oneDNN
// 2.6's max pooling lets a NaN lose its window, against the spec, and its backward pass needs
// the forward pass's workspace, which the op's inputs (x, dy) do not carry, so it cost a
// forward pass more. Average pooling uses the primitives below.

#include "loop_pool.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::pooling_backward;
using dnnl::pooling_forward;
using dnnl::prop_kind;
using plugin::ImageShape;
using plugin::Window1D;

struct PoolGeom {
  ImageShape x, y;
  Window1D h, w;
  bool max = true;
  bool backward = false;

  memory::dims strides() const { return {h.stride, w.stride}; }
  memory::dims kernel() const { return {h.k, w.k}; }
  memory::dims pad_l() const { return {h.pad_before, w.pad_before}; }
  memory::dims pad_r() const { return {h.pad_after, w.pad_after}; }
  algorithm alg() const {
    return max ? algorithm::pooling_max : algorithm::pooling_avg_exclude_padding;
  }
  double flops() const { return static_cast<double>(y.numel()) * h.k * w.k; }
};

// x and y (dy for the backward ops) as the descriptor states them, with the explicit pads.
PoolGeom pool_geom(const OpView& op) {
  PoolGeom g;
  const bool fused = op.name() == "max_pool2d_backward_relu_bias";
  g.max = op.name() == "max_pool2d" || op.name() == "max_pool2d_backward" || fused;
  g.backward = op.name() == "max_pool2d_backward" || op.name() == "avg_pool2d_backward" || fused;
  const bool nchw = op.get_string("data_format") == "NCHW";
  const auto& ksize = op.get_ints("ksize", 2);
  const auto& strides = op.get_ints("strides", 2);
  if (op.name() == "avg_pool2d_backward")  // dy -> dx
    g.x = plugin::image_shape(op.output(0).dims, nchw);
  else g.x = plugin::image_shape(op.input(0).dims, nchw);  // x [, dy]
  g.y = plugin::image_shape(g.backward ? op.input(op.num_inputs() - 1).dims : op.output(0).dims,
                            nchw);
  g.h = plugin::window_of(op, 0, g.x.h, ksize[0], strides[0], 1, g.y.h);
  g.w = plugin::window_of(op, 1, g.x.w, ksize[1], strides[1], 1, g.y.w);
  return g;
}

pooling_forward::desc forward_desc(prop_kind prop, const PoolGeom& g) {
  return pooling_forward::desc(prop, g.alg(), image_md(g.x), image_md(g.y), g.strides(), g.kernel(),
                               g.pad_l(), g.pad_r());
}

class PoolForward : public PrimKernel {
 public:
  PoolForward(const dlrt_plugin& p, const OpView& op, const PoolGeom& g) : PrimKernel(p, op) {
    pooling_forward::primitive_desc pd(forward_desc(prop_kind::forward_inference, g),
                                       user_scratchpad(), engine_);
    add_step(pooling_forward(pd),
             {{DNNL_ARG_SRC, input(0, image_md(g.x))}, {DNNL_ARG_DST, output(0, image_md(g.y))}},
             pd.scratchpad_desc());
  }
};

class AvgPoolBackward : public PrimKernel {
 public:
  AvgPoolBackward(const dlrt_plugin& p, const OpView& op, const PoolGeom& g) : PrimKernel(p, op) {
    pooling_forward::primitive_desc hint(forward_desc(prop_kind::forward_training, g), engine_);
    pooling_backward::desc d(g.alg(), image_md(g.x), image_md(g.y), g.strides(), g.kernel(),
                             g.pad_l(), g.pad_r());
    pooling_backward::primitive_desc pd(d, user_scratchpad(), engine_, hint);
    add_step(pooling_backward(pd),
             {{DNNL_ARG_DIFF_DST, input(0, image_md(g.y))},
              {DNNL_ARG_DIFF_SRC, output(0, image_md(g.x))}},
             pd.scratchpad_desc());
  }
};

}  // namespace

// Every operand bf16: the 16-bit max-pool loops run it (the 2x2 NHWC pool, the fused
// backward op included; loop_pool.hpp).
bool bf16_max_pool(const OpView& op, const PoolGeom& g) {
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list)
      if (t.dtype != DLRT_BF16) return false;
  return g.max && loops::runs_bf16({g.x, g.y, g.h, g.w});
}

void pool_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  const PoolGeom g = pool_geom(op);
  if (!bf16_max_pool(op, g)) require_f32(op);
  fill_cost(op, p, g.flops(), cost);
}

std::unique_ptr<Kernel> pool_create(const dlrt_plugin& p, const OpView& op) {
  const PoolGeom g = pool_geom(op);
  // Max pooling: loops (loop_pool.cc), which follow the spec's NaN rule and need neither a
  // forward pass nor a workspace for the backward one.
  if (g.max)
    return loops::make_max_pool(p, {g.x, g.y, g.h, g.w}, g.backward,
                                bf16_max_pool(op, g) ? DLRT_BF16 : DLRT_F32,
                                op.name() == "max_pool2d_backward_relu_bias");
  if (!g.backward) return make_kernel<PoolForward>(p, op, g);
  return make_kernel<AvgPoolBackward>(p, op, g);
}

DLRT_CPU_KERNELS(t) {
  for (const char* op : {"max_pool2d", "max_pool2d_backward", "max_pool2d_backward_relu_bias",
                         "avg_pool2d", "avg_pool2d_backward"})
    t.push_back({op, pool_check, pool_create});
}

}  // namespace dlrt::cpu::prim
