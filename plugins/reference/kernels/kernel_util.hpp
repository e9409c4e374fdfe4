// kernel_util.hpp: what the reference kernel files share (internal to this library): the
// kernel table each family file adds its rows to, the checks of what the oracle can run, dtype
// dispatch, and the activations of the fused ops.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dtype_dispatch.hpp"
#include "kernel_registry.hpp"
#include "op_view.hpp"
#include "reference_kernels.hpp"

namespace dlrt::reference::detail {

using plugin::fail;
using plugin::TensorView;

using CheckFn = void (*)(const OpView& op);

// One op: its name, the kernel, and the check that must pass before the kernel may run
// (nullptr: the kernel runs every descriptor the schema accepts).
struct KernelDef {
  const char* name;
  KernelFn run;
  CheckFn check;
};
using KernelTable = std::vector<KernelDef>;

// The kernel table: every family file adds its rows with one DLRT_REFERENCE_KERNELS(t) { ... }
// block (plugins/common/kernel_registry.hpp); nothing else lists them.
using Registry = plugin::KernelRegistry<KernelDef, &KernelDef::name>;
#define DLRT_REFERENCE_KERNELS(rows) DLRT_KERNEL_ROWS(::dlrt::reference::detail::Registry, rows)

// ---- checks (throw Error naming the op) --------------------------------------------------
//
// The core hands the oracle only descriptors its op schema accepted (docs/design.md, "What a
// plugin may trust"): counts, dtypes, dims, inferred outputs and complete attributes. A check
// answers only what this plugin can run, so most ops need just the dtype one below, and ops
// that run every dtype the schema admits have none (KernelDef::check == nullptr).

// The oracle computes in double and stores f32 or f64; the schema also admits f16/bf16 for
// some ops, which it declines with the reason.
inline void expect_float(const OpView& op, const TensorView& t, const char* what) {
  if (t.dtype == DLRT_F32 || t.dtype == DLRT_F64) return;
  op.unimplemented(std::string(what) + ": dtype " + plugin::dtype_name(t.dtype) +
                   " is not handled (f32, f64)");
}
inline void check_float(const OpView& op) { expect_float(op, op.input(0), "input 0"); }
inline void check_float_output(const OpView& op) { expect_float(op, op.output(0), "output 0"); }

// The numbers of the schema's kNumericTypes this oracle runs in their own type (f16/bf16
// reach the kernels as f64, see ops.cc): comparisons, where, add/sub/mul/maximum/minimum.
using plugin::is_numeric_dtype;
inline void expect_numeric(const OpView& op, const TensorView& t, const char* what) {
  if (is_numeric_dtype(t.dtype)) return;
  op.unimplemented(std::string(what) + ": dtype " + plugin::dtype_name(t.dtype) +
                   " is not handled (f32, f64, i8, i16, i32, i64, u8, u16, u32, u64)");
}

// One of the dtypes cast/fill handle: the numbers and bool.
inline bool is_plain_dtype(int32_t d) { return d == DLRT_BOOL || is_numeric_dtype(d); }

// ---- dtype dispatch ----------------------------------------------------------------------

// Calls fn(T{}) with T = float or double for a float dtype (checked before).
template <typename Fn>
void with_float(int32_t dtype, Fn&& fn) {
  if (dtype == DLRT_F64) fn(double{});
  else fn(float{});
}

// with_numeric, with_element_size and ScanSum: plugins/common/dtype_dispatch.hpp.
using plugin::ScanSum;
using plugin::with_element_size;
using plugin::with_numeric;

// Element i of an i32/i64 buffer.
inline int64_t load_index(const void* p, int32_t dtype, int64_t i) {
  return dtype == DLRT_I64 ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
}

// ---- activations of the fused ops --------------------------------------------------------

enum class Act { kNone, kRelu, kSigmoid, kTanh };

inline Act parse_activation(const OpView& op) {
  const std::string& a = op.get_string("activation");
  if (a == "none") return Act::kNone;
  if (a == "relu") return Act::kRelu;
  if (a == "sigmoid") return Act::kSigmoid;
  if (a == "tanh") return Act::kTanh;
  op.invalid("activation is '" + a + "', expected \"none\", \"relu\", \"sigmoid\" or \"tanh\"");
}

inline double relu(double x) { return x > 0.0 ? x : 0.0; }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

inline double apply(Act act, double x) {
  switch (act) {
    case Act::kRelu:
      return relu(x);
    case Act::kSigmoid:
      return sigmoid(x);
    case Act::kTanh:
      return std::tanh(x);
    default:
      return x;
  }
}

}  // namespace dlrt::reference::detail

namespace dlrt::reference::detail {
// bias_add's channel dim of x: last (NHWC) or 1 (NCHW); shared with bias_add_grad.
int bias_channel_dim(const OpView& op, const TensorView& x);
}  // namespace dlrt::reference::detail

namespace dlrt::reference::detail {

// Element i of a buffer of dtype `d`, as double (cast, fill; rounded to nearest for 64-bit
// integers beyond 2^53) / as int64 (exact for every integer but a u64 above INT64_MAX, which
// reads as INT64_MAX: what saturating it to any other integer dtype gives anyway; run_cast
// takes u64 apart, load_u64 and store_u64).
inline double load_double(const void* p, int32_t d, int64_t i) {
  switch (d) {
    case DLRT_F32:
      return static_cast<const float*>(p)[i];
    case DLRT_F64:
      return static_cast<const double*>(p)[i];
    case DLRT_I32:
      return static_cast<const int32_t*>(p)[i];
    case DLRT_I64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DLRT_U8:
      return static_cast<const uint8_t*>(p)[i];
    case DLRT_I8:
      return static_cast<const int8_t*>(p)[i];
    case DLRT_U16:
      return static_cast<const uint16_t*>(p)[i];
    case DLRT_I16:
      return static_cast<const int16_t*>(p)[i];
    case DLRT_U32:
      return static_cast<const uint32_t*>(p)[i];
    case DLRT_U64:
      return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    default:
      return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;  // bool
  }
}
inline int64_t load_int(const void* p, int32_t d, int64_t i) {
  switch (d) {
    case DLRT_I32:
      return static_cast<const int32_t*>(p)[i];
    case DLRT_I64:
      return static_cast<const int64_t*>(p)[i];
    case DLRT_U8:
      return static_cast<const uint8_t*>(p)[i];
    case DLRT_I8:
      return static_cast<const int8_t*>(p)[i];
    case DLRT_U16:
      return static_cast<const uint16_t*>(p)[i];
    case DLRT_I16:
      return static_cast<const int16_t*>(p)[i];
    case DLRT_U32:
      return static_cast<const uint32_t*>(p)[i];
    case DLRT_U64: {
      const uint64_t v = static_cast<const uint64_t*>(p)[i];
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    default:
      return static_cast<const uint8_t*>(p)[i] != 0 ? 1 : 0;  // bool
  }
}
inline uint64_t load_u64(const void* p, int64_t i) { return static_cast<const uint64_t*>(p)[i]; }

// An integer saturated to the range of integer dtype `d` (u64's range as far as int64 reaches:
// an int64 is never above it).
inline int64_t saturate(int64_t v, int32_t d) {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (d == DLRT_I32) lo = INT32_MIN, hi = INT32_MAX;
  if (d == DLRT_U8) lo = 0, hi = UINT8_MAX;
  if (d == DLRT_I8) lo = INT8_MIN, hi = INT8_MAX;
  if (d == DLRT_U16) lo = 0, hi = UINT16_MAX;
  if (d == DLRT_I16) lo = INT16_MIN, hi = INT16_MAX;
  if (d == DLRT_U32) lo = 0, hi = UINT32_MAX;
  if (d == DLRT_U64) lo = 0;
  return v < lo ? lo : v > hi ? hi : v;
}

inline void store_int(void* p, int32_t d, int64_t i, int64_t v) {
  switch (d) {
    case DLRT_F32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case DLRT_F64:
      static_cast<double*>(p)[i] = static_cast<double>(v);
      break;
    case DLRT_I32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(saturate(v, d));
      break;
    case DLRT_I64:
      static_cast<int64_t*>(p)[i] = v;
      break;
    case DLRT_U8:
      static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(saturate(v, d));
      break;
    case DLRT_I8:
      static_cast<int8_t*>(p)[i] = static_cast<int8_t>(saturate(v, d));
      break;
    case DLRT_U16:
      static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(saturate(v, d));
      break;
    case DLRT_I16:
      static_cast<int16_t*>(p)[i] = static_cast<int16_t>(saturate(v, d));
      break;
    case DLRT_U32:
      static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(saturate(v, d));
      break;
    case DLRT_U64:
      static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(saturate(v, d));
      break;
    default:
      static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0;  // bool
  }
}

// A u64 value stored as cast stores it: to a float rounded once to nearest, to bool v != 0,
// to any other integer saturated (every other integer's maximum is at most INT64_MAX).
inline void store_u64(void* p, int32_t d, int64_t i, uint64_t v) {
  if (d == DLRT_F32) static_cast<float*>(p)[i] = static_cast<float>(v);
  else if (d == DLRT_F64) static_cast<double*>(p)[i] = static_cast<double>(v);
  else if (d == DLRT_U64) static_cast<uint64_t*>(p)[i] = v;
  else store_int(p, d, i, v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v));
}

// Stores v into dtype `d` with cast's rules: float -> float rounds to nearest; float -> int
// truncates toward zero and saturates at the integer's range, NaN gives 0; -> bool is v != 0
// (NaN gives 1, as NumPy's bool(nan)).
inline void store_double(void* p, int32_t d, int64_t i, double v) {
  if (d == DLRT_F32) {
    static_cast<float*>(p)[i] = static_cast<float>(v);
  } else if (d == DLRT_F64) {
    static_cast<double*>(p)[i] = v;
  } else if (d == DLRT_BOOL) {
    static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0;
  } else if (d == DLRT_U64) {  // u64's top half lies beyond int64: its own bounds, 0 and 2^64
    const double t = std::trunc(v);
    static_cast<uint64_t*>(p)[i] = std::isnan(t) || t <= 0.0          ? 0
                                   : t >= 18446744073709551616.0 ? UINT64_MAX
                                                                 : static_cast<uint64_t>(t);
  } else {
    double t = std::trunc(v);
    int64_t iv = std::isnan(t)                 ? 0
                 : t >= 9223372036854775807.0  ? INT64_MAX
                 : t <= -9223372036854775808.0 ? INT64_MIN
                                               : static_cast<int64_t>(t);
    store_int(p, d, i, iv);
  }
}

}  // namespace dlrt::reference::detail
