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

size_t dtype_size(int32_t dtype) { return dlrt_dtype_size(dtype); }

std::string dtype_name(int32_t dtype) {
  const char* name = dlrt_dtype_name(dtype);
  return name != nullptr ? name : "dtype " + std::to_string(dtype);
}

std::string reduce_op_name(int32_t op) {
  switch (op) {
    case DLRT_REDUCE_SUM:
      return "SUM";
    case DLRT_REDUCE_PROD:
      return "PROD";
    case DLRT_REDUCE_MAX:
      return "MAX";
    case DLRT_REDUCE_MIN:
      return "MIN";
    case DLRT_REDUCE_AVG:
      return "AVG";
    default:
      return "reduce_op " + std::to_string(op);
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
