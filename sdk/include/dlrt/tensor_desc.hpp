// dlrt/tensor_desc.hpp: (detail) the two helpers every builder of a tensor or graph value
// shares: a dense dlrt_tensor_desc from a dtype and dims, and the dlrt_dtype of a C++ element
// type (float -> DLRT_F32, int32_t -> DLRT_I32, ...).
#ifndef DLRT_TENSOR_DESC_HPP_
#define DLRT_TENSOR_DESC_HPP_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dlrt/dlrt.h"

namespace dlrt {

namespace detail {

// A dense desc of `dims` (row-major), e.g. dense_desc(DLRT_F32, {2, 3}).
inline dlrt_tensor_desc dense_desc(dlrt_dtype dtype, const std::vector<int64_t>& dims) {
  dlrt_tensor_desc d{};
  d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(dims.size());
  // A rank above DLRT_MAX_RANK is passed on as is, and the library rejects it by name.
  for (size_t i = 0; i < dims.size() && i < DLRT_MAX_RANK; ++i) d.dims[i] = dims[i];
  d.layout = DLRT_LAYOUT_DENSE;
  return d;
}

// The dlrt_dtype of a C++ element type.
template <typename T>
struct CDtype;
template <>
struct CDtype<float> {
  static constexpr dlrt_dtype value = DLRT_F32;
};
template <>
struct CDtype<double> {
  static constexpr dlrt_dtype value = DLRT_F64;
};
template <>
struct CDtype<int32_t> {
  static constexpr dlrt_dtype value = DLRT_I32;
};
template <>
struct CDtype<int64_t> {
  static constexpr dlrt_dtype value = DLRT_I64;
};
template <>
struct CDtype<uint8_t> {
  static constexpr dlrt_dtype value = DLRT_U8;
};
template <>
struct CDtype<int8_t> {
  static constexpr dlrt_dtype value = DLRT_I8;
};
template <>
struct CDtype<uint16_t> {
  static constexpr dlrt_dtype value = DLRT_U16;
};
template <>
struct CDtype<uint32_t> {
  static constexpr dlrt_dtype value = DLRT_U32;
};
template <>
struct CDtype<uint64_t> {
  static constexpr dlrt_dtype value = DLRT_U64;
};
template <>
struct CDtype<int16_t> {
  static constexpr dlrt_dtype value = DLRT_I16;
};

}  // namespace detail

}  // namespace dlrt

#endif  // DLRT_TENSOR_DESC_HPP_
