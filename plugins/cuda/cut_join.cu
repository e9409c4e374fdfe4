// cut_join.cu: the CUDA plugin's kernels for the ops that cut, join and frame tensors, and
// for the global pools:
//
//   concat, split      one cudaMemcpy2DAsync per part: |A| rows of the part's run, pitched by
//                      the whole's row (x (A..., L_k, B...) inside y (A..., L, B...)); any dtype
//   slice              strided gather kernel, y[i] = x[slice_offset(i)]; any dtype
//   slice_grad         memset 0, then a scatter kernel dx[slice_offset(i)] = dy[i]; f32
//   pad                y[i] = x[pad_source(i)] or value; f32
//   pad_grad           dx[j] = pad_grad_at(j), the sum of dy's mirrors of j (no atomics); f32
//   global_avg_pool2d, global_max_pool2d    one thread per (n, c) plane; f32
//   global_avg_pool2d_backward              one thread per dx element; f32
//   global_max_pool2d_backward              memset 0, then one thread per plane; f32
//
// Every per-element index and value is kernel_math.hpp's (tested on the host against the
// reference kernels, kernel_math_test.cc); this file only launches. The core sends the
// normalised attributes (core/ops/infer_shape_ops.cc): axis in 0..rank-1, slice's begin and
// strides on every dim; the checks here refuse only what the kernels cannot run (non-f32
// arithmetic).
#include <string>
#include <vector>

#include "cut_join_geometry.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// y (view.dims, n elements) = x at slice_offset
template <typename E>
__global__ void slice_gather_kernel(const E* x, E* y, int64_t n, math::Strided view, int64_t base) {
  GRID_STRIDE(i, n) { y[i] = x[math::slice_offset(view, base, i)]; }
}

// dx at slice_offset = dy (view.dims, n elements); the positions are distinct
__global__ void slice_scatter_kernel(const float* dy, float* dx, int64_t n, math::Strided view,
                                     int64_t base) {
  GRID_STRIDE(i, n) { dx[math::slice_offset(view, base, i)] = dy[i]; }
}

// x -> y (n elements of the padded dims)
__global__ void pad_kernel(const float* x, float* y, int64_t n, math::PadGeom g, float value) {
  GRID_STRIDE(i, n) {
    const int64_t k = math::pad_source(g, i);
    y[i] = k < 0 ? value : x[k];
  }
}

// dy -> dx (n elements of the unpadded dims)
__global__ void pad_grad_kernel(const float* dy, float* dx, int64_t n, math::PadGeom g) {
  GRID_STRIDE(j, n) { dx[j] = math::pad_grad_at(g, dy, j); }
}

// x -> y: (N*C) planes
__global__ void global_pool_kernel(const float* x, float* y, math::GlobalPool g, bool is_max) {
  GRID_STRIDE(p, g.n * g.c) {
    y[p] = is_max ? x[math::plane_argmax(g, x, p)] : math::plane_mean(g, x, p);
  }
}

// dy (N*C) -> dx (image): dy / (H*W) everywhere
__global__ void global_avg_backward_kernel(const float* dy, float* dx, math::GlobalPool g) {
  const float inv = 1.0f / static_cast<float>(g.h * g.w);
  GRID_STRIDE(i, g.n * g.h * g.w * g.c) { dx[i] = dy[math::plane_of(g, i)] * inv; }
}

// x, dy (N*C) -> dx (image, zeroed before): dy at its plane's first max; a thread per plane
__global__ void global_max_backward_kernel(const float* x, const float* dy, float* dx,
                                           math::GlobalPool g) {
  GRID_STRIDE(p, g.n * g.c) { dx[math::plane_argmax(g, x, p)] = dy[p]; }
}

// ---- checks ---------------------------------------------------------------------------------

// Data movement: every dtype, nothing to refuse (the schema checked the shapes and the
// normalised attributes, docs/design.md "What a plugin may trust").
void check_moving(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  fill_cost(cost, dev, 0.0, operand_bytes(op));
}

void check_f32(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);  // the arithmetic kernels here are f32 only
  fill_cost(cost, dev, static_cast<double>(op.output(0).numel), operand_bytes(op));
}

// ---- concat and split -----------------------------------------------------------------------

std::unique_ptr<Kernel> create_parts(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const bool to_whole = op.name() == "concat";
  const TensorView& whole = to_whole ? op.output(0) : op.input(0);
  const std::vector<TensorView>& parts = to_whole ? op.inputs() : op.outputs();
  const int axis = static_cast<int>(op.get_int("axis"));
  const math::PartRows rows = math::part_rows(
      whole.dims.data(), whole.rank(), axis, static_cast<int64_t>(plugin::dtype_size(whole.dtype)));
  const size_t row_bytes = static_cast<size_t>(whole.dims[axis] * rows.unit);
  std::vector<size_t> run_bytes;
  for (const TensorView& t : parts)
    run_bytes.push_back(static_cast<size_t>(t.dims[axis] * rows.unit));
  const size_t height = static_cast<size_t>(rows.rows);
  const size_t n_in = op.num_inputs(), n_out = op.num_outputs();
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, n_in, n_out, 0, name);
    size_t at = 0;  // bytes into the whole's row
    for (size_t k = 0; k < run_bytes.size(); ++k) {
      const size_t run = run_bytes[k];
      if (to_whole)
        CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(out(a, 0)) + at, row_bytes, in(a, k), run,
                                     run, height, cudaMemcpyDeviceToDevice, s));
      else
        CUDA_CHECK(cudaMemcpy2DAsync(out(a, k), run, static_cast<const char*>(in(a, 0)) + at,
                                     row_bytes, run, height, cudaMemcpyDeviceToDevice, s));
      at += run;
    }
  });
}

// ---- slice and slice_grad -------------------------------------------------------------------

std::unique_ptr<Kernel> create_slice(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  int64_t base = 0;
  const math::Strided v = slice_view(op, op.output(0).dims, op.input(0).dims, &base);
  const int64_t n = op.output(0).numel;
  const size_t esize = plugin::dtype_size(op.input(0).dtype);
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "slice");
    const unsigned grid = grid_for(n);
    switch (esize) {
      case 1:
        slice_gather_kernel<<<grid, kThreads, 0, s>>>(in<uint8_t>(a, 0), out<uint8_t>(a, 0), n, v,
                                                      base);
        break;
      case 2:
        slice_gather_kernel<<<grid, kThreads, 0, s>>>(in<uint16_t>(a, 0), out<uint16_t>(a, 0), n, v,
                                                      base);
        break;
      case 4:
        slice_gather_kernel<<<grid, kThreads, 0, s>>>(in<uint32_t>(a, 0), out<uint32_t>(a, 0), n, v,
                                                      base);
        break;
      default:
        slice_gather_kernel<<<grid, kThreads, 0, s>>>(in<uint64_t>(a, 0), out<uint64_t>(a, 0), n, v,
                                                      base);
        break;
    }
    check_launch("slice kernel");
  });
}

std::unique_ptr<Kernel> create_slice_grad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  int64_t base = 0;
  const math::Strided v = slice_view(op, op.input(0).dims, op.output(0).dims, &base);
  const int64_t n = op.input(0).numel;
  const size_t dx_bytes = op.output(0).bytes;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "slice_grad");
    CUDA_CHECK(cudaMemsetAsync(out(a, 0), 0, dx_bytes, s));
    slice_scatter_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, v,
                                                          base);
    check_launch("slice_grad kernel");
  });
}

// ---- pad and pad_grad -----------------------------------------------------------------------

std::unique_ptr<Kernel> create_pad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::PadGeom g =
      pad_geom(op, op.input(0).dims, op.output(0).dims, op.get_string("mode") == "reflect");
  const float value = static_cast<float>(op.get_float("value"));
  const int64_t n = op.output(0).numel;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "pad");
    pad_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, g, value);
    check_launch("pad kernel");
  });
}

std::unique_ptr<Kernel> create_pad_grad(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::PadGeom g = pad_geom(op, op.output(0).dims, op.input(0).dims, true);
  const int64_t n = op.output(0).numel;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "pad_grad");
    pad_grad_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, g);
    check_launch("pad_grad kernel");
  });
}

// ---- global pools ---------------------------------------------------------------------------

std::unique_ptr<Kernel> create_global_pool(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const std::string name = op.name();
  const bool avg_backward = name == "global_avg_pool2d_backward";
  const math::GlobalPool g =
      global_pool_geom(op, avg_backward ? op.output(0).dims : op.input(0).dims);
  const size_t n_in = op.num_inputs();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, n_in, 1, 0, name);
    const int64_t cells = g.n * g.h * g.w * g.c;
    if (name == "global_avg_pool2d" || name == "global_max_pool2d")
      global_pool_kernel<<<grid_for(g.n * g.c), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0),
                                                                  g, name == "global_max_pool2d");
    else if (avg_backward)
      global_avg_backward_kernel<<<grid_for(cells), kThreads, 0, s>>>(in<float>(a, 0),
                                                                      out<float>(a, 0), g);
    else {
      CUDA_CHECK(cudaMemsetAsync(out(a, 0), 0, static_cast<size_t>(cells) * sizeof(float), s));
      global_max_backward_kernel<<<grid_for(g.n * g.c), kThreads, 0, s>>>(
          in<float>(a, 0), in<float>(a, 1), out<float>(a, 0), g);
    }
    check_launch("global pool kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"concat", &check_moving, &create_parts});
  t.push_back({"split", &check_moving, &create_parts});
  t.push_back({"slice", &check_moving, &create_slice});
  t.push_back({"slice_grad", &check_f32, &create_slice_grad});
  t.push_back({"pad", &check_f32, &create_pad});
  t.push_back({"pad_grad", &check_f32, &create_pad_grad});
  for (const char* op : {"global_avg_pool2d", "global_max_pool2d", "global_avg_pool2d_backward",
                         "global_max_pool2d_backward"})
    t.push_back({op, &check_f32, &create_global_pool});
}

}  // namespace dlrt::cuda
