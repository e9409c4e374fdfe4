// loop_batch_norm.cc: batch_norm_grad and batch_norm_relu_grad on the cpu plugin, the
// backward ops of batch_norm_train without and with activation relu (core/ops/infer_norm.cc;
// the reference's arithmetic is plugins/reference/kernels/norm.cc). The forward passes are
// oneDNN's (prim_norm.cc).
//
// Why not oneDNN: its batch-norm backward with fuse_norm_relu reads the forward pass's
// workspace (the ReLU's mask), which the op does not take; batch_norm_relu_grad rebuilds the
// mask from x instead. And without the ReLU, oneDNN 2.6's backward pass took 1.5x this loop's
// time on ResNet-20's shapes (`dlbench ops --filter resnet20.bn`: 956 vs 629 us at
// (128,28,28,16) on the Xeon of docs/benchmarks.md), so both ops run here. Two passes over x
// and dy:
//
//   per channel c (C each):  a = scale*inv_std,  b = bias - mean*a   (the ReLU's input is a*x + b)
//   pass 1, sums over the channel's count n values:
//       g = dy where a*x + b > 0, else 0 (batch_norm_grad: g = dy);
//       s0 = sum(g),   s1 = sum(g*(x - mean))
//   dbias = s0, dscale = inv_std*s1 (= sum(g*xhat)), and with k = s1*inv_std^2/n, m0 = s0/n:
//   pass 2:  dx = a*(g - m0 - (x - mean)*k)     (= scale*inv_std/n*(n*g - s0 - xhat*dscale))
//
// NHWC and (N,C) f32 (C innermost: "rows" of C values): pass 1 splits the rows among the
// threads, each summing its rows per channel in float blocks of kBlock rows added into double
// partials (scratch made in create), combined in thread order (the same bits on every run
// with the same thread count); pass 2 splits the rows again. The per-row loops over C are
// compiled for C = 16, 32 and 64 (ResNets' widths; the loop over C becomes whole vectors) and
// for any C, each in an AVX2 and a portable build (loop_simd.hpp). NCHW and f64 take a plain
// loop per channel in double, threads splitting the channels.
#include <cmath>
#include <vector>

#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "norm_layout.hpp"

namespace dlrt::cpu::loops {
namespace {

constexpr int64_t kBlock = 64;  // rows summed in float before adding into the double partials

// The per-channel constants both passes read (C each, f32).
struct Coeffs {
  const float* a;     // scale*inv_std
  const float* b;     // bias - mean*a
  const float* mean;  // saved_mean
  const float* k;     // s1*inv_std^2/n (pass 2 only)
  const float* m0;    // s0/n (pass 2 only)
};

// Pass 1 over rows [r0, r1) of an (rows, C) block: s0 += sum(g), s1 += sum(g*(x - mean)) per
// channel. `f` is 2*C floats of scratch. kC > 0 fixes C at compile time; kRelu masks dy.
template <int64_t kC, bool kRelu>
DLRT_SIMD_INLINE void sums_body(const float* __restrict dy, const float* __restrict x,
                                const Coeffs& k, int64_t c_rt, int64_t r0, int64_t r1,
                                float* __restrict f, double* __restrict s0,
                                double* __restrict s1) {
  const int64_t C = kC > 0 ? kC : c_rt;
  const float *__restrict a = k.a, *__restrict b = k.b, *__restrict mean = k.mean;
  float *__restrict f0 = f, *__restrict f1 = f + C;
  for (int64_t r = r0; r < r1; r += kBlock) {
    const int64_t end = std::min(r1, r + kBlock);
    for (int64_t c = 0; c < C; ++c) f0[c] = 0.f, f1[c] = 0.f;
    for (int64_t i = r; i < end; ++i) {
      const float *__restrict dyr = dy + i * C, *__restrict xr = x + i * C;
      for (int64_t c = 0; c < C; ++c) {
        const float xv = xr[c];
        const float g = !kRelu || a[c] * xv + b[c] > 0.f ? dyr[c] : 0.f;
        f0[c] += g;
        f1[c] += g * (xv - mean[c]);
      }
    }
    for (int64_t c = 0; c < C; ++c) s0[c] += double(f0[c]), s1[c] += double(f1[c]);
  }
}

// Pass 2 over rows [r0, r1): dx = a*(g - m0 - (x - mean)*k).
template <int64_t kC, bool kRelu>
DLRT_SIMD_INLINE void dx_body(const float* __restrict dy, const float* __restrict x,
                              const Coeffs& k, int64_t c_rt, int64_t r0, int64_t r1,
                              float* __restrict dx) {
  const int64_t C = kC > 0 ? kC : c_rt;
  const float *__restrict a = k.a, *__restrict b = k.b, *__restrict mean = k.mean;
  const float *__restrict kk = k.k, *__restrict m0 = k.m0;
  for (int64_t i = r0; i < r1; ++i) {
    const float *__restrict dyr = dy + i * C, *__restrict xr = x + i * C;
    float* __restrict dxr = dx + i * C;
    for (int64_t c = 0; c < C; ++c) {
      const float xv = xr[c];
      const float g = !kRelu || a[c] * xv + b[c] > 0.f ? dyr[c] : 0.f;
      dxr[c] = a[c] * (g - m0[c] - (xv - mean[c]) * kk[c]);
    }
  }
}

// The compiled widths, dispatched on C.
template <bool kAvx2, bool kRelu>
struct Passes;
#define DLRT_BN_PASSES(ATTR, IS_AVX2, RELU)                                                     \
  template <>                                                                                   \
  struct Passes<IS_AVX2, RELU> {                                                                \
    ATTR static void sums(const float* dy, const float* x, const Coeffs& k, int64_t C,         \
                          int64_t r0, int64_t r1, float* f, double* s0, double* s1) {          \
      switch (C) {                                                                              \
        case 16: return sums_body<16, RELU>(dy, x, k, C, r0, r1, f, s0, s1);                          \
        case 32: return sums_body<32, RELU>(dy, x, k, C, r0, r1, f, s0, s1);                          \
        case 64: return sums_body<64, RELU>(dy, x, k, C, r0, r1, f, s0, s1);                          \
        default: return sums_body<0, RELU>(dy, x, k, C, r0, r1, f, s0, s1);                           \
      }                                                                                         \
    }                                                                                           \
    ATTR static void dx(const float* dy, const float* x, const Coeffs& k, int64_t C, int64_t r0, \
                        int64_t r1, float* out) {                                               \
      switch (C) {                                                                              \
        case 16: return dx_body<16, RELU>(dy, x, k, C, r0, r1, out);                                  \
        case 32: return dx_body<32, RELU>(dy, x, k, C, r0, r1, out);                                  \
        case 64: return dx_body<64, RELU>(dy, x, k, C, r0, r1, out);                                  \
        default: return dx_body<0, RELU>(dy, x, k, C, r0, r1, out);                                   \
      }                                                                                         \
    }                                                                                           \
  };
DLRT_BN_PASSES(DLRT_TARGET_AVX2, true, true)
DLRT_BN_PASSES(DLRT_TARGET_AVX2, true, false)
DLRT_BN_PASSES(, false, true)
DLRT_BN_PASSES(, false, false)
#undef DLRT_BN_PASSES

void check_batch_norm_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(1));
  plugin::norm_layout(op.input(1).dims, op.get_string("data_format"), op.name());
  fill_cost(op, 12, cost);
}

// Inputs: dy, x, scale, [bias,] saved_mean, saved_inv_std (bias only with the ReLU).
class BatchNormGradKernel : public LoopKernel {
 public:
  BatchNormGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        relu_(op.name() == "batch_norm_relu_grad"),
        dtype_(op.input(1).dtype),
        l_(plugin::norm_layout(op.input(1).dims, op.get_string("data_format"), op.name())) {
    const size_t C = size_t(l_.c);
    coeff_.assign(4 * C, 0.f);
    // The passes' build: AVX2 or portable, with or without the mask.
    sums_ = relu_ ? (avx2_ ? &Passes<true, true>::sums : &Passes<false, true>::sums)
                  : (avx2_ ? &Passes<true, false>::sums : &Passes<false, false>::sums);
    dx_ = relu_ ? (avx2_ ? &Passes<true, true>::dx : &Passes<false, true>::dx)
                : (avx2_ ? &Passes<true, false>::dx : &Passes<false, false>::dx);
    partial_.assign(size_t(threads_) * 2 * C, 0.0);
    block_.assign(size_t(threads_) * 2 * C, 0.f);
  }

  void execute(const dlrt_kernel_args& args) override {
    if (dtype_ == DLRT_F32 && l_.inner == 1) return rows_f32(args);
    with_float(dtype_, [&](auto t) { per_channel<decltype(t)>(args); });
  }

 private:
  // NHWC / (N,C) f32: see the top of the file.
  void rows_f32(const dlrt_kernel_args& args) {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const float* x = static_cast<const float*>(args.inputs[1]);
    const float* scale = static_cast<const float*>(args.inputs[2]);
    const int stats = relu_ ? 4 : 3;  // saved_mean's index
    const float* bias = relu_ ? static_cast<const float*>(args.inputs[3]) : nullptr;
    const float* mean = static_cast<const float*>(args.inputs[stats]);
    const float* inv_std = static_cast<const float*>(args.inputs[stats + 1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    float* dscale = static_cast<float*>(args.outputs[1]);
    float* dbias = static_cast<float*>(args.outputs[2]);
    const int64_t C = l_.c, rows = l_.outer;
    float *a = coeff_.data(), *b = a + C, *kk = b + C, *m0 = kk + C;
    for (int64_t c = 0; c < C; ++c) {
      a[c] = scale[c] * inv_std[c];
      b[c] = relu_ ? bias[c] - mean[c] * a[c] : 0.f;  // b: the mask only
    }
    const Coeffs k{a, b, mean, kk, m0};
    std::fill(partial_.begin(), partial_.end(), 0.0);
    // Pass 1: thread t sums rows [rows*t/nt, rows*(t+1)/nt) into its own partials.
    const int nt = static_cast<int>(
        std::clamp<int64_t>(rows * C / kGrainCheap, 1, int64_t(threads_)));
    auto sums = [&](int t) {
      const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
      double* s = partial_.data() + size_t(t) * 2 * size_t(C);
      float* f = block_.data() + size_t(t) * 2 * size_t(C);
      sums_(dy, x, k, C, r0, r1, f, s, s + C);
    };
    if (nt == 1 || omp_in_parallel()) {
      for (int t = 0; t < nt; ++t) sums(t);
    } else {
#pragma omp parallel for num_threads(nt) schedule(static, 1)
      for (int t = 0; t < nt; ++t) sums(t);
    }
    const double n = double(rows);
    for (int64_t c = 0; c < C; ++c) {
      double s0 = 0, s1 = 0;
      for (int t = 0; t < nt; ++t) {  // thread order: the same sum on every run
        s0 += partial_[size_t(t) * 2 * size_t(C) + size_t(c)];
        s1 += partial_[size_t(t) * 2 * size_t(C) + size_t(C + c)];
      }
      const double is = double(inv_std[c]);
      dbias[c] = float(s0);
      dscale[c] = float(s1 * is);
      kk[c] = float(s1 * is * is / n);
      m0[c] = float(s0 / n);
    }
    // Pass 2: rows split again.
    parallel_for(rows, std::max<int64_t>(1, kGrainCheap / C), threads_,
                 [&](int64_t r0, int64_t r1) { dx_(dy, x, k, C, r0, r1, dx); });
  }

  // Any layout and f64: channel c's values are (o, c, i) at (o*C + c)*inner + i; threads split
  // the channels, each summing its own in double (no partials).
  template <typename T>
  void per_channel(const dlrt_kernel_args& args) {
    const T* dy = static_cast<const T*>(args.inputs[0]);
    const T* x = static_cast<const T*>(args.inputs[1]);
    const T* scale = static_cast<const T*>(args.inputs[2]);
    const int stats = relu_ ? 4 : 3;
    const T* bias = relu_ ? static_cast<const T*>(args.inputs[3]) : nullptr;
    const T* mean = static_cast<const T*>(args.inputs[stats]);
    const T* inv_std = static_cast<const T*>(args.inputs[stats + 1]);
    T* dx = static_cast<T*>(args.outputs[0]);
    T* dscale = static_cast<T*>(args.outputs[1]);
    T* dbias = static_cast<T*>(args.outputs[2]);
    const int64_t C = l_.c, inner = l_.inner, outer = l_.outer;
    const double n = double(l_.count());
    parallel_for(C, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, l_.count())), threads_,
                 [&](int64_t c0, int64_t c1) {
                   for (int64_t c = c0; c < c1; ++c) {
                     const double is = double(inv_std[c]), m = double(mean[c]);
                     const double a = double(scale[c]) * is;
                     const double b = relu_ ? double(bias[c]) - m * a : 0.0;
                     auto g = [&](int64_t i) {
                       return !relu_ || a * double(x[i]) + b > 0 ? double(dy[i]) : 0.0;
                     };
                     double s0 = 0, s1 = 0;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i) {
                         s0 += g(i);
                         s1 += g(i) * (double(x[i]) - m);
                       }
                     const double k = s1 * is * is / n, m0 = s0 / n;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i)
                         dx[i] = T(a * (g(i) - m0 - (double(x[i]) - m) * k));
                     dbias[c] = T(s0);
                     dscale[c] = T(s1 * is);
                   }
                 });
  }

  bool relu_;  // batch_norm_relu_grad
  int32_t dtype_;
  plugin::NormLayout l_;
  std::vector<float> coeff_;     // a, b, k, m0 (C each)
  void (*sums_)(const float*, const float*, const Coeffs&, int64_t, int64_t, int64_t, float*,
                double*, double*) = nullptr;
  void (*dx_)(const float*, const float*, const Coeffs&, int64_t, int64_t, int64_t,
              float*) = nullptr;
  std::vector<double> partial_;  // per thread: s0, s1 (C each)
  std::vector<float> block_;     // per thread: the float block sums (2*C)
};

}  // namespace

void add_batch_norm_defs(std::vector<KernelDef>& t) {
  t.push_back({"batch_norm_grad", check_batch_norm_grad, make<BatchNormGradKernel>});
  t.push_back({"batch_norm_relu_grad", check_batch_norm_grad, make<BatchNormGradKernel>});
}

}  // namespace dlrt::cpu::loops
