// gather.cu: the CUDA plugin's kernels for gather and scatter_add (core/ops/infer_gather.cc):
//
//   gather       one thread per output word (4-byte words when the row is a multiple of 4
//                bytes, else bytes): the word of the params row its id names
//                (math::gather_word); any params dtype
//   scatter_add  f32; the output split into bands of rows, one thread per (band, column)
//                that zeroes its cells and walks every id in index order
//                (math::scatter_add_thread): no atomics, the same bits on every run
//
// Out-of-range ids: kernel_run enqueues asynchronously and the plugin ABI returns errors
// only from the enqueueing call, so a kernel cannot report a bad id. gather writes a zero
// row and scatter_add skips the update (the reference and cpu devices return
// INVALID_ARGUMENT instead; docs/ops.md, "Decisions"). nn::Embedding checks ids on the host
// before they reach a device.
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

template <typename W, typename Index>
__global__ void gather_kernel(const W* params, const Index* ids, W* y, int64_t rows,
                              int64_t row_words, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::gather_word(params, ids, rows, row_words, i); }
}

template <typename Index>
__global__ void scatter_add_kernel(math::ScatterGeom g, const Index* ids, const float* updates,
                                   float* out) {
  GRID_STRIDE(t, math::scatter_threads(g)) { math::scatter_add_thread(g, ids, updates, out, t); }
}

// gather moves bytes: every dtype, nothing to refuse.
void check_gather(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  fill_cost(cost, dev, 0.0, operand_bytes(op));
}

std::unique_ptr<Kernel> create_gather(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t rows = op.input(0).dims[0], n_ids = op.input(1).numel;
  const size_t row_bytes = op.input(0).bytes / static_cast<size_t>(rows);
  const bool words = row_bytes % 4 == 0;
  const int64_t row_words = static_cast<int64_t>(words ? row_bytes / 4 : row_bytes);
  const bool i64 = op.input(1).dtype == DLRT_I64;
  const int64_t n = n_ids * row_words;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, "gather");
    const unsigned g = grid_for(n);
    if (words && i64)
      gather_kernel<<<g, kThreads, 0, s>>>(in<uint32_t>(a, 0), in<int64_t>(a, 1),
                                           out<uint32_t>(a, 0), rows, row_words, n);
    else if (words)
      gather_kernel<<<g, kThreads, 0, s>>>(in<uint32_t>(a, 0), in<int32_t>(a, 1),
                                           out<uint32_t>(a, 0), rows, row_words, n);
    else if (i64)
      gather_kernel<<<g, kThreads, 0, s>>>(in<uint8_t>(a, 0), in<int64_t>(a, 1),
                                           out<uint8_t>(a, 0), rows, row_words, n);
    else
      gather_kernel<<<g, kThreads, 0, s>>>(in<uint8_t>(a, 0), in<int32_t>(a, 1),
                                           out<uint8_t>(a, 0), rows, row_words, n);
    check_launch("gather kernel");
  });
}

void check_scatter_add(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  const math::ScatterGeom g = math::scatter_geom(op.output(0).dims[0],
                                                 op.output(0).numel / op.output(0).dims[0],
                                                 op.input(0).numel);
  fill_cost(cost, dev, static_cast<double>(g.n_ids) * static_cast<double>(math::scatter_threads(g)),
            operand_bytes(op));
}

std::unique_ptr<Kernel> create_scatter_add(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const int64_t rows = op.output(0).dims[0];
  const math::ScatterGeom g =
      math::scatter_geom(rows, op.output(0).numel / rows, op.input(0).numel);
  const bool i64 = op.input(0).dtype == DLRT_I64;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, "scatter_add");
    const unsigned grid = grid_for(math::scatter_threads(g));
    if (i64)
      scatter_add_kernel<<<grid, kThreads, 0, s>>>(g, in<int64_t>(a, 0), in<float>(a, 1),
                                                   out<float>(a, 0));
    else
      scatter_add_kernel<<<grid, kThreads, 0, s>>>(g, in<int32_t>(a, 0), in<float>(a, 1),
                                                   out<float>(a, 0));
    check_launch("scatter_add kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"gather", &check_gather, &create_gather});
  t.push_back({"scatter_add", &check_scatter_add, &create_scatter_add});
}

}  // namespace dlrt::cuda
