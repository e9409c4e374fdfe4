// prim_global_pool.cc: pooling over all of H and W.
//
//   global_avg_pool2d            x (N,H,W,C)       -> y (N,C)   oneDNN pooling_avg, window (H,W)
//   global_max_pool2d            x                 -> y         loop: first max (NaN wins)
//   global_avg_pool2d_backward   dy (N,C)          -> dx (input_shape) = dy / (H*W): loop
//   global_max_pool2d_backward   x, dy (N,C)       -> dx: dy at the first max, 0 elsewhere: loop
// (NCHW images when data_format is "NCHW"; keepdims gives y (N,1,1,C) / (N,C,1,1).)
//
// The pooled tensor holds element (n, c) at n*C + c in every one of its shapes, which is also
// where a 1x1 image of either layout holds it, so oneDNN sees y as a (N,C,1,1) image. Max
// pooling is a loop for the reason loop_pool.cc gives (oneDNN 2.6 lets a NaN lose its window,
// against the spec); the average backward pass is one broadcast, cheaper as a loop than a
// pooling_backward with its forward hint.

#include <cmath>

#include "loop_util.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::pooling_forward;
using dnnl::prop_kind;
using plugin::ImageShape;

// The image (x, or dx for global_avg_pool2d_backward, from input_shape) of the op.
ImageShape global_geom(const OpView& op) {
  const std::string& n = op.name();
  const bool nchw = plugin::is_nchw(op.get_string("data_format"), n);
  if (n == "global_avg_pool2d_backward")
    return plugin::image_shape(op.get_ints("input_shape", 4), nchw);
  return plugin::image_shape(op.input(0).dims, nchw);
}

class GlobalAvgForward : public PrimKernel {
 public:
  GlobalAvgForward(const dlrt_plugin& p, const OpView& op, const ImageShape& x)
      : PrimKernel(p, op) {
    const ImageShape y = plugin::image_shape(x.n, 1, 1, x.c, x.nchw);
    pooling_forward::primitive_desc pd(
        pooling_forward::desc(prop_kind::forward_inference, algorithm::pooling_avg_exclude_padding,
                              image_md(x), image_md(y), {1, 1}, {x.h, x.w}, {0, 0}, {0, 0}),
        user_scratchpad(), engine_);
    add_step(pooling_forward(pd),
             {{DNNL_ARG_SRC, input(0, image_md(x))}, {DNNL_ARG_DST, output(0, image_md(y))}},
             pd.scratchpad_desc());
  }
};

// The first max of plane (n, c), rows first; a NaN beats everything and the first NaN stays.
inline int64_t plane_argmax(const ImageShape& s, const float* x, int64_t n, int64_t c) {
  int64_t best = s.index(n, 0, 0, c);
  for (int64_t h = 0; h < s.h; ++h)
    for (int64_t w = 0; w < s.w; ++w) {
      const int64_t k = s.index(n, h, w, c);
      if (x[k] > x[best] || (std::isnan(x[k]) && !std::isnan(x[best]))) best = k;
    }
  return best;
}

// global_max_pool2d (x -> y) and global_max_pool2d_backward (x, dy -> dx), parallel over the
// N*C planes (each writes only its own cells).
class GlobalMaxLoop : public loops::LoopKernel {
 public:
  GlobalMaxLoop(const dlrt_plugin& p, const ImageShape& x, bool backward)
      : LoopKernel(p), x_(x), backward_(backward) {}

  void execute(const dlrt_kernel_args& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    if (backward_) std::fill(out, out + x_.numel(), 0.0f);
    const auto* dy = backward_ ? static_cast<const float*>(args.inputs[1]) : nullptr;
    const int64_t grain = std::max<int64_t>(1, loops::kGrainCheap / (x_.h * x_.w));
    loops::parallel_for(x_.n * x_.c, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const int64_t n = p / x_.c, c = p % x_.c;
        const int64_t k = plane_argmax(x_, x, n, c);
        if (backward_) out[k] = dy[p];
        else out[p] = x[k];
      }
    });
  }

 private:
  ImageShape x_;
  bool backward_;
};

// dy (N,C) -> dx (N,H,W,C): every cell of plane (n, c) gets dy[n*C + c] / (H*W). NHWC: each
// of the N*H*W rows is the scaled dy row of its image; NCHW: each plane one value.
class GlobalAvgBackwardLoop : public loops::LoopKernel {
 public:
  GlobalAvgBackwardLoop(const dlrt_plugin& p, const ImageShape& x) : LoopKernel(p), x_(x) {}

  void execute(const dlrt_kernel_args& args) override {
    const auto* dy = static_cast<const float*>(args.inputs[0]);
    float* dx = static_cast<float*>(args.outputs[0]);
    const float inv = 1.0f / static_cast<float>(x_.h * x_.w);
    const int64_t hw = x_.h * x_.w, c = x_.c;
    if (x_.nchw) {
      loops::parallel_for(x_.n * c, std::max<int64_t>(1, loops::kGrainCheap / hw), threads_,
                          [&](int64_t b, int64_t e) {
                            for (int64_t p = b; p < e; ++p)
                              std::fill(dx + p * hw, dx + (p + 1) * hw, dy[p] * inv);
                          });
      return;
    }
    loops::parallel_for(x_.n * hw, std::max<int64_t>(1, loops::kGrainCheap / c), threads_,
                        [&](int64_t b, int64_t e) {
                          for (int64_t r = b; r < e; ++r) {
                            const float* g = dy + (r / hw) * c;
                            float* row = dx + r * c;
                            for (int64_t k = 0; k < c; ++k) row[k] = g[k] * inv;
                          }
                        });
  }

 private:
  ImageShape x_;
};

}  // namespace

void global_pool_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  require_f32(op);
  const ImageShape x = global_geom(op);
  fill_cost(op, p, static_cast<double>(x.numel()), cost);
}

std::unique_ptr<Kernel> global_pool_create(const dlrt_plugin& p, const OpView& op) {
  const ImageShape x = global_geom(op);
  const std::string& n = op.name();
  if (n == "global_avg_pool2d") return make_kernel<GlobalAvgForward>(p, op, x);
  if (n == "global_avg_pool2d_backward") return std::make_unique<GlobalAvgBackwardLoop>(p, x);
  return std::make_unique<GlobalMaxLoop>(p, x, n == "global_max_pool2d_backward");
}

DLRT_CPU_KERNELS(t) {
  for (const char* op : {"global_avg_pool2d", "global_max_pool2d", "global_avg_pool2d_backward",
                         "global_max_pool2d_backward"})
    t.push_back({op, global_pool_check, global_pool_create});
}

}  // namespace dlrt::cpu::prim
