// prim_resize.cc: resize (x -> y, nearest or bilinear) and resize_grad (dy -> dx).
//
//   bilinear, half_pixel, f32    oneDNN resampling_linear forward / backward (oneDNN's only
//                                coordinate rule is half_pixel, with the border clamped)
//   everything else              loops: per output cell its taps (forward); per input cell the
//                                sum of what each output cell it feeds sends back (backward:
//                                a gather, so threads never write the same cell and the sum's
//                                order is fixed: deterministic), accumulated in double
// (NCHW images when data_format is "NCHW".)
//
// oneDNN's nearest rounds (dst + 0.5) * IW/OW - 0.5 in float, whose ties need not fall where
// the spec's exact coordinate puts them (docs/ops.md, resize), so nearest always runs the loop.
// Per-axis taps are computed once in create, with the same integer-over-integer coordinate as
// the reference (core/ops/infer_resize.cc).

#include <cmath>

#include "loop_util.hpp"
#include "prim_common.hpp"

namespace dlrt::cpu::prim {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using dnnl::resampling_backward;
using dnnl::resampling_forward;
using plugin::ImageShape;

struct ResizeGeom {
  ImageShape x, y;  // input image, resized image (dx and dy for resize_grad)
  bool bilinear = false;
  bool backward = false;
  std::string coord, nearest;
};

ResizeGeom resize_geom(const OpView& op) {
  ResizeGeom g;
  const bool nchw = plugin::is_nchw(op.get_string("data_format"), op.name());
  g.backward = op.name() == "resize_grad";
  g.x = plugin::image_shape(g.backward ? op.output(0).dims : op.input(0).dims, nchw);
  g.y = plugin::image_shape(g.backward ? op.input(0).dims : op.output(0).dims, nchw);
  g.bilinear = op.get_string("mode") == "bilinear";
  g.coord = op.get_string("coordinate_transformation");
  g.nearest = op.get_string("nearest_mode");
  return g;
}

// ---- per-axis taps (the spec's arithmetic) -----------------------------------------------

struct Tap {
  int64_t i0, i1;
  double w0, w1;
};

double source_coordinate(const std::string& coord, int64_t o, int64_t in, int64_t out) {
  if (coord == "half_pixel") return double((2 * o + 1) * in - out) / double(2 * out);
  if (coord == "align_corners") return out == 1 ? 0.0 : double(o * (in - 1)) / double(out - 1);
  return double(o * in) / double(out);
}

int64_t round_nearest(const std::string& mode, double c) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(c));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(c));
  const double f = std::floor(c);
  if (c - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::floor(c + 0.5));
}

std::vector<Tap> axis_taps(const ResizeGeom& g, int64_t in, int64_t out) {
  std::vector<Tap> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double c = source_coordinate(g.coord, o, in, out);
    if (!g.bilinear) {
      const int64_t i = std::clamp<int64_t>(round_nearest(g.nearest, c), 0, in - 1);
      taps[o] = {i, i, 1.0, 0.0};
      continue;
    }
    c = std::clamp(c, 0.0, double(in - 1));
    const int64_t i0 = static_cast<int64_t>(std::floor(c));
    taps[o] = {i0, std::min(i0 + 1, in - 1), 1.0 - (c - double(i0)), c - double(i0)};
  }
  return taps;
}

// For each input index along an axis, the (output index, weight) pairs that read it, in
// increasing output order (a tap with weight 0 is left out).
struct Feeds {
  std::vector<int64_t> begin;  // in + 1 offsets into `out` and `w`
  std::vector<int64_t> out;
  std::vector<double> w;
};
Feeds invert(const std::vector<Tap>& taps, int64_t in) {
  std::vector<std::vector<std::pair<int64_t, double>>> lists(static_cast<size_t>(in));
  for (int64_t o = 0; o < static_cast<int64_t>(taps.size()); ++o) {
    const Tap& t = taps[o];
    if (t.i0 == t.i1) {
      lists[t.i0].push_back({o, t.w0 + t.w1});
      continue;
    }
    if (t.w0 != 0) lists[t.i0].push_back({o, t.w0});
    if (t.w1 != 0) lists[t.i1].push_back({o, t.w1});
  }
  Feeds f;
  f.begin.push_back(0);
  for (const auto& l : lists) {
    for (const auto& [o, w] : l) f.out.push_back(o), f.w.push_back(w);
    f.begin.push_back(static_cast<int64_t>(f.out.size()));
  }
  return f;
}

// ---- loops -------------------------------------------------------------------------------

class ResizeLoop : public loops::LoopKernel {
 public:
  ResizeLoop(const dlrt_plugin& p, const ResizeGeom& g, int32_t dtype)
      : LoopKernel(p), g_(g), dtype_(dtype) {
    th_ = axis_taps(g, g.x.h, g.y.h);
    tw_ = axis_taps(g, g.x.w, g.y.w);
    if (g.backward) fh_ = invert(th_, g.x.h), fw_ = invert(tw_, g.x.w);
  }

  void execute(const dlrt_kernel_args& args) override {
    loops::with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* src = static_cast<const T*>(args.inputs[0]);
      T* dst = static_cast<T*>(args.outputs[0]);
      if (g_.backward) backward(src, dst);
      else forward(src, dst);
    });
  }

 private:
  // y (n, oh, ow, c) from its four taps; parallel over the N*OH output rows.
  template <typename T>
  void forward(const T* x, T* y) const {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t grain = std::max<int64_t>(1, loops::kGrainCheap / (4 * ys.w * ys.c));
    loops::parallel_for(ys.n * ys.h, grain, threads_, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / ys.h, oh = r % ys.h;
        const Tap& a = th_[oh];
        for (int64_t ow = 0; ow < ys.w; ++ow) {
          const Tap& q = tw_[ow];
          for (int64_t c = 0; c < ys.c; ++c) {
            const double v = a.w0 * (q.w0 * double(x[xs.index(n, a.i0, q.i0, c)]) +
                                     q.w1 * double(x[xs.index(n, a.i0, q.i1, c)])) +
                             a.w1 * (q.w0 * double(x[xs.index(n, a.i1, q.i0, c)]) +
                                     q.w1 * double(x[xs.index(n, a.i1, q.i1, c)]));
            y[ys.index(n, oh, ow, c)] = static_cast<T>(v);
          }
        }
      }
    });
  }

  // dx (n, ih, iw, c) = sum over the output rows and columns that read ih and iw of weight
  // times dy; parallel over the N*H input rows (each thread writes only its own rows).
  template <typename T>
  void backward(const T* dy, T* dx) const {
    const ImageShape &xs = g_.x, &ys = g_.y;
    const int64_t grain = std::max<int64_t>(1, loops::kGrainCheap / (4 * ys.w * ys.c));
    loops::parallel_for(xs.n * xs.h, grain, threads_, [&](int64_t b, int64_t e) {
      std::vector<double> acc(static_cast<size_t>(xs.c));
      for (int64_t r = b; r < e; ++r) {
        const int64_t n = r / xs.h, ih = r % xs.h;
        for (int64_t iw = 0; iw < xs.w; ++iw) {
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t a = fh_.begin[ih]; a < fh_.begin[ih + 1]; ++a)
            for (int64_t q = fw_.begin[iw]; q < fw_.begin[iw + 1]; ++q) {
              const double w = fh_.w[a] * fw_.w[q];
              for (int64_t c = 0; c < xs.c; ++c)
                acc[c] += w * double(dy[ys.index(n, fh_.out[a], fw_.out[q], c)]);
            }
          for (int64_t c = 0; c < xs.c; ++c) dx[xs.index(n, ih, iw, c)] = static_cast<T>(acc[c]);
        }
      }
    });
  }

  ResizeGeom g_;
  int32_t dtype_;
  std::vector<Tap> th_, tw_;
  Feeds fh_, fw_;
};

// ---- oneDNN (bilinear, half_pixel) -------------------------------------------------------

class LinearForward : public PrimKernel {
 public:
  LinearForward(const dlrt_plugin& p, const OpView& op, const ResizeGeom& g) : PrimKernel(p, op) {
    resampling_forward::primitive_desc pd(
        resampling_forward::desc(prop_kind::forward_inference, algorithm::resampling_linear,
                                 image_md(g.x), image_md(g.y)),
        user_scratchpad(), engine_);
    add_step(resampling_forward(pd),
             {{DNNL_ARG_SRC, input(0, image_md(g.x))}, {DNNL_ARG_DST, output(0, image_md(g.y))}},
             pd.scratchpad_desc());
  }
};

class LinearBackward : public PrimKernel {
 public:
  LinearBackward(const dlrt_plugin& p, const OpView& op, const ResizeGeom& g) : PrimKernel(p, op) {
    resampling_forward::primitive_desc hint(
        resampling_forward::desc(prop_kind::forward_training, algorithm::resampling_linear,
                                 image_md(g.x), image_md(g.y)),
        engine_);
    resampling_backward::primitive_desc pd(
        resampling_backward::desc(algorithm::resampling_linear, image_md(g.x), image_md(g.y)),
        user_scratchpad(), engine_, hint);
    add_step(resampling_backward(pd),
             {{DNNL_ARG_DIFF_DST, input(0, image_md(g.y))},
              {DNNL_ARG_DIFF_SRC, output(0, image_md(g.x))}},
             pd.scratchpad_desc());
  }
};

bool runs_on_onednn(const OpView& op, const ResizeGeom& g) {
  return g.bilinear && g.coord == "half_pixel" && op.input(0).dtype == DLRT_F32;
}

}  // namespace

void resize_check(const OpView& op, const dlrt_plugin& p, dlrt_op_cost* cost) {
  loops::expect_float(op, op.input(0));
  const ResizeGeom g = resize_geom(op);
  if (cost != nullptr) fill_cost(op, p, 8.0 * static_cast<double>(g.y.numel()), cost);
}

std::unique_ptr<Kernel> resize_create(const dlrt_plugin& p, const OpView& op) {
  const ResizeGeom g = resize_geom(op);
  if (runs_on_onednn(op, g)) {
    if (g.backward) return make_kernel<LinearBackward>(p, op, g);
    return make_kernel<LinearForward>(p, op, g);
  }
  return std::make_unique<ResizeLoop>(p, g, op.input(0).dtype);
}

DLRT_CPU_KERNELS(t) {
  for (const char* op : {"resize", "resize_grad"}) t.push_back({op, resize_check, resize_create});
}

}  // namespace dlrt::cpu::prim
