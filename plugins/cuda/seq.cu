// seq.cu: the CUDA plugin's kernels for the sequence ops (core/ops/infer_seq.cc); cuDNN and
// cuBLAS have none of them, so each is a plain grid-stride kernel whose per-thread arithmetic
// lives in kernel_math.hpp (host-tested against the reference in kernel_math_test.cc):
//
//   one_hot  one thread per output element (math::one_hot_at); f32, i32 and i64 outputs
//   cumsum   f32, one thread per (outer, inner) line walking the axis in scan order with a
//            double running sum (math::cumsum_line): no inter-thread scan, the same bits on
//            every run; adjacent threads read adjacent inner elements (coalesced when inner > 1)
//   top_k    f32, one thread per row, k selection passes over the row (math::top_k_row):
//            O(k N) per row, fine for the small k of sampling; a block-wide radix select
//            would be the fast path for large k
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

template <typename T, typename Index>
__global__ void one_hot_kernel(const Index* ids, T* y, int64_t depth, T on, T off, int64_t n) {
  GRID_STRIDE(j, n) { y[j] = math::one_hot_at(ids, depth, on, off, j); }
}

void check_one_hot(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  const int32_t t = op.output(0).dtype;
  if (t != DLRT_F32 && t != DLRT_I32 && t != DLRT_I64)
    plugin::fail(DLRT_UNIMPLEMENTED, "one_hot: y: supports f32, i32 and i64, got " +
                                         std::string(plugin::dtype_name(t)));
  fill_cost(cost, dev, 0.0, operand_bytes(op));
}

template <typename T>
void launch_one_hot(cudaStream_t s, const dlrt_kernel_args& a, bool i64, int64_t depth,
                    double on, double off, int64_t n) {
  const unsigned g = grid_for(n);
  if (i64)
    one_hot_kernel<<<g, kThreads, 0, s>>>(in<int64_t>(a, 0), out<T>(a, 0), depth,
                                          static_cast<T>(on), static_cast<T>(off), n);
  else
    one_hot_kernel<<<g, kThreads, 0, s>>>(in<int32_t>(a, 0), out<T>(a, 0), depth,
                                          static_cast<T>(on), static_cast<T>(off), n);
}

std::unique_ptr<Kernel> create_one_hot(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t depth = op.get_int("depth"), n = op.output(0).numel;
  const double on = op.get_float("on_value"), off = op.get_float("off_value");
  const bool i64 = op.input(0).dtype == DLRT_I64;
  const int32_t t = op.output(0).dtype;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "one_hot");
    if (t == DLRT_F32) launch_one_hot<float>(s, a, i64, depth, on, off, n);
    else if (t == DLRT_I32) launch_one_hot<int32_t>(s, a, i64, depth, on, off, n);
    else launch_one_hot<int64_t>(s, a, i64, depth, on, off, n);
    check_launch("one_hot kernel");
  });
}

__global__ void cumsum_kernel(math::ScanGeom g, const float* x, float* y) {
  GRID_STRIDE(l, math::scan_lines(g)) { math::cumsum_line(g, x, y, l); }
}

math::ScanGeom cumsum_geom(const OpView& op) {
  const auto& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  return math::scan_geom(x.dims.data(), x.rank(), axis, op.get_bool("exclusive"),
                         op.get_bool("reverse"));
}

void check_cumsum(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  require_float_input(op, 0);  // the schema admits integers (the cpu and reference devices)
  cumsum_geom(op);  // a bad axis: INVALID_ARGUMENT here rather than in create
  fill_cost(cost, dev, static_cast<double>(op.input(0).numel), operand_bytes(op));
}

std::unique_ptr<Kernel> create_cumsum(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::ScanGeom g = cumsum_geom(op);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "cumsum");
    cumsum_kernel<<<grid_for(math::scan_lines(g)), kThreads, 0, s>>>(g, in<float>(a, 0),
                                                                    out<float>(a, 0));
    check_launch("cumsum kernel");
  });
}

__global__ void top_k_kernel(const float* x, int64_t n, int64_t k, bool sorted, float* values,
                             int64_t* indices, int64_t rows) {
  GRID_STRIDE(r, rows) { math::top_k_row(x, n, k, sorted, values, indices, r); }
}

void check_top_k(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  fill_cost(cost, dev, static_cast<double>(op.input(0).numel) * static_cast<double>(op.get_int("k")),
            operand_bytes(op));
}

std::unique_ptr<Kernel> create_top_k(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t n = op.input(0).dims.back(), rows = op.input(0).numel / n, k = op.get_int("k");
  const bool sorted = op.get_bool("sorted");
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 2, 0, "top_k");
    top_k_kernel<<<grid_for(rows, 64), 64, 0, s>>>(in<float>(a, 0), n, k, sorted,
                                                   out<float>(a, 0), out<int64_t>(a, 1), rows);
    check_launch("top_k kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"one_hot", &check_one_hot, &create_one_hot});
  t.push_back({"cumsum", &check_cumsum, &create_cumsum});
  t.push_back({"top_k", &check_top_k, &create_top_k});
}

}  // namespace dlrt::cuda
