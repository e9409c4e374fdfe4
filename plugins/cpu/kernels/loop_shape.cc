// loop_shape.cc: the cpu plugin's data-movement loop kernels: copy, reshape, flatten (a byte
// copy, skipped when the buffers coincide), transpose and broadcast_to (a strided gather on a
// collapsed Walk), cast between f32/f64/i8/i16/i32/i64/u8/u16/u32/u64/bool/f16/bf16 (f16 and
// bf16 through double: narrow_float.hpp), and fill. Shape ops move elements
// of any dtype as 1/2/4/8-byte words, f16/bf16 included.
#include <cmath>
#include <limits>

#include "../convert_16bit.hpp"
#include "loop_util.hpp"
#include "narrow_float.hpp"  // plugins/common

namespace dlrt::cpu::loops {
namespace {

// ---- copy, reshape, flatten --------------------------------------------------------------

// copy, reshape, flatten, transpose, broadcast_to move bytes: every dtype, no arithmetic.
void check_bytes(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  fill_cost(op, 0, cost);
}

// x -> y: the same bytes (y == x in place: nothing to do)
class CopyKernel : public LoopKernel {
 public:
  CopyKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), bytes_(static_cast<int64_t>(op.output(0).bytes)) {}

  void execute(const dlrt_kernel_args& args) override {
    const auto* src = static_cast<const unsigned char*>(args.inputs[0]);
    auto* dst = static_cast<unsigned char*>(args.outputs[0]);
    if (src == dst) return;
    if (src < dst + bytes_ && dst < src + bytes_) {  // partial overlap: one ordered move
      std::memmove(dst, src, static_cast<size_t>(bytes_));
      return;
    }
    parallel_for(bytes_, kGrainCheap * 8, threads_, [&](int64_t b, int64_t e) {
      std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
    });
  }

 private:
  int64_t bytes_;
};

// ---- transpose, broadcast_to: y[i] = x[offset(i)] ----------------------------------------

// x: X -> y: Y, y[i] = x[source(i)] with per-dim source strides (a permutation of x's strides
// for transpose, 0 along stretched dims for broadcast_to). y must not overlap x.
class GatherKernel : public LoopKernel {
 public:
  GatherKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), esize_(plugin::dtype_size(op.input(0).dtype)) {
    const auto& y = op.output(0).dims;
    std::vector<int64_t> src;
    if (op.name() == "transpose") {
      const std::vector<int64_t> xs = plugin::row_major_strides(op.input(0).dims);
      for (int64_t d : op.get_ints("perm")) src.push_back(xs[d]);
    } else {
      src = plugin::broadcast_strides(op.input(0).dims, y, op.name());
    }
    walk_ = make_walk<1>(y, {src});
  }

  void execute(const dlrt_kernel_args& args) override {
    with_bytes(esize_, [&](auto t) {
      using U = decltype(t);
      const U* x = static_cast<const U*>(args.inputs[0]);
      U* y = static_cast<U*>(args.outputs[0]);
      const int64_t s = walk_.inner_stride(0);
      parallel_for(walk_.numel, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        for_each_segment(walk_, b, e, [&](int64_t i, const int64_t* off, int64_t len) {
          const U* xs = x + off[0];
          U* ys = y + i;
          if (s == 1) std::memcpy(ys, xs, static_cast<size_t>(len) * sizeof(U));
          else if (s == 0) std::fill(ys, ys + len, *xs);
          else
            for (int64_t j = 0; j < len; ++j) ys[j] = xs[j * s];
        });
      });
    });
  }

 private:
  size_t esize_;
  Walk<1> walk_;
};

// ---- cast and fill -----------------------------------------------------------------------

template <typename T>
constexpr bool is_bool8 = std::is_same_v<T, Bool8>;

// a < b for integers of any signedness and width, as numbers (C++20's std::cmp_less): a
// plain `<` would convert a negative signed operand to a huge unsigned one.
template <typename A, typename B>
constexpr bool int_less(A a, B b) {
  if constexpr (std::is_signed_v<A> == std::is_signed_v<B>) return a < b;
  else if constexpr (std::is_signed_v<A>) return a < 0 || static_cast<std::make_unsigned_t<A>>(a) < b;
  else return b >= 0 && a < static_cast<std::make_unsigned_t<B>>(b);
}

// Integer v saturated to integer type To: exact for every pair, u64 and i64 included.
template <typename To, typename From>
To saturate(From v) {
  constexpr To lo = std::numeric_limits<To>::min(), hi = std::numeric_limits<To>::max();
  return int_less(v, lo) ? lo : int_less(hi, v) ? hi : static_cast<To>(v);
}

// docs/ops.md's cast, exactly as the reference kernels do it: float -> float rounds to nearest;
// float -> int truncates toward zero and saturates (NaN gives 0); int -> int saturates;
// int -> float rounds once to nearest; anything -> bool is != 0 (NaN gives true); bool reads
// as 0/1.
template <typename To, typename From>
To convert(From x) {
  if constexpr (is_bool8<From>) {
    return convert<To>(static_cast<uint8_t>(x.v != 0 ? 1 : 0));
  } else if constexpr (is_bool8<To>) {
    return To{static_cast<uint8_t>(x != 0 ? 1 : 0)};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<From>) {
    // The bounds as doubles are exact but for the 64-bit maxima, which round up to 2^63 and
    // 2^64: a t below them converts without overflow, one at or above them saturates.
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double t = std::trunc(static_cast<double>(x));
    if (std::isnan(t)) return To(0);
    if (t <= lo) return std::numeric_limits<To>::min();
    if (t >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(t);
  } else {
    return saturate<To>(x);
  }
}

void expect_plain(const OpView& op, const TensorView& t) {
  if (!is_plain_dtype(t.dtype))
    unimplemented(op, std::string("supports f32, f64, the integers and bool, got ") +
                          plugin::dtype_name(t.dtype));
}

using plugin::is_narrow_float;

void expect_castable(const OpView& op, const TensorView& t) {
  if (!is_plain_dtype(t.dtype) && !is_narrow_float(t.dtype))
    unimplemented(op, std::string("supports f32, f64, f16, bf16, the integers and bool, got ") +
                          plugin::dtype_name(t.dtype));
}

void check_cast(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_castable(op, op.input(0));
  expect_castable(op, op.output(0));
  fill_cost(op, 1, cost);
}

// A 16-bit float element as double, exactly, and back (narrow_float.hpp).
double widen(int32_t dtype, uint16_t h) { return plugin::narrow_to_double(dtype, h); }
uint16_t narrow(int32_t dtype, double v) { return plugin::double_to_narrow(dtype, v); }

// x: any dims, dtype From -> y: same dims, dtype To. In place only when sizes match (the
// element-by-element loop reads x[i] before writing y[i]).
class CastKernel : public LoopKernel {
 public:
  CastKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p),
        from_(op.input(0).dtype),
        to_(op.output(0).dtype),
        n_(op.input(0).numel),
        convert_(convert_isa(p)) {}

  void execute(const dlrt_kernel_args& args) override {
    if (from_ == to_) {
      if (args.inputs[0] != args.outputs[0])
        std::memmove(args.outputs[0], args.inputs[0],
                     static_cast<size_t>(n_) * plugin::dtype_size(to_));
      return;
    }
    if (is_narrow_float(from_) || is_narrow_float(to_)) return execute_narrow(args);
    with_plain(from_, [&](auto f) {
      with_plain(to_, [&](auto t) {
        using From = decltype(f);
        using To = decltype(t);
        const From* x = static_cast<const From*>(args.inputs[0]);
        To* y = static_cast<To*>(args.outputs[0]);
        parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = convert<To>(x[i]);
        });
      });
    });
  }

 private:
  // f16/bf16 on either side: through double, which holds every value of both exactly; from
  // double the plain dtypes convert as above, and the narrowing rounds once.
  void execute_narrow(const dlrt_kernel_args& args) {
    auto* y_bits = static_cast<uint16_t*>(args.outputs[0]);
    const auto* x_bits = static_cast<const uint16_t*>(args.inputs[0]);
    if (is_narrow_float(from_) && is_narrow_float(to_)) {  // f16 <-> bf16
      parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y_bits[i] = narrow(to_, widen(from_, x_bits[i]));
      });
    } else if (from_ == DLRT_F32 || to_ == DLRT_F32) {
      // f32 <-> f16/bf16, what mixed precision casts every step: the whole-buffer conversions
      // of convert_16bit.hpp (the same single rounding as through double). Split from 8,192
      // elements: the weights they cast were last touched a step ago, so each thread's misses
      // overlap the other's (in the bf16 step the casts took 61 us on one thread, 52 on two).
      parallel_for(n_, kGrainCheap / 4, threads_, [&](int64_t b, int64_t e) {
        const auto n = static_cast<size_t>(e - b);
        if (from_ == DLRT_F32) {
          narrow_16bit(convert_, to_, static_cast<const float*>(args.inputs[0]) + b, y_bits + b, n);
        } else {
          widen_16bit(convert_, from_, x_bits + b, static_cast<float*>(args.outputs[0]) + b, n);
        }
      });
    } else if (is_narrow_float(from_)) {
      with_plain(to_, [&](auto t) {
        using To = decltype(t);
        To* y = static_cast<To*>(args.outputs[0]);
        parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = convert<To>(widen(from_, x_bits[i]));
        });
      });
    } else {
      with_plain(from_, [&](auto f) {
        using From = decltype(f);
        const From* x = static_cast<const From*>(args.inputs[0]);
        parallel_for(n_, kGrainCheap, threads_, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y_bits[i] = narrow(to_, convert<double>(x[i]));
        });
      });
    }
  }

  int32_t from_, to_;
  int64_t n_;
  ConvertIsa convert_;
};

void check_fill(const OpView& op, const dlrt_plugin&, dlrt_op_cost* cost) {
  expect_plain(op, op.output(0));
  fill_cost(op, 0, cost);
}

// -> y: shape, every element `value` converted as cast converts a double (made once, in create)
class FillKernel : public LoopKernel {
 public:
  FillKernel(const dlrt_plugin& p, const OpView& op)
      : LoopKernel(p), dtype_(op.output(0).dtype), n_(op.output(0).numel) {
    const double v = op.get_float("value");
    with_plain(dtype_, [&](auto t) {
      using T = decltype(t);
      const T c = convert<T>(v);
      std::memcpy(value_, &c, sizeof(T));
    });
  }

  void execute(const dlrt_kernel_args& args) override {
    with_plain(dtype_, [&](auto t) {
      using T = decltype(t);
      T c;
      std::memcpy(&c, value_, sizeof(T));
      T* y = static_cast<T*>(args.outputs[0]);
      parallel_for(n_, kGrainCheap, threads_,
                   [&](int64_t b, int64_t e) { std::fill(y + b, y + e, c); });
    });
  }

 private:
  int32_t dtype_;
  int64_t n_;
  unsigned char value_[8] = {};
};

}  // namespace

DLRT_CPU_KERNELS(t) {
  for (const char* name : {"copy", "stop_gradient", "reshape", "flatten"})
    t.push_back({name, check_bytes, make<CopyKernel>});
  t.push_back({"transpose", check_bytes, make<GatherKernel>});
  t.push_back({"broadcast_to", check_bytes, make<GatherKernel>});
  t.push_back({"cast", check_cast, make<CastKernel>});
  t.push_back({"fill", check_fill, make<FillKernel>});
}

}  // namespace dlrt::cpu::loops
