// reduce.cc: element-wise folds for all_reduce, one plain loop per (dtype, op).
#include "reduce.hpp"

#include <cstdint>
#include <type_traits>

namespace dlrt::mpi {
namespace {

// Integer sums and products wrap (computed unsigned: signed overflow would be undefined).
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename T>
void fold(T* acc, const T* in, size_t n, int32_t op) {
  switch (op) {
    case DLRT_REDUCE_SUM:
    case DLRT_REDUCE_AVG:
      for (size_t i = 0; i < n; ++i) acc[i] = add(acc[i], in[i]);
      break;
    case DLRT_REDUCE_PROD:
      for (size_t i = 0; i < n; ++i) acc[i] = mul(acc[i], in[i]);
      break;
    case DLRT_REDUCE_MAX:  // a NaN in acc stays; one in `in` is skipped (std::max's rule)
      for (size_t i = 0; i < n; ++i) acc[i] = acc[i] < in[i] ? in[i] : acc[i];
      break;
    case DLRT_REDUCE_MIN:
      for (size_t i = 0; i < n; ++i) acc[i] = in[i] < acc[i] ? in[i] : acc[i];
      break;
    default:
      break;  // excluded by reduce_supported
  }
}

bool is_float(int32_t dtype) { return dtype == DLRT_F32 || dtype == DLRT_F64; }

}  // namespace

size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case DLRT_F32: return 4;
    case DLRT_F16: return 2;
    case DLRT_BF16: return 2;
    case DLRT_F64: return 8;
    case DLRT_I32: return 4;
    case DLRT_I64: return 8;
    case DLRT_U8: return 1;
    case DLRT_I8: return 1;
    case DLRT_BOOL: return 1;
    default: return 0;
  }
}

std::string dtype_name(int32_t dtype) {
  switch (dtype) {
    case DLRT_F32: return "F32";
    case DLRT_F16: return "F16";
    case DLRT_BF16: return "BF16";
    case DLRT_F64: return "F64";
    case DLRT_I32: return "I32";
    case DLRT_I64: return "I64";
    case DLRT_U8: return "U8";
    case DLRT_I8: return "I8";
    case DLRT_BOOL: return "BOOL";
    default: return "dtype " + std::to_string(dtype);
  }
}

std::string reduce_op_name(int32_t op) {
  switch (op) {
    case DLRT_REDUCE_SUM: return "SUM";
    case DLRT_REDUCE_PROD: return "PROD";
    case DLRT_REDUCE_MAX: return "MAX";
    case DLRT_REDUCE_MIN: return "MIN";
    case DLRT_REDUCE_AVG: return "AVG";
    default: return "reduce_op " + std::to_string(op);
  }
}

bool reduce_supported(int32_t dtype, int32_t op) {
  bool type_ok = dtype == DLRT_F32 || dtype == DLRT_F64 || dtype == DLRT_I32 || dtype == DLRT_I64;
  switch (op) {
    case DLRT_REDUCE_SUM:
    case DLRT_REDUCE_PROD:
    case DLRT_REDUCE_MAX:
    case DLRT_REDUCE_MIN:
      return type_ok;
    case DLRT_REDUCE_AVG:
      return is_float(dtype);
    default:
      return false;
  }
}

void reduce_into(void* acc, const void* in, size_t count, int32_t dtype, int32_t op) {
  switch (dtype) {
    case DLRT_F32:
      fold(static_cast<float*>(acc), static_cast<const float*>(in), count, op);
      break;
    case DLRT_F64:
      fold(static_cast<double*>(acc), static_cast<const double*>(in), count, op);
      break;
    case DLRT_I32:
      fold(static_cast<int32_t*>(acc), static_cast<const int32_t*>(in), count, op);
      break;
    case DLRT_I64:
      fold(static_cast<int64_t*>(acc), static_cast<const int64_t*>(in), count, op);
      break;
    default:
      break;  // excluded by reduce_supported
  }
}

void finish_reduce(void* acc, size_t count, int32_t dtype, int32_t op, int nranks) {
  if (op != DLRT_REDUCE_AVG) return;
  if (dtype == DLRT_F32) {
    auto* a = static_cast<float*>(acc);
    for (size_t i = 0; i < count; ++i) a[i] /= static_cast<float>(nranks);
  } else if (dtype == DLRT_F64) {
    auto* a = static_cast<double*>(acc);
    for (size_t i = 0; i < count; ++i) a[i] /= static_cast<double>(nranks);
  }
}

}  // namespace dlrt::mpi
