// loop_layer_norm.cc: layer_norm and layer_norm_grad on the cpu plugin (core/ops/
// infer_layer_norm.cc has the arithmetic). Plain loops, not oneDNN's layer_normalization
// primitive: its statistics are (rows) f32 like ours, but a loop kernel keeps the saved
// statistics' convention (rstd, not variance) without a conversion pass, and the rows are
// independent, so OpenMP over rows is the whole parallel story.
//
// x (..., D) is (rows, D). Forward: one row per iteration, mean and variance accumulated in
// double (two passes over the row, which sits in cache). Backward: dx per row (parallel over
// rows); dgamma and dbeta are column sums over rows, parallel over columns, each thread
// summing its columns in row order (deterministic: no atomics, no per-thread partials).
#include <cmath>

#include "loop_util.hpp"

namespace dlrt::cpu::loops {
namespace {

void check_layer_norm(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(op.name() == "layer_norm_grad" ? 1 : 0));
  fill_cost(op, 8, cost);
}

struct RowShape {
  int64_t rows, d;
};
RowShape row_shape(const TensorView& x) {
  int64_t n = 1;
  for (size_t i = 0; i + 1 < x.dims.size(); ++i) n *= x.dims[i];
  return {n, x.dims.back()};
}

class LayerNormKernel : public LoopKernel {
 public:
  LayerNormKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        s_(row_shape(op.input(0))),
        eps_(op.get_float("epsilon")) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      const T* gamma = static_cast<const T*>(args.inputs[1]);
      const T* beta = static_cast<const T*>(args.inputs[2]);
      T* y = static_cast<T*>(args.outputs[0]);
      T* mean = static_cast<T*>(args.outputs[1]);
      T* rstd = static_cast<T*>(args.outputs[2]);
      const int64_t D = s_.d;
      parallel_for(s_.rows, std::max<int64_t>(1, kGrainCheap / D), threads_,
                   [&](int64_t b, int64_t e) {
                     for (int64_t r = b; r < e; ++r) {
                       const T* xr = x + r * D;
                       double m = 0, v = 0;
                       for (int64_t j = 0; j < D; ++j) m += double(xr[j]);
                       m /= double(D);
                       for (int64_t j = 0; j < D; ++j) {
                         const double c = double(xr[j]) - m;
                         v += c * c;
                       }
                       const double s = 1.0 / std::sqrt(v / double(D) + eps_);
                       const T tm = T(m), ts = T(s);
                       T* yr = y + r * D;
                       for (int64_t j = 0; j < D; ++j)
                         yr[j] = (xr[j] - tm) * ts * gamma[j] + beta[j];
                       mean[r] = tm;
                       rstd[r] = ts;
                     }
                   });
    });
  }

 private:
  int32_t dtype_;
  RowShape s_;
  double eps_;
};

// dx = rstd/D * (D*g - sum(g) - xhat*sum(g*xhat)) per row, g = dy*gamma, xhat = (x-mean)*rstd;
// dgamma = sum over rows of dy*xhat, dbeta = sum over rows of dy.
class LayerNormGradKernel : public LoopKernel {
 public:
  LayerNormGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(1).dtype), s_(row_shape(op.input(1))) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* dy = static_cast<const T*>(args.inputs[0]);
      const T* x = static_cast<const T*>(args.inputs[1]);
      const T* gamma = static_cast<const T*>(args.inputs[2]);
      const T* mean = static_cast<const T*>(args.inputs[3]);
      const T* rstd = static_cast<const T*>(args.inputs[4]);
      T* dx = static_cast<T*>(args.outputs[0]);
      T* dgamma = static_cast<T*>(args.outputs[1]);
      T* dbeta = static_cast<T*>(args.outputs[2]);
      const int64_t D = s_.d, R = s_.rows;
      parallel_for(R, std::max<int64_t>(1, kGrainCheap / D), threads_, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T *dyr = dy + r * D, *xr = x + r * D;
          const double m = double(mean[r]), s = double(rstd[r]);
          double sum_g = 0, sum_gx = 0;
          for (int64_t j = 0; j < D; ++j) {
            const double g = double(dyr[j]) * double(gamma[j]);
            sum_g += g;
            sum_gx += g * (double(xr[j]) - m) * s;
          }
          T* dxr = dx + r * D;
          for (int64_t j = 0; j < D; ++j) {
            const double g = double(dyr[j]) * double(gamma[j]);
            const double xhat = (double(xr[j]) - m) * s;
            dxr[j] = T(s / double(D) * (double(D) * g - sum_g - xhat * sum_gx));
          }
        }
      });
      parallel_for(D, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, R)), threads_,
                   [&](int64_t b, int64_t e) {
                     for (int64_t j = b; j < e; ++j) {
                       double sg = 0, sb = 0;
                       for (int64_t r = 0; r < R; ++r) {
                         const double g = double(dy[r * D + j]);
                         sg += g * (double(x[r * D + j]) - double(mean[r])) * double(rstd[r]);
                         sb += g;
                       }
                       dgamma[j] = T(sg);
                       dbeta[j] = T(sb);
                     }
                   });
    });
  }

 private:
  int32_t dtype_;
  RowShape s_;
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"layer_norm", check_layer_norm, make<LayerNormKernel>});
  t.push_back({"layer_norm_grad", check_layer_norm, make<LayerNormGradKernel>});
}

}  // namespace dlrt::cpu::loops
