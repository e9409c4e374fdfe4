// loop_batch_norm_train.cc: the training forms of batch normalization on the cpu plugin,
// batch_norm_train (activation none or relu) and batch_norm_add_relu_train, a residual block's
// tail in one op (core/ops/infer_norm.cc; the reference's arithmetic is
// plugins/reference/kernels/norm.cc):
//
//   y = scale*(x - mean)*inv_std + bias              (batch_norm_train)
//   y = max(0, that)                                 (activation relu)
//   y = max(0, that + residual)                      (batch_norm_add_relu_train)
// with x's batch statistics, the running statistics moved by momentum (docs/ops.md).
//
// Why a loop: oneDNN 2.6's batch normalization has fuse_norm_relu but no fused add (that came
// with oneDNN 3's fuse_norm_add_relu), and the unfused chain (batch_norm_train, add, relu)
// writes y and reads it back twice. Here: one pass over x for the statistics, one over x (and
// the residual) writing y. That also beats oneDNN's own training pass at ResNet-20's sizes
// (`dlbench ops --filter resnet20.bn`), so batch_norm_train runs here too; batch_norm (the
// inference form) stays oneDNN's (prim_norm.cc).
//
//   pass 1, per channel over its n values, with a pivot p = the channel's first value:
//       s1 = sum(x - p), s2 = sum((x - p)^2)
//       mean = p + s1/n, var = s2/n - (s1/n)^2 (biased; >= 0), inv_std = 1/sqrt(var + eps)
//     The pivot keeps the sums of squares from cancelling when |mean| >> std (a value of
//     the channel is within a few std of its mean).
//   pass 2:  a = scale*inv_std, b = bias - mean*a;  y = a*x + b (+ residual), ReLU'd or not
//
// NHWC and (N,C) f32 (C innermost): pass 1 splits the rows among the threads, each summing its
// rows per channel in float blocks of kBlock rows added into double partials (scratch made in
// create), combined in thread order (the same bits on every run with the same thread count);
// pass 2 splits the rows again. Per-row loops over C are compiled for C = 16, 32 and 64 and
// for any C, in an AVX2 and a portable build (loop_simd.hpp). NCHW and f64 take a plain loop
// per channel in double (exact two-pass moments), threads splitting the channels.
#include <cmath>
#include <vector>

#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "norm_layout.hpp"

namespace dlrt::cpu::loops {
namespace {

constexpr int64_t kBlock = 64;  // rows summed in float before adding into the double partials

// Pass 1 over rows [r0, r1) of an (rows, C) block: s1 += sum(x - p), s2 += sum((x - p)^2)
// per channel. `f` is 2*C floats of scratch. kC > 0 fixes C at compile time; V is the build's
// vector (F8 for AVX2, F4 portable).
template <int64_t kC, typename V>
DLRT_SIMD_INLINE void moments_body(const float* __restrict x, const float* __restrict p,
                                   int64_t c_rt, int64_t r0, int64_t r1, float* __restrict f,
                                   double* __restrict s1, double* __restrict s2) {
  const int64_t C = kC > 0 ? kC : c_rt;
  float *__restrict f1 = f, *__restrict f2 = f + C;
  if constexpr (kC == 16) {
    // Explicit vectors: left to itself, GCC unrolls the 16 channels and vectorises across the
    // rows instead (transposing strided loads: 2.6x slower). Same sums, lane by lane.
    constexpr int L = simd::Traits<V>::kLanes, NV = 16 / L;
    V pv[NV];
    for (int v = 0; v < NV; ++v) pv[v] = simd::load<V>(p + v * L);
    for (int64_t r = r0; r < r1; r += kBlock) {
      const int64_t end = std::min(r1, r + kBlock);
      V sum[NV] = {}, sq[NV] = {};
      for (int64_t i = r; i < end; ++i)
        for (int v = 0; v < NV; ++v) {
          const V d = simd::load<V>(x + i * 16 + v * L) - pv[v];
          sum[v] += d, sq[v] += d * d;
        }
      for (int v = 0; v < NV; ++v) simd::store(f1 + v * L, sum[v]), simd::store(f2 + v * L, sq[v]);
      for (int64_t c = 0; c < 16; ++c) s1[c] += double(f1[c]), s2[c] += double(f2[c]);
    }
    return;
  }
  for (int64_t r = r0; r < r1; r += kBlock) {
    const int64_t end = std::min(r1, r + kBlock);
    for (int64_t c = 0; c < C; ++c) f1[c] = 0.f, f2[c] = 0.f;
    for (int64_t i = r; i < end; ++i) {
      const float* __restrict xr = x + i * C;
      for (int64_t c = 0; c < C; ++c) {
        const float d = xr[c] - p[c];
        f1[c] += d;
        f2[c] += d * d;
      }
    }
    for (int64_t c = 0; c < C; ++c) s1[c] += double(f1[c]), s2[c] += double(f2[c]);
  }
}

// What pass 2 writes: a*x + b, max(0, a*x + b), or max(0, a*x + b + residual).
enum Tail { kAffine, kRelu, kAddRelu };

// Pass 2 over rows [r0, r1) (res is read with kAddRelu only).
template <int64_t kC, Tail kTail>
DLRT_SIMD_INLINE void normalize_body(const float* __restrict x, const float* __restrict res,
                                     const float* __restrict a, const float* __restrict b,
                                     int64_t c_rt, int64_t r0, int64_t r1, float* __restrict y) {
  const int64_t C = kC > 0 ? kC : c_rt;
  for (int64_t i = r0; i < r1; ++i) {
    const float* __restrict xr = x + i * C;
    float* __restrict yr = y + i * C;
    for (int64_t c = 0; c < C; ++c) {
      float v = a[c] * xr[c] + b[c];
      if constexpr (kTail == kAddRelu) v += res[i * C + c];
      if constexpr (kTail != kAffine) v = v > 0.f ? v : 0.f;
      yr[c] = v;
    }
  }
}

// The compiled widths, dispatched on C.
template <bool kAvx2>
struct Moments;
template <bool kAvx2, Tail kTail>
struct Normalize;
#define DLRT_BN_TRAIN_MOMENTS(ATTR, IS_AVX2, V)                                                \
  template <>                                                                                  \
  struct Moments<IS_AVX2> {                                                                    \
    ATTR static void run(const float* x, const float* p, int64_t C, int64_t r0, int64_t r1,   \
                         float* f, double* s1, double* s2) {                                   \
      switch (C) {                                                                             \
        case 16: return moments_body<16, V>(x, p, C, r0, r1, f, s1, s2);                          \
        case 32: return moments_body<32, V>(x, p, C, r0, r1, f, s1, s2);                          \
        case 64: return moments_body<64, V>(x, p, C, r0, r1, f, s1, s2);                          \
        default: return moments_body<0, V>(x, p, C, r0, r1, f, s1, s2);                           \
      }                                                                                        \
    }                                                                                          \
  };
#define DLRT_BN_TRAIN_NORMALIZE(ATTR, IS_AVX2, TAIL)                                           \
  template <>                                                                                  \
  struct Normalize<IS_AVX2, TAIL> {                                                            \
    ATTR static void run(const float* x, const float* res, const float* a, const float* b,     \
                         int64_t C, int64_t r0, int64_t r1, float* y) {                        \
      switch (C) {                                                                             \
        case 16: return normalize_body<16, TAIL>(x, res, a, b, C, r0, r1, y);                  \
        case 32: return normalize_body<32, TAIL>(x, res, a, b, C, r0, r1, y);                  \
        case 64: return normalize_body<64, TAIL>(x, res, a, b, C, r0, r1, y);                  \
        default: return normalize_body<0, TAIL>(x, res, a, b, C, r0, r1, y);                   \
      }                                                                                        \
    }                                                                                          \
  };
DLRT_BN_TRAIN_MOMENTS(DLRT_TARGET_AVX2, true, simd::F8)
DLRT_BN_TRAIN_MOMENTS(, false, simd::F4)
DLRT_BN_TRAIN_NORMALIZE(DLRT_TARGET_AVX2, true, kAffine)
DLRT_BN_TRAIN_NORMALIZE(DLRT_TARGET_AVX2, true, kRelu)
DLRT_BN_TRAIN_NORMALIZE(DLRT_TARGET_AVX2, true, kAddRelu)
DLRT_BN_TRAIN_NORMALIZE(, false, kAffine)
DLRT_BN_TRAIN_NORMALIZE(, false, kRelu)
DLRT_BN_TRAIN_NORMALIZE(, false, kAddRelu)
#undef DLRT_BN_TRAIN_MOMENTS
#undef DLRT_BN_TRAIN_NORMALIZE

Tail tail_of(const OpView& op) {
  if (op.name() == "batch_norm_add_relu_train") return kAddRelu;
  return op.get_string("activation") == "relu" ? kRelu : kAffine;
}

void check_batch_norm_train(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  plugin::norm_layout(op.input(0).dims, op.get_string("data_format"), op.name());
  fill_cost(op, 8, cost);
}

// Inputs: x, [residual,] scale, bias, running_mean, running_var (the residual with kAddRelu
// only); outputs: y, running_mean, running_var, saved_mean, saved_inv_std. The running
// outputs may alias their inputs (in place): each channel reads both before writing.
class BatchNormTrainKernel : public LoopKernel {
 public:
  BatchNormTrainKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        tail_(tail_of(op)),
        shift_(tail_ == kAddRelu ? 1 : 0),
        dtype_(op.input(0).dtype),
        l_(plugin::norm_layout(op.input(0).dims, op.get_string("data_format"), op.name())),
        eps_(op.get_float("epsilon")),
        momentum_(op.get_float("momentum")) {
    const size_t C = size_t(l_.c);
    coeff_.assign(3 * C, 0.f);
    moments_ = avx2_ ? &Moments<true>::run : &Moments<false>::run;
    switch (tail_) {
      case kAddRelu: pick<kAddRelu>(); break;
      case kRelu: pick<kRelu>(); break;
      default: pick<kAffine>(); break;
    }
    partial_.assign(size_t(threads_) * 2 * C, 0.0);
    block_.assign(size_t(threads_) * 2 * C, 0.f);
  }

  void execute(const dlrt_kernel_args& args) override {
    if (dtype_ == DLRT_F32 && l_.inner == 1) return rows_f32(args);
    with_float(dtype_, [&](auto t) { per_channel<decltype(t)>(args); });
  }

 private:
  template <Tail kTail>
  void pick() {
    normalize_ = avx2_ ? &Normalize<true, kTail>::run : &Normalize<false, kTail>::run;
  }

  // Moves the running statistics and writes the saved ones from channel c's batch mean and
  // biased variance (docs/ops.md: the running variance follows the unbiased one).
  template <typename T>
  void finish_channel(const dlrt_kernel_args& args, int64_t c, double mean, double var) const {
    const T* rm = static_cast<const T*>(args.inputs[3 + shift_]);
    const T* rv = static_cast<const T*>(args.inputs[4 + shift_]);
    const double n = double(l_.count()), unbias = n > 1 ? n / (n - 1) : 1.0;
    const double old_mean = double(rm[c]), old_var = double(rv[c]);  // before any write
    static_cast<T*>(args.outputs[1])[c] = T(momentum_ * old_mean + (1 - momentum_) * mean);
    static_cast<T*>(args.outputs[2])[c] = T(momentum_ * old_var + (1 - momentum_) * var * unbias);
    static_cast<T*>(args.outputs[3])[c] = T(mean);
    static_cast<T*>(args.outputs[4])[c] = T(1.0 / std::sqrt(var + eps_));
  }

  // NHWC / (N,C) f32: see the top of the file.
  void rows_f32(const dlrt_kernel_args& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* res = shift_ ? static_cast<const float*>(args.inputs[1]) : nullptr;
    const float* scale = static_cast<const float*>(args.inputs[1 + shift_]);
    const float* bias = static_cast<const float*>(args.inputs[2 + shift_]);
    float* y = static_cast<float*>(args.outputs[0]);
    const int64_t C = l_.c, rows = l_.outer;
    float *p = coeff_.data(), *a = p + C, *b = a + C;
    for (int64_t c = 0; c < C; ++c) p[c] = rows > 0 ? x[c] : 0.f;  // row 0: the pivots
    std::fill(partial_.begin(), partial_.end(), 0.0);
    // Pass 1: thread t sums rows [rows*t/nt, rows*(t+1)/nt) into its own partials.
    const int nt = static_cast<int>(
        std::clamp<int64_t>(rows * C / kGrainCheap, 1, int64_t(threads_)));
    auto sums = [&](int t) {
      const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
      double* s = partial_.data() + size_t(t) * 2 * size_t(C);
      float* f = block_.data() + size_t(t) * 2 * size_t(C);
      moments_(x, p, C, r0, r1, f, s, s + C);
    };
    if (nt == 1 || omp_in_parallel()) {
      for (int t = 0; t < nt; ++t) sums(t);
    } else {
#pragma omp parallel for num_threads(nt) schedule(static, 1)
      for (int t = 0; t < nt; ++t) sums(t);
    }
    const double n = double(rows);
    for (int64_t c = 0; c < C; ++c) {
      double s1 = 0, s2 = 0;
      for (int t = 0; t < nt; ++t) {  // thread order: the same sum on every run
        s1 += partial_[size_t(t) * 2 * size_t(C) + size_t(c)];
        s2 += partial_[size_t(t) * 2 * size_t(C) + size_t(C + c)];
      }
      const double d = s1 / n, mean = double(p[c]) + d, var = std::max(0.0, s2 / n - d * d);
      const double inv_std = 1.0 / std::sqrt(var + eps_);
      a[c] = float(double(scale[c]) * inv_std);
      b[c] = float(double(bias[c]) - mean * double(scale[c]) * inv_std);
      finish_channel<float>(args, c, mean, var);
    }
    // Pass 2: rows split again.
    parallel_for(rows, std::max<int64_t>(1, kGrainCheap / C), threads_,
                 [&](int64_t r0, int64_t r1) { normalize_(x, res, a, b, C, r0, r1, y); });
  }

  // Any layout and f64: channel c's values are (o, c, i) at (o*C + c)*inner + i; threads split
  // the channels, each with exact two-pass moments in double.
  template <typename T>
  void per_channel(const dlrt_kernel_args& args) {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const T* res = shift_ ? static_cast<const T*>(args.inputs[1]) : nullptr;
    const T* scale = static_cast<const T*>(args.inputs[1 + shift_]);
    const T* bias = static_cast<const T*>(args.inputs[2 + shift_]);
    T* y = static_cast<T*>(args.outputs[0]);
    const Tail tail = tail_;
    const int64_t C = l_.c, inner = l_.inner, outer = l_.outer;
    const double n = double(l_.count());
    parallel_for(C, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(1, l_.count())), threads_,
                 [&](int64_t c0, int64_t c1) {
                   for (int64_t c = c0; c < c1; ++c) {
                     double sum = 0, sq = 0;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i)
                         sum += double(x[i]);
                     const double mean = sum / n;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i)
                         sq += (double(x[i]) - mean) * (double(x[i]) - mean);
                     const double var = sq / n, inv_std = 1.0 / std::sqrt(var + eps_);
                     const double a = double(scale[c]) * inv_std, b = double(bias[c]) - mean * a;
                     for (int64_t o = 0; o < outer; ++o)
                       for (int64_t i = (o * C + c) * inner, e = i + inner; i < e; ++i) {
                         double v = a * double(x[i]) + b;
                         if (tail == kAddRelu) v += double(res[i]);
                         y[i] = T(tail != kAffine && !(v > 0) ? 0.0 : v);
                       }
                     finish_channel<T>(args, c, mean, var);
                   }
                 });
  }

  Tail tail_;
  int shift_;  // 1 when inputs 1.. are residual, scale, ... (kAddRelu), else 0
  int32_t dtype_;
  plugin::NormLayout l_;
  double eps_, momentum_;
  std::vector<float> coeff_;     // pivots p, a, b (C each)
  void (*moments_)(const float*, const float*, int64_t, int64_t, int64_t, float*, double*,
                   double*) = nullptr;
  void (*normalize_)(const float*, const float*, const float*, const float*, int64_t, int64_t,
                     int64_t, float*) = nullptr;
  std::vector<double> partial_;  // per thread: s1, s2 (C each)
  std::vector<float> block_;     // per thread: the float block sums (2*C)
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  t.push_back({"batch_norm_train", check_batch_norm_train, make<BatchNormTrainKernel>});
  t.push_back({"batch_norm_add_relu_train", check_batch_norm_train, make<BatchNormTrainKernel>});
}

}  // namespace dlrt::cpu::loops
