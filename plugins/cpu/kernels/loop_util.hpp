// loop_util.hpp: what the cpu plugin's loop kernels (kernels/loop_*.cc) share: the OpenMP
// parallel-for with a grain size, the strided "segment" walker that broadcasting, transpose and
// reduce_max_grad run on, dtype dispatch, and the checks that turn an op the loops do not handle
// into UNIMPLEMENTED (or a malformed one into INVALID_ARGUMENT), naming the op.
//
// How a loop kernel runs: `create` resolves everything from the descriptor (collapsed shapes,
// strides, constants, scratch) so `run` only walks memory; `run` splits the element range into
// one contiguous chunk per thread (at most `threads`, fewer when the tensor is small) and each
// chunk runs a plain inner loop the compiler vectorises. No allocation, no virtual call and no
// div/mod per element.
//
// What it is not: the oneDNN-primitive ops (kernels/prim_*.cc), nor a general tensor library.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../openmp_runtime.hpp"
#include "../ops.hpp"
#include "dtype_dispatch.hpp"

namespace dlrt::cpu::loops {

using plugin::OpView;
using plugin::TensorView;

// ---- threads -----------------------------------------------------------------------------

// Elements per thread below which splitting costs more than it saves (a rough cost model:
// ~32K cheap float ops, or a few thousand transcendental/Philox ones).
constexpr int64_t kGrainCheap = 1 << 15;
constexpr int64_t kGrainHeavy = 1 << 12;

// Calls fn(begin, end) over [0, n) in at most `threads` contiguous chunks of at least `grain`
// elements; on the calling thread alone when one chunk suffices or we already run in parallel.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, int threads, Fn&& fn) {
  if (n <= 0) return;
  int64_t chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int nt = static_cast<int>(std::min<int64_t>(std::max(threads, 1), chunks));
  if (nt <= 1 || omp_in_parallel()) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t begin = n * t / k, end = n * (t + 1) / k;
    if (begin < end) fn(begin, end);
  }
}

// ---- strided walks -----------------------------------------------------------------------

// The iteration space of a kernel that writes a dense output and reads K operands through
// per-dim element strides (0 along stretched dims): dims of size 1 dropped, adjacent dims merged
// when every operand is contiguous across them. Equal shapes collapse to rank 1; a trailing-
// vector broadcast (N,C)+(C) to rank 2 with strides (C,1) and (0,1).
template <int K>
struct Walk {
  int rank = 1;
  int64_t dims[DLRT_MAX_RANK] = {1};
  int64_t strides[K][DLRT_MAX_RANK] = {};
  int64_t numel = 1;

  // Stride of operand k along the innermost dim.
  int64_t inner_stride(int k) const { return strides[k][rank - 1]; }
};

template <int K>
Walk<K> make_walk(const std::vector<int64_t>& out_dims,
                  const std::vector<std::vector<int64_t>>& op_strides) {
  Walk<K> w;
  int r = 0;
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; k < K && merge; ++k)
      merge = w.strides[k][r - 1] == op_strides[k][d] * out_dims[d];
    if (merge) {
      w.dims[r - 1] *= out_dims[d];
      for (int k = 0; k < K; ++k) w.strides[k][r - 1] = op_strides[k][d];
    } else {
      w.dims[r] = out_dims[d];
      for (int k = 0; k < K; ++k) w.strides[k][r] = op_strides[k][d];
      ++r;
    }
  }
  if (r == 0) {  // every dim is 1: one element
    w.dims[0] = 1;
    for (int k = 0; k < K; ++k) w.strides[k][0] = 0;
    r = 1;
  }
  w.rank = r;
  w.numel = plugin::product(out_dims);
  return w;
}

// Calls fn(i, off, len) for each run of output elements [i, i+len) in [begin, end) that lies in
// one innermost row; off[k] is operand k's element offset at i (operand k then advances by
// w.inner_stride(k) per element). One div/mod per dim at `begin`, an odometer afterwards.
template <int K, typename Fn>
void for_each_segment(const Walk<K>& w, int64_t begin, int64_t end, Fn&& fn) {
  const int r = w.rank;
  int64_t coord[DLRT_MAX_RANK];
  int64_t off[K] = {};
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    coord[d] = rem % w.dims[d];
    rem /= w.dims[d];
    for (int k = 0; k < K; ++k) off[k] += coord[d] * w.strides[k][d];
  }
  const int64_t inner = w.dims[r - 1];
  for (int64_t i = begin; i < end;) {
    const int64_t len = std::min(inner - coord[r - 1], end - i);
    fn(i, static_cast<const int64_t*>(off), len);
    i += len;
    coord[r - 1] += len;
    for (int k = 0; k < K; ++k) off[k] += len * w.strides[k][r - 1];
    for (int d = r - 1; d > 0 && coord[d] == w.dims[d]; --d) {
      for (int k = 0; k < K; ++k) off[k] += w.strides[k][d - 1] - coord[d] * w.strides[k][d];
      coord[d] = 0;
      ++coord[d - 1];
    }
  }
}

// ---- reductions --------------------------------------------------------------------------

// A reduction's output dims (keepdims applied) and, per input dim, the element stride into
// the output (0 along a reduced dim); reduce_* and reduce_max_grad walk x with these.
struct ReduceGeom {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> y_strides;  // one per input dim
  int64_t out_numel = 1;
};

inline ReduceGeom reduce_geom(const OpView& op, const std::vector<int64_t>& in) {
  const int rank = static_cast<int>(in.size());
  const auto& axes = op.get_ints("axes");
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  const bool keepdims = op.get_bool("keepdims");
  ReduceGeom g;
  std::vector<int64_t> kept;
  for (int d = 0; d < rank; ++d) kept.push_back(reduced[d] ? 1 : in[d]);
  const std::vector<int64_t> s = plugin::row_major_strides(kept);
  for (int d = 0; d < rank; ++d) {
    g.y_strides.push_back(reduced[d] ? 0 : s[d]);
    if (keepdims || !reduced[d]) g.out_dims.push_back(kept[d]);
  }
  g.out_numel = plugin::product(kept);
  return g;
}

// ---- dtypes ------------------------------------------------------------------------------

// A bool element: one byte, any non-zero value is true (never read through C++ bool).
struct Bool8 {
  uint8_t v;
};

// fn(T{}) with T = float or double (checked before).
template <typename Fn>
void with_float(int32_t dtype, Fn&& fn) {
  if (dtype == DLRT_F64) fn(double{});
  else fn(float{});
}

// with_numeric, with_element_size and ScanSum: plugins/common/dtype_dispatch.hpp.
using plugin::ScanSum;
using plugin::with_element_size;
using plugin::with_numeric;

// fn(T{}) with T = int32_t or int64_t.
template <typename Fn>
void with_index(int32_t dtype, Fn&& fn) {
  if (dtype == DLRT_I64) fn(int64_t{});
  else fn(int32_t{});
}

// fn(T{}) for the dtypes cast and fill handle.
template <typename Fn>
void with_plain(int32_t dtype, Fn&& fn) {
  switch (dtype) {
    case DLRT_F32:
      fn(float{});
      break;
    case DLRT_F64:
      fn(double{});
      break;
    case DLRT_I32:
      fn(int32_t{});
      break;
    case DLRT_I64:
      fn(int64_t{});
      break;
    case DLRT_U8:
      fn(uint8_t{});
      break;
    case DLRT_I8:
      fn(int8_t{});
      break;
    case DLRT_U16:
      fn(uint16_t{});
      break;
    case DLRT_I16:
      fn(int16_t{});
      break;
    case DLRT_U32:
      fn(uint32_t{});
      break;
    case DLRT_U64:
      fn(uint64_t{});
      break;
    default:
      fn(Bool8{});
      break;
  }
}

// fn(U{}) with an unsigned type of `bytes` bytes (1, 2, 4 or 8): shape ops move elements as such.
template <typename Fn>
void with_bytes(size_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      fn(uint8_t{});
      break;
    case 2:
      fn(uint16_t{});
      break;
    case 4:
      fn(uint32_t{});
      break;
    default:
      fn(uint64_t{});
      break;
  }
}

// with_plain's dtypes: the numbers of with_numeric and bool.
inline bool is_plain_dtype(int32_t d) { return d == DLRT_BOOL || plugin::is_numeric_dtype(d); }

// ---- checks (throw plugin::Error "cpu: <op>: ...") ----------------------------------------
// Only what a kernel can run: the schema checked counts, dtypes, dims and attributes before
// the descriptor arrived (docs/design.md, "What a plugin may trust").

[[noreturn]] inline void unimplemented(const OpView& op, const std::string& why) {
  plugin::fail(DLRT_UNIMPLEMENTED, prefix() + op.name() + " " + why);
}

// "cpu: add supports f32 and f64, got i32"
inline void expect_float(const OpView& op, const TensorView& t) {
  if (t.dtype != DLRT_F32 && t.dtype != DLRT_F64)
    unimplemented(op, std::string("supports f32 and f64, got ") + plugin::dtype_name(t.dtype));
}

// with_numeric's dtypes: f32, f64 and the integers i8..i64, u8..u64.
inline void expect_numeric(const OpView& op, const TensorView& t) {
  if (!plugin::is_numeric_dtype(t.dtype))
    unimplemented(op, std::string("supports f32, f64, i8, i16, i32, i64, u8, u16, u32 and u64, got ") +
                          plugin::dtype_name(t.dtype));
}

// flops and bytes for the cost estimate: `flops_per_element` times the largest operand, and
// every operand's bytes once.
inline void fill_cost(const OpView& op, double flops_per_element, dlrt_op_cost* cost) {
  if (cost == nullptr) return;
  double bytes = 0, n = 0;
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const TensorView& t : *list) {
      bytes += static_cast<double>(t.bytes);
      n = std::max(n, static_cast<double>(t.numel));
    }
  cost->flops = flops_per_element * n;
  cost->bytes = bytes;
}

// ---- kernels -----------------------------------------------------------------------------

// The base of every loop kernel: the thread count it was made with (the plugin's `threads`) and
// whether its hot loops may take their AVX2 path (the plugin's `avx2`, loop_simd.hpp).
class LoopKernel : public Kernel {
 public:
  explicit LoopKernel(const dlrt_plugin& p) : threads_(std::max(1, p.threads)), avx2_(p.avx2) {}
  // Under the plugin's thread count for oneDNN too: loops that call dnnl_sgemm (attention,
  // the LSTM cell) call it outside any parallel region when their parallel_for runs on one
  // thread, and oneDNN would otherwise take every core (with `threads=1` beside a busy core,
  // a spinning two-thread team made the char Transformer's step 4.7 s instead of 0.54).
  void run(dnnl::stream&, const dlrt_kernel_args& args) final {
    OnednnThreadScope onednn(threads_);
    execute(args);
  }
  // Runs on the calling thread (and its OpenMP team); work is complete when it returns.
  virtual void execute(const dlrt_kernel_args& args) = 0;

 protected:
  int threads_;
  bool avx2_;
};

// A KernelDef's create for a kernel class constructible from (plugin, op).
template <typename K>
std::unique_ptr<Kernel> make(const dlrt_plugin& p, const OpView& op) {
  return std::make_unique<K>(p, op);
}

}  // namespace dlrt::cpu::loops
