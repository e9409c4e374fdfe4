// loop_batch_norm.cc: batch_norm_grad, batch_norm_relu_grad and batch_norm_add_relu_grad on
// the cpu plugin, the backward ops of batch_norm_train without and with activation relu and of
// batch_norm_add_relu_train (core/ops/infer_norm.cc; the reference's arithmetic is
// plugins/reference/kernels/norm.cc). The forward passes are oneDNN's (prim_norm.cc) and
// loop_batch_norm_train.cc's.
//
// Why not oneDNN: its batch-norm backward with fuse_norm_relu reads the forward pass's
// workspace (the ReLU's mask), which the op does not take; batch_norm_relu_grad rebuilds the
// mask from x instead. And without the ReLU, oneDNN 2.6's backward pass took 1.5x this loop's
// time on ResNet-20's shapes (`dlbench ops --filter resnet20.bn`: 956 vs 629 us at
// (128,28,28,16) on the Xeon of docs/benchmarks.md), so all three ops run here. Two passes over
// x and dy:
//
//   per channel c (C each):  a = scale*inv_std,  b = bias - mean*a   (the ReLU's input is a*x + b)
//   pass 1, sums over the channel's count n values:
//       g = dy where the ReLU passed, else 0 (batch_norm_grad: g = dy; batch_norm_relu_grad:
//           where a*x + b > 0; batch_norm_add_relu_grad: where y > 0, and g is written out as
//           dresidual);
//       s0 = sum(g),   s1 = sum(g*(x - mean))
//   dbias = s0, dscale = inv_std*s1 (= sum(g*xhat)), and with k = s1*inv_std^2/n, m0 = s0/n:
//   pass 2:  dx = a*(g - m0 - (x - mean)*k)     (= scale*inv_std/n*(n*g - s0 - xhat*dscale))
//   batch_norm_add_relu_grad's pass 2 reads g back from dresidual instead of dy and y (two
//   tensors read instead of three).
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

// Where dy passes: everywhere, where the affine map a*x + b is > 0, or where y is > 0.
enum Mask { kNone, kAffine, kFromY };

// Pass 1 over rows [r0, r1) of an (rows, C) block: s0 += sum(g), s1 += sum(g*(x - mean)) per
// channel. `f` is 2*C floats of scratch. kC > 0 fixes C at compile time; kMask masks dy (with
// kFromY by y, writing g to `g_out`; both are unused otherwise). V is the build's vector (F8
// for AVX2, F4 portable).
template <int64_t kC, Mask kMask, typename V>
DLRT_SIMD_INLINE void sums_body(const float* __restrict dy, const float* __restrict x,
                                const float* __restrict y, float* __restrict g_out,
                                const Coeffs& k, int64_t c_rt, int64_t r0, int64_t r1,
                                float* __restrict f, double* __restrict s0,
                                double* __restrict s1) {
  const int64_t C = kC > 0 ? kC : c_rt;
  const float *__restrict a = k.a, *__restrict b = k.b, *__restrict mean = k.mean;
  float *__restrict f0 = f, *__restrict f1 = f + C;
  if constexpr (kC == 16) {
    // Explicit vectors: left to itself, GCC unrolls the 16 channels and vectorises across the
    // rows instead (transposing strided loads: about 2x slower). Same sums, lane by lane.
    constexpr int L = simd::Traits<V>::kLanes, NV = 16 / L;
    using simd::load;
    const V zero = {};
    V av[NV], bv[NV], mv[NV];
    for (int v = 0; v < NV; ++v)
      av[v] = load<V>(a + v * L), bv[v] = load<V>(b + v * L), mv[v] = load<V>(mean + v * L);
    for (int64_t r = r0; r < r1; r += kBlock) {
      const int64_t end = std::min(r1, r + kBlock);
      V gs[NV] = {}, hs[NV] = {};
      for (int64_t i = r; i < end; ++i)
        for (int v = 0; v < NV; ++v) {
          const int64_t o = i * 16 + v * L;
          const V xv = load<V>(x + o);
          V g = load<V>(dy + o);
          if constexpr (kMask == kAffine) g = simd::keep(av[v] * xv + bv[v] > zero, g);
          if constexpr (kMask == kFromY) {
            g = simd::keep(load<V>(y + o) > zero, g);
            simd::store(g_out + o, g);
          }
          gs[v] += g, hs[v] += g * (xv - mv[v]);
        }
      for (int v = 0; v < NV; ++v) simd::store(f0 + v * L, gs[v]), simd::store(f1 + v * L, hs[v]);
      for (int64_t c = 0; c < 16; ++c) s0[c] += double(f0[c]), s1[c] += double(f1[c]);
    }
    return;
  }
  for (int64_t r = r0; r < r1; r += kBlock) {
    const int64_t end = std::min(r1, r + kBlock);
    for (int64_t c = 0; c < C; ++c) f0[c] = 0.f, f1[c] = 0.f;
    for (int64_t i = r; i < end; ++i) {
      const float *__restrict dyr = dy + i * C, *__restrict xr = x + i * C;
      for (int64_t c = 0; c < C; ++c) {
        const float xv = xr[c];
        float g = dyr[c];
        if constexpr (kMask == kAffine) g = a[c] * xv + b[c] > 0.f ? g : 0.f;
        if constexpr (kMask == kFromY) {
          g = y[i * C + c] > 0.f ? g : 0.f;
          g_out[i * C + c] = g;
        }
        f0[c] += g;
        f1[c] += g * (xv - mean[c]);
      }
    }
    for (int64_t c = 0; c < C; ++c) s0[c] += double(f0[c]), s1[c] += double(f1[c]);
  }
}

// Pass 2 over rows [r0, r1): dx = a*(g - m0 - (x - mean)*k) (g = dy, masked with kRelu).
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
// Passes<avx2, mask>: pass 2's mask is kAffine's or none (kFromY's pass 2 reads g unmasked).
template <bool kAvx2, Mask kMask>
struct Passes;
#define DLRT_BN_PASSES(ATTR, IS_AVX2, MASK, V)                                                  \
  template <>                                                                                   \
  struct Passes<IS_AVX2, MASK> {                                                                \
    static constexpr bool RELU = MASK == kAffine;                                               \
    ATTR static void sums(const float* dy, const float* x, const float* y, float* g,           \
                          const Coeffs& k, int64_t C, int64_t r0, int64_t r1, float* f,         \
                          double* s0, double* s1) {                                             \
      switch (C) {                                                                              \
        case 16: return sums_body<16, MASK, V>(dy, x, y, g, k, C, r0, r1, f, s0, s1);              \
        case 32: return sums_body<32, MASK, V>(dy, x, y, g, k, C, r0, r1, f, s0, s1);              \
        case 64: return sums_body<64, MASK, V>(dy, x, y, g, k, C, r0, r1, f, s0, s1);              \
        default: return sums_body<0, MASK, V>(dy, x, y, g, k, C, r0, r1, f, s0, s1);               \
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
DLRT_BN_PASSES(DLRT_TARGET_AVX2, true, kNone, simd::F8)
DLRT_BN_PASSES(DLRT_TARGET_AVX2, true, kAffine, simd::F8)
DLRT_BN_PASSES(DLRT_TARGET_AVX2, true, kFromY, simd::F8)
DLRT_BN_PASSES(, false, kNone, simd::F4)
DLRT_BN_PASSES(, false, kAffine, simd::F4)
DLRT_BN_PASSES(, false, kFromY, simd::F4)
#undef DLRT_BN_PASSES

// Where each op's operands are: dy is input 0 of all three; outputs dx, dscale, dbias (and
// dresidual, batch_norm_add_relu_grad's output 3).
struct GradOperands {
  int x, scale, bias, mean;  // input indices (bias -1: none); saved_inv_std follows mean
  int y;                     // batch_norm_add_relu_grad's y, else -1
};
Mask mask_of(const std::string& op) {
  return op == "batch_norm_relu_grad" ? kAffine : op == "batch_norm_add_relu_grad" ? kFromY : kNone;
}
GradOperands operands_of(Mask m) {
  switch (m) {
    case kAffine: return {1, 2, 3, 4, -1};  // dy, x, scale, bias, saved_mean, saved_inv_std
    case kFromY: return {2, 3, -1, 4, 1};   // dy, y, x, scale, saved_mean, saved_inv_std
    default: return {1, 2, -1, 3, -1};      // dy, x, scale, saved_mean, saved_inv_std
  }
}

void check_batch_norm_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  const TensorView& x = op.input(operands_of(mask_of(op.name())).x);
  expect_float(op, x);
  plugin::norm_layout(x.dims, op.get_string("data_format"), op.name());
  fill_cost(op, 12, cost);
}

class BatchNormGradKernel : public LoopKernel {
 public:
  BatchNormGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        mask_(mask_of(op.name())),
        at_(operands_of(mask_)),
        dtype_(op.input(at_.x).dtype),
        l_(plugin::norm_layout(op.input(at_.x).dims, op.get_string("data_format"), op.name())) {
    const size_t C = size_t(l_.c);
    coeff_.assign(4 * C, 0.f);
    // The passes' build: AVX2 or portable, with the op's mask (pass 2 masks only kAffine).
    switch (mask_) {
      case kAffine: pick<kAffine>(); break;
      case kFromY: pick<kFromY>(); break;
      default: pick<kNone>(); break;
    }
    partial_.assign(size_t(threads_) * 2 * C, 0.0);
    block_.assign(size_t(threads_) * 2 * C, 0.f);
  }

  void execute(const dlrt_kernel_args& args) override {
    if (dtype_ == DLRT_F32 && l_.inner == 1) return rows_f32(args);
    with_float(dtype_, [&](auto t) { per_channel<decltype(t)>(args); });
  }

 private:
  template <Mask kMask>
  void pick() {
    sums_ = avx2_ ? &Passes<true, kMask>::sums : &Passes<false, kMask>::sums;
    dx_ = avx2_ ? &Passes<true, kMask>::dx : &Passes<false, kMask>::dx;
  }

  // NHWC / (N,C) f32: see the top of the file.
  void rows_f32(const dlrt_kernel_args& args) {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const float* x = static_cast<const float*>(args.inputs[at_.x]);
    const float* y = at_.y >= 0 ? static_cast<const float*>(args.inputs[at_.y]) : nullptr;
    const float* scale = static_cast<const float*>(args.inputs[at_.scale]);
    const float* bias = at_.bias >= 0 ? static_cast<const float*>(args.inputs[at_.bias]) : nullptr;
    const float* mean = static_cast<const float*>(args.inputs[at_.mean]);
    const float* inv_std = static_cast<const float*>(args.inputs[at_.mean + 1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    float* dscale = static_cast<float*>(args.outputs[1]);
    float* dbias = static_cast<float*>(args.outputs[2]);
    float* g = mask_ == kFromY ? static_cast<float*>(args.outputs[3]) : nullptr;  // dresidual
    const int64_t C = l_.c, rows = l_.outer;
    float *a = coeff_.data(), *b = a + C, *kk = b + C, *m0 = kk + C;
    for (int64_t c = 0; c < C; ++c) {
      a[c] = scale[c] * inv_std[c];
      b[c] = bias != nullptr ? bias[c] - mean[c] * a[c] : 0.f;  // b: kAffine's mask only
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
      sums_(dy, x, y, g, k, C, r0, r1, f, s, s + C);
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
    // Pass 2: rows split again; kFromY reads its masked dy back from dresidual.
    const float* g2 = g != nullptr ? g : dy;
    parallel_for(rows, std::max<int64_t>(1, kGrainCheap / C), threads_,
                 [&](int64_t r0, int64_t r1) { dx_(g2, x, k, C, r0, r1, dx); });
  }

  // Any layout and f64: channel c's values are (o, c, i) at (o*C + c)*inner + i; threads split
  // the channels, each summing its own in double (no partials).
  template <typename T>
  void per_channel(const dlrt_kernel_args& args) {
    const T* dy = static_cast<const T*>(args.inputs[0]);
    const T* x = static_cast<const T*>(args.inputs[at_.x]);
    const T* y = at_.y >= 0 ? static_cast<const T*>(args.inputs[at_.y]) : nullptr;
    const T* scale = static_cast<const T*>(args.inputs[at_.scale]);
    const T* bias = at_.bias >= 0 ? static_cast<const T*>(args.inputs[at_.bias]) : nullptr;
    const T* mean = static_cast<const T*>(args.inputs[at_.mean]);
    const T* inv_std = static_cast<const T*>(args.inputs[at_.mean + 1]);
    T* dx = static_cast<T*>(args.outputs[0]);
    T* dscale = static_cast<T*>(args.outputs[1]);
    T* dbias = static_cast<T*>(args.outputs[2]);
    T* dres = mask_ == kFromY ? static_cast<T*>(args.outputs[3]) : nullptr;
    const int64_t C = l_.c, inner = l_.inner, outer = l_.outer;
    const double n = double(l_.count());
    const Mask mask = mask_;
    parallel_for(C, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, l_.count())), threads_,
                 [&](int64_t c0, int64_t c1) {
                   for (int64_t c = c0; c < c1; ++c) {
                     const double is = double(inv_std[c]), m = double(mean[c]);
                     const double a = double(scale[c]) * is;
                     const double b = bias != nullptr ? double(bias[c]) - m * a : 0.0;
                     auto g = [&](int64_t i) {
                       const bool pass = mask == kAffine  ? a * double(x[i]) + b > 0
                                         : mask == kFromY ? double(y[i]) > 0
                                                          : true;
                       return pass ? double(dy[i]) : 0.0;
                     };
                     double s0 = 0, s1 = 0;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i) {
                         s0 += g(i);
                         s1 += g(i) * (double(x[i]) - m);
                       }
                     const double k = s1 * is * is / n, m0 = s0 / n;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i) {
                         dx[i] = T(a * (g(i) - m0 - (double(x[i]) - m) * k));
                         if (dres != nullptr) dres[i] = T(g(i));
                       }
                     dbias[c] = T(s0);
                     dscale[c] = T(s1 * is);
                   }
                 });
  }

  Mask mask_;
  GradOperands at_;
  int32_t dtype_;
  plugin::NormLayout l_;
  std::vector<float> coeff_;     // a, b, k, m0 (C each)
  void (*sums_)(const float*, const float*, const float*, float*, const Coeffs&, int64_t,
                int64_t, int64_t, float*, double*, double*) = nullptr;
  void (*dx_)(const float*, const float*, const Coeffs&, int64_t, int64_t, int64_t,
              float*) = nullptr;
  std::vector<double> partial_;  // per thread: s0, s1 (C each)
  std::vector<float> block_;     // per thread: the float block sums (2*C)
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"batch_norm_grad", check_batch_norm_grad, make<BatchNormGradKernel>});
  t.push_back({"batch_norm_relu_grad", check_batch_norm_grad, make<BatchNormGradKernel>});
  t.push_back({"batch_norm_add_relu_grad", check_batch_norm_grad, make<BatchNormGradKernel>});
}

}  // namespace dlrt::cpu::loops
