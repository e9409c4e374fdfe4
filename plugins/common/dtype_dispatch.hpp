// dtype_dispatch.hpp: calling a generic kernel body with the C++ type of a dtype, shared by the
// reference and cpu plugins (each used to carry the same copies).
//
//   with_numeric(dtype, [&](auto t) { using T = decltype(t); ... });
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <type_traits>

#include "op_view.hpp"

namespace dlrt::plugin {

// fn(T{}) with T the C++ type of a numeric dtype: f64, i32, i64, u8, i8, else float (checked
// before by the caller; the 16-bit floats reach kernels as f32 copies, widening_kernel.hpp).
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

// The running sum of a scan over T (cumsum): double for floats; for integers the unsigned type
// of T, whose sums wrap modulo 2^bits as C++ defines (NumPy's cumsum of integers; signed
// overflow would be undefined).
template <typename T, bool = std::is_integral_v<T>>
struct ScanSum {
  using type = double;
};
template <typename T>
struct ScanSum<T, true> {
  using type = std::make_unsigned_t<T>;
};

}  // namespace dlrt::plugin
