// host_tensor.cc: HostTensor's conversions, and the element-count check every dims list of a
// model goes through.
#include "onnx_import/host_tensor.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "status.hpp"

namespace dlrt::onnx_import {
namespace {

// IEEE half and bfloat16 to float (for folding shapes or scalars given in those types).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// An integer-valued double (what the folds compute) as integer type T modulo 2^bits, as the
// device kernels' integer arithmetic wraps (u16 65535 + 1 folds to 0): through int64, or
// uint64 from 2^63 on, so no conversion overflows (an out-of-range double -> integer
// conversion is undefined in C++). NaN, which no integer fold makes, stores 0.
template <typename T>
T wrap_to(double v) {
  if (std::isnan(v)) return T(0);
  if (v >= 9223372036854775808.0)  // 2^63
    return static_cast<T>(v >= 18446744073709551616.0 ? UINT64_MAX : static_cast<uint64_t>(v));
  if (v < -9223372036854775808.0) return static_cast<T>(INT64_MIN);
  return static_cast<T>(static_cast<int64_t>(v));
}

double element(const HostTensor& t, int64_t i) {
  const uint8_t* p = t.bytes.data() + i * dlrt_dtype_size(t.dtype);
  switch (t.dtype) {
    case DLRT_F32: return load<float>(p);
    case DLRT_F64: return load<double>(p);
    case DLRT_I32: return load<int32_t>(p);
    case DLRT_I64: return static_cast<double>(load<int64_t>(p));
    case DLRT_U8:
    case DLRT_BOOL: return *p;
    case DLRT_I8: return static_cast<int8_t>(*p);
    case DLRT_U16: return load<uint16_t>(p);
    case DLRT_I16: return load<int16_t>(p);
    case DLRT_U32: return load<uint32_t>(p);
    case DLRT_U64: return static_cast<double>(load<uint64_t>(p));  // exact below 2^53, as i64
    case DLRT_F16: return half_to_float(load<uint16_t>(p));
    case DLRT_BF16: {
      const uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: fail(DLRT_INTERNAL, "HostTensor: no dtype");
  }
}

}  // namespace

int64_t checked_element_count(const std::vector<int64_t>& dims, int64_t limit,
                              const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: dims {} have a negative dim", what,
                                              dims_text(dims)));
    if (d != 0 && n > limit / d)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: dims {} hold more than {} elements (the product overflows the "
                       "importer's limit)",
                       what, dims_text(dims), limit));
    n *= d;
  }
  return n;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  return "(" + fmt::format("{}", fmt::join(dims, ",")) + ")";
}

int64_t HostTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> HostTensor::as_int64s() const {
  const int64_t n = element_count();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DLRT_I64)
      out[i] = load<int64_t>(bytes.data() + i * 8);
    else if (dtype == DLRT_U64)  // exact; above INT64_MAX wraps negative (no double in between)
      out[i] = static_cast<int64_t>(load<uint64_t>(bytes.data() + i * 8));
    else
      out[i] = static_cast<int64_t>(element(*this, i));
  }
  return out;
}

std::vector<double> HostTensor::as_doubles() const {
  const int64_t n = element_count();
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = element(*this, i);
  return out;
}

HostTensor HostTensor::from_int64s(const std::vector<int64_t>& values, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = DLRT_I64;
  t.dims = std::move(dims);
  t.bytes.resize(values.size() * 8);
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

HostTensor HostTensor::from_floats(const std::vector<float>& values, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = DLRT_F32;
  t.dims = std::move(dims);
  t.bytes.resize(values.size() * 4);
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

HostTensor HostTensor::from_doubles(dlrt_dtype dtype, const std::vector<double>& values,
                                    std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  const size_t es = dlrt_dtype_size(dtype);
  t.bytes.resize(values.size() * es);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = t.bytes.data() + i * es;
    const double v = values[i];
    switch (dtype) {
      case DLRT_F32: store<float>(p, static_cast<float>(v)); break;
      case DLRT_F64: store<double>(p, v); break;
      case DLRT_I32: store<int32_t>(p, static_cast<int32_t>(v)); break;
      case DLRT_I64: store<int64_t>(p, static_cast<int64_t>(v)); break;
      case DLRT_U8: *p = static_cast<uint8_t>(v); break;
      case DLRT_I8: *p = static_cast<uint8_t>(static_cast<int8_t>(v)); break;
      case DLRT_U16: store<uint16_t>(p, wrap_to<uint16_t>(v)); break;
      case DLRT_I16: store<int16_t>(p, wrap_to<int16_t>(v)); break;
      case DLRT_U32: store<uint32_t>(p, wrap_to<uint32_t>(v)); break;
      case DLRT_U64: store<uint64_t>(p, wrap_to<uint64_t>(v)); break;
      case DLRT_BOOL: *p = v != 0 ? 1 : 0; break;
      default:
        fail(DLRT_UNIMPLEMENTED,
             fmt::format("folding a value of dtype {} on the host", dlrt_dtype_name(dtype)));
    }
  }
  return t;
}

}  // namespace dlrt::onnx_import
