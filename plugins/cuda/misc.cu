// misc.cu: data movement and small utility ops: copy/reshape/flatten (cudaMemcpyAsync d2d),
// transpose and broadcast_to (one strided-gather kernel, also used for cuDNN's filter
// layouts), fill, cast (every pair of f32/f64/i8..i64/u8..u64/bool), gather_rows, argmax and
// equal_count. Data-movement ops take every dtype: they move 1, 2, 4 or 8-byte elements.
#include <cstring>
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// y: view.dims (n elements) = x read at the view's source-0 strides
template <typename E>
__global__ void strided_copy_kernel(const E* x, E* y, int64_t n, math::Strided view) {
  GRID_STRIDE(i, n) { y[i] = x[math::source_offset(view, 0, i)]; }
}

// y: n elements of `esize` bytes, each the bytes of `value`
template <typename E>
__global__ void fill_kernel(E* y, int64_t n, E value) {
  GRID_STRIDE(i, n) { y[i] = value; }
}

__global__ void cast_kernel(const void* x, int32_t from, void* y, int32_t to, int64_t n) {
  GRID_STRIDE(i, n) { math::cast_element(x, from, y, to, i); }
}

// params: (R, row_words words), indices: (B) -> y: (B, row_words); a zero row when an index
// is outside [0,R)
template <typename W, typename Index>
__global__ void gather_rows_kernel(const W* params, const Index* indices, W* y, int64_t rows,
                                   int64_t row_words, int64_t n) {
  GRID_STRIDE(i, n) {
    const int64_t b = i / row_words, w = i % row_words;
    const int64_t r = static_cast<int64_t>(indices[b]);
    y[i] = (r >= 0 && r < rows) ? params[r * row_words + w] : W(0);
  }
}

// x: (outer, K, inner) -> y: (outer, inner) i32|i64: the first index of the max; a NaN counts
// as the max (first NaN wins), as the reference and NumPy do.
template <typename Out>
__global__ void argmax_kernel(const float* x, Out* y, int64_t outer, int64_t k, int64_t inner) {
  GRID_STRIDE(i, outer * inner) {
    const int64_t o = i / inner, in = i % inner;
    const float* p = x + o * k * inner + in;
    int64_t best = 0;
    float best_v = p[0];
    for (int64_t j = 1; j < k && best_v == best_v; ++j) {
      const float v = p[j * inner];
      if (v > best_v || v != v) best = j, best_v = v;
    }
    y[i] = static_cast<Out>(best);
  }
}

// a, b: (N) i32|i64 -> count: () f32. One block.
__global__ void equal_count_kernel(const void* a, int32_t ta, const void* b, int32_t tb, int64_t n,
                                   float* count) {
  __shared__ unsigned long long total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  unsigned long long mine = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    mine += math::load_as_int(a, ta, i) == math::load_as_int(b, tb, i) ? 1 : 0;
  atomicAdd(&total, mine);
  __syncthreads();
  if (threadIdx.x == 0) *count = static_cast<float>(total);
}

// x: (n, h, w, c) image -> y: (n, h + extra_h, w + extra_w, c), zeros in the extra rows and
// columns (after the image: TensorFlow's SAME puts the odd padding cell after).
__global__ void pad_image_kernel(const float* x, float* y, bool nchw, int64_t n, int64_t h,
                                 int64_t w, int64_t c, int64_t hp, int64_t wp) {
  GRID_STRIDE(i, n * hp * wp * c) {
    int64_t in, ih, iw, ic;
    math::image_coords(nchw, hp, wp, c, i, &in, &ih, &iw, &ic);
    y[i] = (ih < h && iw < w) ? x[math::image_offset(nchw, h, w, c, in, ih, iw, ic)] : 0.0f;
  }
}

// ---- copy, reshape, flatten -----------------------------------------------------------------

void check_bytes(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);  // moves bytes: every dtype, nothing to refuse
  fill_cost(cost, dev, 0.0, operand_bytes(op));
}

std::unique_ptr<Kernel> create_copy(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const size_t bytes = op.output(0).bytes;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, name);
    if (in(a, 0) != out(a, 0))
      CUDA_CHECK(cudaMemcpyAsync(out(a, 0), in(a, 0), bytes, cudaMemcpyDeviceToDevice, s));
  });
}

// ---- transpose, broadcast_to ----------------------------------------------------------------

std::unique_ptr<Kernel> strided_kernel(const math::Strided& view, int64_t n, size_t esize,
                                       const std::string& name) {
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, name);
    launch_strided_copy(s, in(a, 0), out(a, 0), n, esize, view);
  });
}

std::unique_ptr<Kernel> create_transpose(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  return strided_kernel(transpose_view(op.input(0).dims, op.get_ints("perm")), op.output(0).numel,
                        plugin::dtype_size(op.input(0).dtype), op.name());
}

std::unique_ptr<Kernel> create_broadcast_to(const dlrt_op_desc& d, const dlrt_device_desc&,
                                            size_t*) {
  OpView op(&d);
  const auto& out_dims = op.output(0).dims;
  std::vector<int64_t> s = plugin::broadcast_strides(op.input(0).dims, out_dims, op.name());
  math::Strided view;
  view.rank = static_cast<int>(out_dims.size());
  for (int k = 0; k < view.rank; ++k) view.dims[k] = out_dims[k], view.stride[0][k] = s[k];
  return strided_kernel(view, op.output(0).numel, plugin::dtype_size(op.input(0).dtype), op.name());
}

// ---- fill, cast -------------------------------------------------------------------------------

std::unique_ptr<Kernel> create_fill(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int32_t dtype = op.output(0).dtype;
  const size_t esize = plugin::dtype_size(dtype);
  const int64_t n = op.output(0).numel;
  uint64_t pattern = 0;  // the value's bytes in the output dtype, converted as cast converts
  math::store_double(&pattern, dtype, 0, op.get_float("value"));
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 0, 1, 0, "fill");
    void* y = out(a, 0);
    uint8_t b1;
    uint16_t b2;
    uint32_t b4;
    switch (esize) {
      case 1:
        std::memcpy(&b1, &pattern, 1);
        fill_kernel<<<grid_for(n), kThreads, 0, s>>>((uint8_t*)y, n, b1);
        break;
      case 2:  // u16, i16 (f16/bf16 are filled in f32 and narrowed, widening.cc)
        std::memcpy(&b2, &pattern, 2);
        fill_kernel<<<grid_for(n), kThreads, 0, s>>>((uint16_t*)y, n, b2);
        break;
      case 4:
        std::memcpy(&b4, &pattern, 4);
        fill_kernel<<<grid_for(n), kThreads, 0, s>>>((uint32_t*)y, n, b4);
        break;
      default:
        fill_kernel<<<grid_for(n), kThreads, 0, s>>>((uint64_t*)y, n, pattern);
        break;
    }
    check_launch("fill kernel");
  });
}

std::unique_ptr<Kernel> create_cast(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int32_t from = op.input(0).dtype, to = op.output(0).dtype;
  const int64_t n = op.input(0).numel;
  const size_t bytes = op.output(0).bytes;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "cast");
    if (from == to) {
      if (in(a, 0) != out(a, 0))
        CUDA_CHECK(cudaMemcpyAsync(out(a, 0), in(a, 0), bytes, cudaMemcpyDeviceToDevice, s));
      return;
    }
    cast_kernel<<<grid_for(n), kThreads, 0, s>>>(in(a, 0), from, out(a, 0), to, n);
    check_launch("cast kernel");
  });
}

// ---- gather_rows, argmax, equal_count -----------------------------------------------------------

std::unique_ptr<Kernel> create_gather_rows(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const int64_t rows = op.input(0).dims[0], batch = op.input(1).dims[0];
  const size_t row_bytes = op.input(0).bytes / static_cast<size_t>(rows);
  const bool words = row_bytes % 4 == 0;
  const int64_t row_words = static_cast<int64_t>(words ? row_bytes / 4 : row_bytes);
  const bool i64 = op.input(1).dtype == DLRT_I64;
  const int64_t n = batch * row_words;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, "gather_rows");
    const unsigned g = grid_for(n);
    if (words && i64)
      gather_rows_kernel<<<g, kThreads, 0, s>>>(in<uint32_t>(a, 0), in<int64_t>(a, 1),
                                                out<uint32_t>(a, 0), rows, row_words, n);
    else if (words)
      gather_rows_kernel<<<g, kThreads, 0, s>>>(in<uint32_t>(a, 0), in<int32_t>(a, 1),
                                                out<uint32_t>(a, 0), rows, row_words, n);
    else if (i64)
      gather_rows_kernel<<<g, kThreads, 0, s>>>(in<uint8_t>(a, 0), in<int64_t>(a, 1),
                                                out<uint8_t>(a, 0), rows, row_words, n);
    else
      gather_rows_kernel<<<g, kThreads, 0, s>>>(in<uint8_t>(a, 0), in<int32_t>(a, 1),
                                                out<uint8_t>(a, 0), rows, row_words, n);
    check_launch("gather_rows kernel");
  });
}

void check_f32_op(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, 1.0);
}

std::unique_ptr<Kernel> create_argmax(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const TensorView& x = op.input(0);
  const int axis = plugin::normalize_axis(op.get_int("axis"), x.rank(), op.name());
  int64_t outer = 1, k = x.dims[axis], inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dims[i];
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.dims[i];
  const bool i64 = op.output(0).dtype == DLRT_I64;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, "argmax");
    if (i64)
      argmax_kernel<<<grid_for(outer * inner), kThreads, 0, s>>>(
          in<float>(a, 0), out<int64_t>(a, 0), outer, k, inner);
    else
      argmax_kernel<<<grid_for(outer * inner), kThreads, 0, s>>>(
          in<float>(a, 0), out<int32_t>(a, 0), outer, k, inner);
    check_launch("argmax kernel");
  });
}

std::unique_ptr<Kernel> create_equal_count(const dlrt_op_desc& d, const dlrt_device_desc&,
                                           size_t*) {
  OpView op(&d);
  const int32_t ta = op.input(0).dtype, tb = op.input(1).dtype;
  const int64_t n = op.input(0).numel;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, "equal_count");
    equal_count_kernel<<<1, 1024, 0, s>>>(in(a, 0), ta, in(a, 1), tb, n, out<float>(a, 0));
    check_launch("equal_count kernel");
  });
}

}  // namespace

void launch_strided_copy(cudaStream_t stream, const void* x, void* y, int64_t n, size_t esize,
                         const math::Strided& view) {
  const unsigned g = grid_for(n);
  switch (esize) {
    case 1:
      strided_copy_kernel<<<g, kThreads, 0, stream>>>((const uint8_t*)x, (uint8_t*)y, n, view);
      break;
    case 2:
      strided_copy_kernel<<<g, kThreads, 0, stream>>>((const uint16_t*)x, (uint16_t*)y, n, view);
      break;
    case 4:
      strided_copy_kernel<<<g, kThreads, 0, stream>>>((const uint32_t*)x, (uint32_t*)y, n, view);
      break;
    default:
      strided_copy_kernel<<<g, kThreads, 0, stream>>>((const uint64_t*)x, (uint64_t*)y, n, view);
      break;
  }
  check_launch("strided copy kernel");
}

void launch_pad_image(cudaStream_t stream, const float* x, float* y, bool nchw, int64_t n,
                      int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w) {
  const int64_t hp = h + extra_h, wp = w + extra_w;
  pad_image_kernel<<<grid_for(n * hp * wp * c), kThreads, 0, stream>>>(x, y, nchw, n, h, w, c, hp,
                                                                       wp);
  check_launch("image padding kernel");
}

DLRT_CUDA_OPS(t) {
  for (const char* op : {"copy", "stop_gradient", "reshape", "flatten"})
    t.push_back({op, &check_bytes, &create_copy});
  t.push_back({"transpose", &check_bytes, &create_transpose});
  t.push_back({"broadcast_to", &check_bytes, &create_broadcast_to});
  t.push_back({"fill", &check_bytes, &create_fill});
  t.push_back({"cast", &check_bytes, &create_cast});
  t.push_back({"gather_rows", &check_bytes, &create_gather_rows});
  t.push_back({"argmax", &check_f32_op, &create_argmax});
  t.push_back({"equal_count", &check_bytes, &create_equal_count});
}

}  // namespace dlrt::cuda
