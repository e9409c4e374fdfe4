// loop_elementwise.cc: the cpu plugin's element-wise loop kernels: add/sub/mul/div/maximum/
// minimum/pow with NumPy broadcasting, neg/exp/log/sqrt/softplus and the unary maths (sin ...
// sign: core/ops/infer_math.cc), relu_grad, clip_grad, and the two
// gradients that are sums or masks over a shape: bias_add_grad and reduce_max_grad. f32 and f64.
// (maximum/minimum/pow share add's broadcasting walk rather than oneDNN's binary primitive,
// which has max/min but no pow and takes no f64.)
//
// Binary ops run on a collapsed Walk (loop_util.hpp): equal shapes are one flat loop, a
// trailing-vector broadcast (N,C)+(C) is rows of a contiguous loop against the vector, a scalar
// operand is a loop against a constant; the inner loop is instantiated per (stride_a, stride_b)
// in {0,1}^2 so each form vectorises. Every output element reads only its own input elements,
// so an output may alias a same-shaped input.
//
// relu_grad and bias_add_grad (the memory-bound passes of a conv layer's backward step) have an
// AVX2 path and a portable one (loop_simd.hpp); both give the same bits.
#include <cmath>
#include <limits>
#include <type_traits>

#include "loop_simd.hpp"
#include "loop_util.hpp"
#include "narrow_float.hpp"
#include "portable_math.hpp"

namespace dlrt::cpu::loops {
namespace {

// exp, log: the same bits on every platform (portable_math.hpp).
namespace portable = plugin::portable;

// ---- binary ------------------------------------------------------------------------------

enum class BinOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };

BinOp binop_of(const std::string& name) {
  return name == "add"       ? BinOp::kAdd
         : name == "sub"     ? BinOp::kSub
         : name == "mul"     ? BinOp::kMul
         : name == "maximum" ? BinOp::kMax
         : name == "minimum" ? BinOp::kMin
         : name == "pow"     ? BinOp::kPow
                             : BinOp::kDiv;
}

void check_binary(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

// add, sub, mul, div, maximum, minimum: integers too (the schema admits none for pow).
void check_numeric_binary(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_numeric(op, op.input(0));
  fill_cost(op, 1, cost);
}

// An integer sum, difference or product modulo 2^bits, computed in an unsigned type where C++
// defines the wrap (NumPy's integer arithmetic; signed overflow would be undefined), and the
// integer quotient (truncated, x / 0 = 0, lowest / -1 = lowest): plugins/common/dtype_dispatch.hpp,
// the same code as the reference's.
template <BinOp O, typename T>
T wrapping(T x, T y) {
  if constexpr (O == BinOp::kAdd) return plugin::wrapping_add(x, y);
  else if constexpr (O == BinOp::kSub) return plugin::wrapping_sub(x, y);
  else return plugin::wrapping_mul(x, y);
}
using plugin::integer_quotient;

// c[i] = a[i*SA] (op) b[i*SB] for i < n: SA, SB in {0, 1}.
template <BinOp O, int SA, int SB, typename T>
void binary_row(const T* a, const T* b, T* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = a[i * SA], y = b[i * SB];
    if constexpr (std::is_integral_v<T> &&
                  (O == BinOp::kAdd || O == BinOp::kSub || O == BinOp::kMul))
      c[i] = wrapping<O>(x, y);
    else if constexpr (std::is_integral_v<T> && O == BinOp::kDiv) c[i] = integer_quotient(x, y);
    else if constexpr (O == BinOp::kAdd) c[i] = x + y;
    else if constexpr (O == BinOp::kSub) c[i] = x - y;
    else if constexpr (O == BinOp::kMul) c[i] = x * y;
    // maximum/minimum: a NaN operand gives NaN (x != x is x's NaN test; a NaN y falls through).
    else if constexpr (O == BinOp::kMax) c[i] = x > y || x != x ? x : y;
    else if constexpr (O == BinOp::kMin) c[i] = x < y || x != x ? x : y;
    else if constexpr (O == BinOp::kPow) c[i] = std::pow(x, y);
    else c[i] = x / y;  // IEEE: x/0 is +-inf or NaN
  }
}

// a: A, b: B -> c: broadcast(A, B)
class BinaryKernel : public LoopKernel {
 public:
  BinaryKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), op_(binop_of(op.name())), dtype_(op.input(0).dtype) {
    const auto& dims = op.output(0).dims;
    walk_ = make_walk<2>(dims, {plugin::broadcast_strides(op.input(0).dims, dims, op.name()),
                                plugin::broadcast_strides(op.input(1).dims, dims, op.name())});
  }

  void execute(const dlrt_kernel_args& args) override {
    with_numeric(dtype_, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_integral_v<T>) {  // add, sub, mul, div, maximum, minimum only
        switch (op_) {
          case BinOp::kAdd:
            return run_op<BinOp::kAdd, T>(args);
          case BinOp::kSub:
            return run_op<BinOp::kSub, T>(args);
          case BinOp::kMul:
            return run_op<BinOp::kMul, T>(args);
          case BinOp::kDiv:
            return run_op<BinOp::kDiv, T>(args);
          case BinOp::kMax:
            return run_op<BinOp::kMax, T>(args);
          default:
            return run_op<BinOp::kMin, T>(args);
        }
      } else {
        switch (op_) {
          case BinOp::kAdd:
            run_op<BinOp::kAdd, T>(args);
            break;
          case BinOp::kSub:
            run_op<BinOp::kSub, T>(args);
            break;
          case BinOp::kMul:
            run_op<BinOp::kMul, T>(args);
            break;
          case BinOp::kDiv:
            run_op<BinOp::kDiv, T>(args);
            break;
          case BinOp::kMax:
            run_op<BinOp::kMax, T>(args);
            break;
          case BinOp::kMin:
            run_op<BinOp::kMin, T>(args);
            break;
          case BinOp::kPow:
            run_op<BinOp::kPow, T>(args);
            break;
        }
      }
    });
  }

 private:
  template <BinOp O, typename T>
  void run_op(const dlrt_kernel_args& args) {
    const int64_t sa = walk_.inner_stride(0), sb = walk_.inner_stride(1);
    if (sa == 1 && sb == 1) run_strided<O, 1, 1, T>(args);
    else if (sa == 1) run_strided<O, 1, 0, T>(args);
    else if (sb == 1) run_strided<O, 0, 1, T>(args);
    else run_strided<O, 0, 0, T>(args);  // only when c has one element
  }

  template <BinOp O, int SA, int SB, typename T>
  void run_strided(const dlrt_kernel_args& args) {
    const T* a = static_cast<const T*>(args.inputs[0]);
    const T* b = static_cast<const T*>(args.inputs[1]);
    T* c = static_cast<T*>(args.outputs[0]);
    parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t begin, int64_t end) {
      for_each_segment(walk_, begin, end, [&](int64_t i, const int64_t* off, int64_t len) {
        binary_row<O, SA, SB>(a + off[0], b + off[1], c + i, len);
      });
    });
  }

  BinOp op_;
  int32_t dtype_;
  Walk<2> walk_;
};

// ---- unary -------------------------------------------------------------------------------

// softplus is here, not a oneDNN eltwise: oneDNN's soft_relu loses relative accuracy where
// softplus is small (x << 0: 1.3% at x = -10, caught by ONNX's Mish case at rtol 1e-3).
// The unary maths (core/ops/infer_math.cc: sin ... sign) are here too: oneDNN has no eltwise
// for them. Each is the C library's function on T (f32 or f64), so the IEEE domains hold.
// One struct per op: f(v) on T (f32 or f64), and whether the op is cheap (one instruction:
// parallel only over large arrays). A new op of this form is a struct here and its line in the
// rows block at the end.
struct Neg {
  static constexpr bool kCheap = true;
  template <typename T>
  static T f(T v) {
    return -v;
  }
};
struct Exp {
  static constexpr bool kCheap = false;
  template <typename T>
  static T f(T v) {
    return portable::exp(v);
  }
};
struct Log {  // NaN below 0, -inf at 0
  static constexpr bool kCheap = false;
  template <typename T>
  static T f(T v) {
    return portable::log(v);
  }
};
struct Sqrt {  // NaN below 0
  static constexpr bool kCheap = true;
  template <typename T>
  static T f(T v) {
    return std::sqrt(v);
  }
};
struct Softplus {  // max(x, 0) + log1p(exp(-|x|)), in f32
  static constexpr bool kCheap = false;
  template <typename T>
  static T f(T v) {
    const float x = static_cast<float>(v);
    return static_cast<T>(std::max(x, 0.0f) + portable::log1p(portable::exp(-std::fabs(x))));
  }
};
// The C library's function on T: sin ... round.
#define DLRT_LIBM_UNARY(Name, fn, cheap)  \
  struct Name {                           \
    static constexpr bool kCheap = cheap; \
    template <typename T>                 \
    static T f(T v) {                     \
      return fn(v);                       \
    }                                     \
  };
DLRT_LIBM_UNARY(Sin, std::sin, false)
DLRT_LIBM_UNARY(Cos, std::cos, false)
DLRT_LIBM_UNARY(Tan, std::tan, false)
DLRT_LIBM_UNARY(Asin, std::asin, false)
DLRT_LIBM_UNARY(Acos, std::acos, false)
DLRT_LIBM_UNARY(Atan, std::atan, false)
DLRT_LIBM_UNARY(Sinh, std::sinh, false)
DLRT_LIBM_UNARY(Cosh, std::cosh, false)
DLRT_LIBM_UNARY(Asinh, std::asinh, false)
DLRT_LIBM_UNARY(Acosh, std::acosh, false)
DLRT_LIBM_UNARY(Atanh, std::atanh, false)
DLRT_LIBM_UNARY(Erf, std::erf, false)
DLRT_LIBM_UNARY(Ceil, std::ceil, true)
DLRT_LIBM_UNARY(Floor, std::floor, true)
DLRT_LIBM_UNARY(Round, std::nearbyint, true)  // halves to even
#undef DLRT_LIBM_UNARY
struct Sign {  // NaN stays NaN
  static constexpr bool kCheap = true;
  template <typename T>
  static T f(T v) {
    return std::isnan(v) ? v : static_cast<T>((v > 0) - (v < 0));
  }
};

template <typename Op>
void check_unary(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, Op::kCheap ? 1 : 10, cost);
}

template <typename Op, typename T>
void unary_row(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op::f(x[i]);
}

// x: any -> y: same shape
template <typename Op>
class UnaryKernel : public LoopKernel {
 public:
  UnaryKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), n_(op.input(0).numel), f64_(op.input(0).dtype == DLRT_F64) {}

  void execute(const dlrt_kernel_args& args) override {
    if (f64_) run<double>(args);
    else run<float>(args);
  }

 private:
  template <typename T>
  void run(const dlrt_kernel_args& args) {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    parallel_for(n_, Op::kCheap ? kGrainCheap : kGrainHeavy, threads_,
                 [&](int64_t b, int64_t e) { unary_row<Op>(x + b, y + b, e - b); });
  }

  int64_t n_;
  bool f64_;
};

// The row of the op `name` computed by Op.
template <typename Op>
void add_unary(std::vector<KernelDef>& t, const char* name) {
  t.push_back({name, check_unary<Op>, make<UnaryKernel<Op>>});
}

// ---- relu_grad ---------------------------------------------------------------------------

// f32/f64 (clip_grad; f16/bf16 run through f32, widening_kernel.hpp).
void check_f32_f64_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

// relu_grad: f32/f64, and f16/bf16 natively (all three operands of one dtype; the schema's type
// variable guarantees it): selecting dy or 0 is exact in any dtype, so the 16-bit kernel works
// on the bits and moves half the bytes of the f32 one.
void check_relu_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  if (!plugin::is_narrow_float(op.input(0).dtype)) expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

// The 16-bit relu_grad on bits: x > 0 when the sign bit is clear, the value is not +0, and it
// is not a NaN (magnitude bits above infinity's: kInf, 0x7C00 for f16, 0x7F80 for bf16); dx
// is dy's bits or +0. Plain 16-bit integer loops, which the compiler vectorises at the width
// of the build they are inlined into: 32 lanes in the AVX-512 one. (Widening bf16 to f32
// lanes, the f32 path's way, did the same selection at 8 lanes and took 12 us against f32's 7
// for the reference CNN's conv3 gradient.) Each element is read before it is written, so dx
// may alias dy or x.
template <uint16_t kInf>
DLRT_SIMD_INLINE void relu_grad_bits(const uint16_t* dy, const uint16_t* x, uint16_t* dx,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t v = x[i];
    const bool positive = (v & 0x8000u) == 0 && v != 0 && v <= kInf;
    dx[i] = positive ? dy[i] : uint16_t{0};
  }
}
void relu_grad_f16(const uint16_t* dy, const uint16_t* x, uint16_t* dx, int64_t n) {
  relu_grad_bits<0x7C00>(dy, x, dx, n);
}
#if DLRT_HAVE_AVX2_PATH
DLRT_TARGET_AVX512 void relu_grad_bf16_avx512(const uint16_t* dy, const uint16_t* x, uint16_t* dx,
                                              int64_t n) {
  relu_grad_bits<0x7F80>(dy, x, dx, n);
}
#endif
DLRT_TARGET_AVX2 void relu_grad_bf16_avx2(const uint16_t* dy, const uint16_t* x, uint16_t* dx,
                                          int64_t n) {
  relu_grad_bits<0x7F80>(dy, x, dx, n);
}
void relu_grad_bf16_base(const uint16_t* dy, const uint16_t* x, uint16_t* dx, int64_t n) {
  relu_grad_bits<0x7F80>(dy, x, dx, n);
}

// dx[i] = x[i] > 0 ? dy[i] : 0 (a NaN x gives 0, a NaN dy passes where x > 0), as the reference.
// Each vector is loaded before its store, so dx may alias dy or x.
template <typename V>
DLRT_SIMD_INLINE void relu_grad_f32(const float* dy, const float* x, float* dx, int64_t n) {
  constexpr int64_t L = simd::Traits<V>::kLanes;
  const V zero = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    simd::store(dx + i, simd::keep(simd::load<V>(x + i) > zero, simd::load<V>(dy + i)));
  for (; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}
DLRT_TARGET_AVX2 void relu_grad_avx2(const float* dy, const float* x, float* dx, int64_t n) {
  relu_grad_f32<simd::F8>(dy, x, dx, n);
}
void relu_grad_base(const float* dy, const float* x, float* dx, int64_t n) {
  relu_grad_f32<simd::F4>(dy, x, dx, n);
}

// dy, x: same shape -> dx (f32: explicit vectors; f16/bf16: relu_grad_bits; f64: a plain loop).
class ReluGradKernel : public LoopKernel {
 public:
  ReluGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), n_(op.input(0).numel), avx512_(p.onednn_avx512) {}

  void execute(const dlrt_kernel_args& args) override {
    if (plugin::is_narrow_float(dtype_)) {
      const auto* dy = static_cast<const uint16_t*>(args.inputs[0]);
      const auto* x = static_cast<const uint16_t*>(args.inputs[1]);
      auto* dx = static_cast<uint16_t*>(args.outputs[0]);
      parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        if (dtype_ == DLRT_F16) return relu_grad_f16(dy + b, x + b, dx + b, e - b);
#if DLRT_HAVE_AVX2_PATH
        if (avx512_) return relu_grad_bf16_avx512(dy + b, x + b, dx + b, e - b);
#endif
        if (avx2_) return relu_grad_bf16_avx2(dy + b, x + b, dx + b, e - b);
        relu_grad_bf16_base(dy + b, x + b, dx + b, e - b);
      });
      return;
    }
    if (dtype_ == DLRT_F32) {
      const float* dy = static_cast<const float*>(args.inputs[0]);
      const float* x = static_cast<const float*>(args.inputs[1]);
      float* dx = static_cast<float*>(args.outputs[0]);
      parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        if (avx2_) relu_grad_avx2(dy + b, x + b, dx + b, e - b);
        else relu_grad_base(dy + b, x + b, dx + b, e - b);
      });
      return;
    }
    const double* dy = static_cast<const double*>(args.inputs[0]);
    const double* x = static_cast<const double*>(args.inputs[1]);
    double* dx = static_cast<double*>(args.outputs[0]);
    parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double g = dy[i];
        dx[i] = x[i] > 0.0 ? g : 0.0;
      }
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  bool avx512_;  // the bf16 loop's AVX-512 build (16-bit lanes: 32 a vector)
};

// ---- clip_grad ---------------------------------------------------------------------------

// dx = dy where min <= x <= max, else 0 (PyTorch's clamp and TF's clip_by_value pass the
// bounds themselves; oneDNN's clip backward excludes x == min, so this is a loop). Same checks
// as relu_grad.
class ClipGradKernel : public LoopKernel {
 public:
  ClipGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        dtype_(op.input(0).dtype),
        n_(op.input(0).numel),
        lo_(op.get_float("min")),
        hi_(op.get_float("max")) {}

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* dy = static_cast<const T*>(args.inputs[0]);
      const T* x = static_cast<const T*>(args.inputs[1]);
      T* dx = static_cast<T*>(args.outputs[0]);
      const T lo = static_cast<T>(lo_), hi = static_cast<T>(hi_);
      parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dx[i] = x[i] >= lo && x[i] <= hi ? dy[i] : T(0);
      });
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  double lo_, hi_;  // the bounds; in the dtype they are compared in (f32 rounds them, as x)
};

// ---- bias_add_grad -----------------------------------------------------------------------

// dy viewed as (outer, C, inner): NHWC has inner = 1, NCHW has outer = N and inner = H*W...
struct ChannelGeom {
  int64_t outer = 1, channels = 1, inner = 1;
};

ChannelGeom channel_geom(const OpView& op, const TensorView& dy) {
  const bool nchw = op.get_string("data_format") == "NCHW";
  const int cd = nchw ? 1 : dy.rank() - 1;
  ChannelGeom g;
  g.channels = dy.dims[cd];
  for (int d = 0; d < cd; ++d) g.outer *= dy.dims[d];
  for (int d = cd + 1; d < dy.rank(); ++d) g.inner *= dy.dims[d];
  return g;
}

// f32/f64; bf16 natively for NHWC dy (mixed precision's conv layers: summed in double from
// bf16 loads, db rounded once), other 16-bit cases through f32 (widening_kernel.hpp).
void check_bias_add_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  const bool bf16_nhwc = op.input(0).dtype == DLRT_BF16 && op.output(0).dtype == DLRT_BF16 &&
                         channel_geom(op, op.input(0)).inner == 1;
  if (!bf16_nhwc) expect_float(op, op.input(0));
  fill_cost(op, 1, cost);
}

// acc[c] += dy[r*C + c] for rows r in [b, e), in double (the generic form, f64 and odd cases).
template <typename T>
DLRT_SIMD_INLINE void sum_rows(const T* __restrict dy, double* __restrict acc, int64_t b, int64_t e,
                               int64_t C) {
  for (int64_t r = b; r < e; ++r) {
    const T* __restrict row = dy + r * C;
    for (int64_t c = 0; c < C; ++c) acc[c] += static_cast<double>(row[c]);
  }
}

// The f32 form: channels [c0, c0+CB) summed over the rows with their double sums in registers
// (acc[] kept in memory across rows made the speed depend on where dy lies relative to it,
// by up to 2x: docs/benchmarks.md, "Kernel choices"), then added into acc. F holds L floats, D the same L lanes in
// double, CB = NV*L. Each channel is still summed row by row from 0 and then added to acc (0),
// so both paths give the same bits.
typedef float F2 __attribute__((vector_size(8)));
typedef double D2 __attribute__((vector_size(16)));
typedef double D4 __attribute__((vector_size(32)));
// L lanes of f32 from f32 or bf16 memory (bf16: the bits become the floats' top halves).
template <typename F>
DLRT_SIMD_INLINE F load_lanes(const float* p) {
  F f;
  __builtin_memcpy(&f, p, sizeof f);
  return f;
}
typedef uint16_t U2 __attribute__((vector_size(4)));
typedef int32_t I2 __attribute__((vector_size(8)));
template <typename F>
struct Bf16Load;  // the bf16 lanes and the int lanes of the same width as F
template <>
struct Bf16Load<F2> {
  using U = U2;
  using I = I2;
};
template <>
struct Bf16Load<simd::F4> {
  using U = simd::U4;
  using I = simd::M4;
};
template <typename F>
DLRT_SIMD_INLINE F load_lanes(const uint16_t* p) {
  typename Bf16Load<F>::U u;
  __builtin_memcpy(&u, p, sizeof u);
  return reinterpret_cast<F>(__builtin_convertvector(u, typename Bf16Load<F>::I) << 16);
}

template <typename F, typename D, int NV, typename E>
DLRT_SIMD_INLINE void sum_block_f32(const E* dy, double* acc, int64_t b, int64_t e, int64_t C,
                                    int64_t c0) {
  constexpr int L = sizeof(D) / sizeof(double);
  D a[NV] = {};
  for (int64_t r = b; r < e; ++r) {
    const E* row = dy + r * C + c0;
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) a[v] += __builtin_convertvector(load_lanes<F>(row + v * L), D);
  }
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) {
    D t;
    __builtin_memcpy(&t, acc + c0 + v * L, sizeof t);
    t += a[v];
    __builtin_memcpy(acc + c0 + v * L, &t, sizeof t);
  }
}
// Blocks of 8, 4, 2 and 1 vectors (one pass over the rows each), then single channels.
template <typename F, typename D, typename E>
DLRT_SIMD_INLINE void sum_rows_f32(const E* dy, double* acc, int64_t b, int64_t e, int64_t C) {
  constexpr int64_t L = sizeof(D) / sizeof(double);
  int64_t c0 = 0;
  for (; c0 + 8 * L <= C; c0 += 8 * L) sum_block_f32<F, D, 8>(dy, acc, b, e, C, c0);
  if (c0 + 4 * L <= C) sum_block_f32<F, D, 4>(dy, acc, b, e, C, c0), c0 += 4 * L;
  if (c0 + 2 * L <= C) sum_block_f32<F, D, 2>(dy, acc, b, e, C, c0), c0 += 2 * L;
  if (c0 + L <= C) sum_block_f32<F, D, 1>(dy, acc, b, e, C, c0), c0 += L;
  if (c0 < C)
    for (int64_t r = b; r < e; ++r)
      for (int64_t c = c0; c < C; ++c) acc[c] += static_cast<double>(simd::widen1(dy[r * C + c]));
}
// E: float, or uint16_t for bf16 dy.
template <typename E>
DLRT_TARGET_AVX2 void sum_rows_avx2(const E* dy, double* acc, int64_t b, int64_t e, int64_t C) {
  sum_rows_f32<simd::F4, D4>(dy, acc, b, e, C);
}
template <typename E>
void sum_rows_base(const E* dy, double* acc, int64_t b, int64_t e, int64_t C) {
  sum_rows_f32<F2, D2>(dy, acc, b, e, C);
}

// dy: (...,C) [NCHW: (N,C,...)] -> db: (C), the sum over every other dim, accumulated in double.
// NHWC: each thread sums a block of rows into its own C partial sums (contiguous, vectorised;
// f32 through sum_rows_avx2/_base), then the partials are added. NCHW: threads split the
// channels, each summing contiguous runs.
class BiasAddGradKernel : public LoopKernel {
 public:
  BiasAddGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype), g_(channel_geom(op, op.input(0))) {
    if (g_.inner == 1) partial_.assign(static_cast<size_t>(threads_ * g_.channels), 0.0);
  }

  void execute(const dlrt_kernel_args& args) override {
    if (dtype_ == DLRT_BF16) {  // NHWC (the check): the f32 path's sums on bf16 loads
      const auto* dy = static_cast<const uint16_t*>(args.inputs[0]);
      auto* db = static_cast<uint16_t*>(args.outputs[0]);
      const int64_t C = g_.channels;
      std::fill(partial_.begin(), partial_.end(), 0.0);
      int used = 1;
      parallel_for(g_.outer, std::max<int64_t>(1, kGrainCheap / C), threads_,
                   [&](int64_t b, int64_t e) {
                     const int tid = omp_in_parallel() ? omp_get_thread_num() : 0;
                     if (tid == 0) used = omp_in_parallel() ? omp_get_num_threads() : 1;
                     double* acc = partial_.data() + tid * C;
                     if (avx2_) sum_rows_avx2(dy, acc, b, e, C);
                     else sum_rows_base(dy, acc, b, e, C);
                   });
      for (int64_t c = 0; c < C; ++c) {
        double s = 0;
        for (int t = 0; t < used; ++t) s += partial_[t * C + c];
        db[c] = plugin::double_to_narrow(DLRT_BF16, s);  // rounded once
      }
      return;
    }
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* dy = static_cast<const T*>(args.inputs[0]);
      T* db = static_cast<T*>(args.outputs[0]);
      const int64_t C = g_.channels;
      if (g_.inner == 1) {
        // dy: (R, C)
        std::fill(partial_.begin(), partial_.end(), 0.0);
        const int64_t rows = g_.outer;
        int used = 1;
        parallel_for(rows, std::max<int64_t>(1, kGrainCheap / C), threads_,
                     [&](int64_t b, int64_t e) {
                       const int tid = omp_in_parallel() ? omp_get_thread_num() : 0;
                       if (tid == 0) used = omp_in_parallel() ? omp_get_num_threads() : 1;
                       double* acc = partial_.data() + tid * C;
                       if constexpr (std::is_same_v<T, float>) {
                         if (avx2_) sum_rows_avx2(dy, acc, b, e, C);
                         else sum_rows_base(dy, acc, b, e, C);
                       } else {
                         sum_rows(dy, acc, b, e, C);
                       }
                     });
        for (int64_t c = 0; c < C; ++c) {
          double s = 0;
          for (int t = 0; t < used; ++t) s += partial_[t * C + c];
          db[c] = static_cast<T>(s);
        }
      } else {
        // dy: (outer, C, inner)
        const int64_t outer = g_.outer, inner = g_.inner;
        parallel_for(C, std::max<int64_t>(1, kGrainCheap / (outer * inner)), threads_,
                     [&](int64_t b, int64_t e) {
                       for (int64_t c = b; c < e; ++c) {
                         double s = 0;
                         for (int64_t o = 0; o < outer; ++o) {
                           const T* run = dy + (o * C + c) * inner;
                           for (int64_t i = 0; i < inner; ++i) s += static_cast<double>(run[i]);
                         }
                         db[c] = static_cast<T>(s);
                       }
                     });
      }
    });
  }

 private:
  int32_t dtype_;
  ChannelGeom g_;
  std::vector<double> partial_;  // (threads, C) per-thread sums, NHWC only
};

// ---- reduce_max_grad ---------------------------------------------------------------------

void check_reduce_max_grad(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_float(op, op.input(0));
  fill_cost(op, 2, cost);
}

// x: any, y = reduce_max(x), dy: shape of y -> dx: shape of x
// dx[i] = dy[o] / (number of maxima of group o) where x[i] == y[o], else 0.
// Pass 1 counts the maxima per group (one thread: groups interleave arbitrarily with the
// axes); pass 2, parallel, writes dx. dx may alias x (each element reads its own x first).
class ReduceMaxGradKernel : public LoopKernel {
 public:
  ReduceMaxGradKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.input(0).dtype) {
    const ReduceGeom g = reduce_geom(op, op.input(0).dims);
    walk_ =
        make_walk<2>(op.input(0).dims, {plugin::row_major_strides(op.input(0).dims), g.y_strides});
    ties_.assign(static_cast<size_t>(g.out_numel), 0);
  }

  void execute(const dlrt_kernel_args& args) override {
    with_float(dtype_, [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(args.inputs[0]);
      const T* y = static_cast<const T*>(args.inputs[1]);
      const T* dy = static_cast<const T*>(args.inputs[2]);
      T* dx = static_cast<T*>(args.outputs[0]);
      const int64_t sy = walk_.inner_stride(1);
      std::fill(ties_.begin(), ties_.end(), 0);
      for_each_segment(walk_, 0, walk_.numel, [&](int64_t, const int64_t* off, int64_t len) {
        const T* xs = x + off[0];
        for (int64_t j = 0; j < len; ++j) ties_[off[1] + j * sy] += xs[j] == y[off[1] + j * sy];
      });
      parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        for_each_segment(walk_, b, e, [&](int64_t, const int64_t* off, int64_t len) {
          const T* xs = x + off[0];
          T* dxs = dx + off[0];
          for (int64_t j = 0; j < len; ++j) {
            const int64_t o = off[1] + j * sy;
            dxs[j] =
                xs[j] == y[o]
                    ? static_cast<T>(static_cast<double>(dy[o]) / static_cast<double>(ties_[o]))
                    : T(0);
          }
        });
      });
    });
  }

 private:
  int32_t dtype_;
  Walk<2> walk_;               // over x (dense) with y's strides
  std::vector<int64_t> ties_;  // maxima per output group
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  for (const char* name : {"add", "sub", "mul", "div", "maximum", "minimum"})
    t.push_back({name, check_numeric_binary, make<BinaryKernel>});
  t.push_back({"pow", check_binary, make<BinaryKernel>});
  add_unary<Neg>(t, "neg");
  add_unary<Exp>(t, "exp");
  add_unary<Log>(t, "log");
  add_unary<Sqrt>(t, "sqrt");
  add_unary<Softplus>(t, "softplus");
  add_unary<Sin>(t, "sin");
  add_unary<Cos>(t, "cos");
  add_unary<Tan>(t, "tan");
  add_unary<Asin>(t, "asin");
  add_unary<Acos>(t, "acos");
  add_unary<Atan>(t, "atan");
  add_unary<Sinh>(t, "sinh");
  add_unary<Cosh>(t, "cosh");
  add_unary<Asinh>(t, "asinh");
  add_unary<Acosh>(t, "acosh");
  add_unary<Atanh>(t, "atanh");
  add_unary<Erf>(t, "erf");
  add_unary<Ceil>(t, "ceil");
  add_unary<Floor>(t, "floor");
  add_unary<Round>(t, "round");
  add_unary<Sign>(t, "sign");
  t.push_back({"relu_grad", check_relu_grad, make<ReluGradKernel>});
  t.push_back({"clip_grad", check_f32_f64_grad, make<ClipGradKernel>});
  t.push_back({"bias_add_grad", check_bias_add_grad, make<BiasAddGradKernel>});
  t.push_back({"reduce_max_grad", check_reduce_max_grad, make<ReduceMaxGradKernel>});
}

}  // namespace dlrt::cpu::loops
