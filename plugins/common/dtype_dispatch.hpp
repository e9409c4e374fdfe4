// dtype_dispatch.hpp: calling a generic kernel body with the C++ type of a dtype, shared by the
// reference and cpu plugins (each used to carry the same copies).
//
//   with_numeric(dtype, [&](auto t) { using T = decltype(t); ... });
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "op_view.hpp"

namespace dlrt::plugin {

// True for the dtypes with_numeric dispatches on: f32, f64 and every integer dtype (i8..i64,
// u8..u64). f16/bf16 are numbers too but reach the kernels as f32/f64 copies.
inline bool is_numeric_dtype(int32_t dtype) {
  switch (dtype) {
    case DLRT_F32:
    case DLRT_F64:
    case DLRT_I32:
    case DLRT_I64:
    case DLRT_U8:
    case DLRT_I8:
    case DLRT_U16:
    case DLRT_I16:
    case DLRT_U32:
    case DLRT_U64:
      return true;
    default:
      return false;
  }
}

// fn(T{}) with T the C++ type of a numeric dtype (is_numeric_dtype): f64, the integers, else
// float (checked before by the caller; the 16-bit floats reach kernels as f32 copies,
// widening_kernel.hpp).
template <typename Fn>
void with_numeric(int32_t dtype, Fn&& fn) {
  switch (dtype) {
    case DLRT_F64:
      return fn(double{});
    case DLRT_I32:
      return fn(int32_t{});
    case DLRT_I64:
      return fn(int64_t{});
    case DLRT_U8:
      return fn(uint8_t{});
    case DLRT_I8:
      return fn(int8_t{});
    case DLRT_U16:
      return fn(uint16_t{});
    case DLRT_I16:
      return fn(int16_t{});
    case DLRT_U32:
      return fn(uint32_t{});
    case DLRT_U64:
      return fn(uint64_t{});
    default:
      return fn(float{});
  }
}

// fn(T{}) with T an unsigned integer of the dtype's element size: for ops that move elements
// without reading them as numbers (where), so every dtype runs, 16-bit floats included.
template <typename Fn>
void with_element_size(int32_t dtype, Fn&& fn) {
  switch (dtype_size(dtype)) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    default:
      return fn(uint64_t{});
  }
}

// The unsigned type in which integer T's sums, differences and products wrap modulo 2^bits
// (NumPy's integer arithmetic): T's unsigned twin, but never narrower than `unsigned`. C++
// promotes a uint16_t operand to *signed* int, so uint16_t(65535) * uint16_t(65535) would
// overflow int (undefined) where unsigned int wraps; the result, cast back to T, keeps the low
// bits either way.
template <typename T>
using WrapUnsigned = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

// a (op) b modulo 2^bits for an integer T, op one of + - *: computed in WrapUnsigned<T>, where
// C++ defines the wrap (signed overflow would be undefined).
template <typename T>
T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<WrapUnsigned<T>>(a) + static_cast<WrapUnsigned<T>>(b));
}
template <typename T>
T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<WrapUnsigned<T>>(a) - static_cast<WrapUnsigned<T>>(b));
}
template <typename T>
T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<WrapUnsigned<T>>(a) * static_cast<WrapUnsigned<T>>(b));
}

// An integer quotient truncated toward zero (C's); x / 0 = 0 (NumPy's integer division by
// zero) and, for signed T, the lowest value / -1, whose quotient does not fit, wraps to itself.
// (Division by zero and that overflow are undefined in C++, so both are answered first.)
template <typename T>
T integer_quotient(T x, T y) {
  if (y == 0) return T(0);
  if constexpr (std::is_signed_v<T>)
    if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;
  return static_cast<T>(x / y);
}

// The running sum of a scan over T (cumsum): double for floats; for integers WrapUnsigned<T>,
// whose sums wrap modulo 2^bits as C++ defines (NumPy's cumsum of integers; signed overflow
// would be undefined). The scan casts the sum back to T as it stores it.
template <typename T, bool = std::is_integral_v<T>>
struct ScanSum {
  using type = double;
};
template <typename T>
struct ScanSum<T, true> {
  using type = WrapUnsigned<T>;
};

}  // namespace dlrt::plugin
