// activation.cu: the CUDA kernels of the ops y = f(x) (neg exp log sqrt, sin ... sign; elu, gelu,
// silu, hard_swish, softplus, clip, abs, square, rsqrt) and their <op>_grad(dy, x) ops, one row
// each in the block at the end over one template kernel, of the comparisons (equal ... greater_equal: a, b
// broadcast -> BOOL bytes) and of where(cond, x, y); and batch_norm.cc's for the fused ReLU
// (launch_relu_in_place, launch_bn_relu_dy) and the residual tail (launch_add_relu_in_place,
// launch_relu_mask_by_y). f32 only (bytes for BOOL). The per-element arithmetic is kernel_math.hpp's (one struct per op y = f(x); compare, select),
// tested on the host (kernel_math_test.cc); this file only launches it.
//
// One thread per element, each reading its own inputs before writing its output, so an output
// may alias a same-shaped input.
#include <string>

#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// x, y: n elements; Op: a struct of kernel_math.hpp
template <typename Op>
__global__ void eltwise_kernel(const float* x, float* y, int64_t n, math::EltwiseParams p) {
  GRID_STRIDE(i, n) { y[i] = Op::forward(x[i], p); }
}
// dy, x, dx: n elements
template <typename Op>
__global__ void eltwise_grad_kernel(const float* dy, const float* x, float* dx, int64_t n,
                                    math::EltwiseParams p) {
  GRID_STRIDE(i, n) { dx[i] = Op::backward(dy[i], x[i], p); }
}
// c: view.dims of bytes; a and b read at the view's broadcast strides
__global__ void compare_kernel(const float* a, const float* b, uint8_t* c, int64_t n,
                               math::Strided view, math::Compare op) {
  GRID_STRIDE(i, n) {
    int64_t oa, ob;
    math::source_offsets(view, i, &oa, &ob);
    c[i] = math::compare(op, a[oa], b[ob]);
  }
}
// z: n elements; cond (source 0) and x (source 1) of `cx`, y (source 0) of `yv`
__global__ void where_kernel(const uint8_t* cond, const float* x, const float* y, float* z,
                             int64_t n, math::Strided cx, math::Strided yv) {
  GRID_STRIDE(i, n) {
    int64_t oc, ox;
    math::source_offsets(cx, i, &oc, &ox);
    z[i] = math::select(cond[oc], x[ox], y[math::source_offset(yv, 0, i)]);
  }
}

// ---- ops y = f(x) and their gradients --------------------------------------------------------

math::EltwiseParams params_of(const OpView& op) {
  math::EltwiseParams p;
  if (op.has("alpha")) p.alpha = static_cast<float>(op.get_float("alpha"));
  if (op.has("min")) p.lo = static_cast<float>(op.get_float("min"));
  if (op.has("max")) p.hi = static_cast<float>(op.get_float("max"));
  if (op.has("approximate")) p.tanh_form = op.get_string("approximate") == "tanh";
  return p;
}

// f32, `flops` per element: the cost estimate only.
template <int flops>
void check_eltwise(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, flops);
}
void check_streaming(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_eltwise<10>(d, dev, cost);
}

// y = Op::forward(x)
template <typename Op>
std::unique_ptr<Kernel> create_forward(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::EltwiseParams p = params_of(op);
  const int64_t n = op.output(0).numel;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 1, 1, 0, name);
    eltwise_kernel<Op><<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), out<float>(a, 0), n, p);
    check_launch("element-wise kernel");
  });
}

// dx = Op::backward(dy, x)
template <typename Op>
std::unique_ptr<Kernel> create_backward(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::EltwiseParams p = params_of(op);
  const int64_t n = op.output(0).numel;
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, name);
    eltwise_grad_kernel<Op>
        <<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1), out<float>(a, 0), n, p);
    check_launch("element-wise gradient kernel");
  });
}

// The rows of one op y = f(x) (one flop per element where it is one instruction, 10 where it
// calls libm) and of its backward op <name>_grad(dy, x), when it has one.
template <typename Op, int flops = 10>
void forward_row(std::vector<OpEntry>& t, const char* name) {
  t.push_back({name, &check_eltwise<flops>, &create_forward<Op>});
}
template <typename Op>
void rows_with_grad(std::vector<OpEntry>& t, const char* name, const char* grad) {
  forward_row<Op>(t, name);
  t.push_back({grad, &check_streaming, &create_backward<Op>});
}

// Comparisons (input 0) and where (input 1, x): f32 operands only, the schema admits integers.
void check_compare(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  require_float_input(OpView(&d), 0);
  check_streaming(d, dev, cost);
}
void check_where(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  require_float_input(OpView(&d), 1);
  check_streaming(d, dev, cost);
}

// ---- comparisons and where ------------------------------------------------------------------

math::Compare compare_of(const std::string& op) {
  if (op == "equal") return math::Compare::kEq;
  if (op == "not_equal") return math::Compare::kNe;
  if (op == "less") return math::Compare::kLt;
  if (op == "less_equal") return math::Compare::kLe;
  if (op == "greater") return math::Compare::kGt;
  return math::Compare::kGe;
}

std::unique_ptr<Kernel> create_compare(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const math::Compare c = compare_of(op.name());
  const int64_t n = op.output(0).numel;
  const math::Strided view =
      broadcast_view(op.input(0).dims, op.input(1).dims, op.output(0).dims, op.name());
  const std::string name = op.name();
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 2, 1, 0, name);
    compare_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1),
                                                    out<uint8_t>(a, 0), n, view, c);
    check_launch("comparison kernel");
  });
}

std::unique_ptr<Kernel> create_where(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const auto& z = op.output(0).dims;
  const int64_t n = op.output(0).numel;
  // Two views of z's dims: (cond, x) and (y, y); broadcast_view checks each pair against z.
  const math::Strided cx = broadcast_view(op.input(0).dims, op.input(1).dims, z, "where");
  const math::Strided yv = broadcast_view(op.input(2).dims, op.input(2).dims, z, "where");
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 3, 1, 0, "where");
    where_kernel<<<grid_for(n), kThreads, 0, s>>>(in<uint8_t>(a, 0), in<float>(a, 1),
                                                  in<float>(a, 2), out<float>(a, 0), n, cx, yv);
    check_launch("where kernel");
  });
}

// batch_norm.cc's fused ReLU: y = max(y, 0) in place, n elements.
__global__ void relu_in_place_kernel(float* y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::activate(math::Act::kRelu, y[i]); }
}
// batch_norm_relu_grad's masked dy; x as (outer, C, inner): element i is channel (i/inner)%C.
__global__ void bn_relu_dy_kernel(const float* dy, const float* x, const float* scale,
                                  const float* bias, const float* mean, const float* inv_std,
                                  float* out, int64_t n, int64_t c, int64_t inner) {
  GRID_STRIDE(i, n) {
    const int64_t ch = (i / inner) % c;
    out[i] = math::bn_relu_dy(dy[i], x[i], scale[ch], bias[ch], mean[ch], inv_std[ch]);
  }
}

// batch_norm_add_relu_train's tail: y = max(0, y + residual) in place.
__global__ void add_relu_in_place_kernel(float* y, const float* residual, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::bn_add_relu(y[i], residual[i]); }
}
// conv2d_backward_data_add's addend after a cropped pass: y += x.
__global__ void add_in_place_kernel(float* y, const float* x, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::binary(math::Binary::kAdd, y[i], x[i]); }
}
// batch_norm_add_relu_grad's dresidual: dy where y > 0.
__global__ void relu_mask_by_y_kernel(const float* dy, const float* y, float* out, int64_t n) {
  GRID_STRIDE(i, n) { out[i] = math::act_grad(math::ActGrad::kRelu, dy[i], y[i]); }
}

}  // namespace

void launch_add_relu_in_place(float* y, const float* residual, int64_t n, cudaStream_t s) {
  add_relu_in_place_kernel<<<grid_for(n), kThreads, 0, s>>>(y, residual, n);
  check_launch("batch_norm_add_relu_train's add-relu kernel");
}

void launch_add_in_place(float* y, const float* x, int64_t n, cudaStream_t s) {
  add_in_place_kernel<<<grid_for(n), kThreads, 0, s>>>(y, x, n);
  check_launch("conv2d_backward_data_add's add kernel");
}

void launch_relu_mask_by_y(const float* dy, const float* y, float* out, int64_t n,
                           cudaStream_t s) {
  relu_mask_by_y_kernel<<<grid_for(n), kThreads, 0, s>>>(dy, y, out, n);
  check_launch("batch_norm_add_relu_grad's mask kernel");
}

void launch_relu_in_place(float* y, int64_t n, cudaStream_t s) {
  relu_in_place_kernel<<<grid_for(n), kThreads, 0, s>>>(y, n);
  check_launch("batch norm's relu kernel");
}

void launch_bn_relu_dy(const float* dy, const float* x, const float* scale, const float* bias,
                       const float* mean, const float* inv_std, float* out, int64_t n, int64_t c,
                       int64_t inner, cudaStream_t s) {
  bn_relu_dy_kernel<<<grid_for(n), kThreads, 0, s>>>(dy, x, scale, bias, mean, inv_std, out, n,
                                                     c, inner);
  check_launch("batch_norm_relu_grad's dy kernel");
}

DLRT_CUDA_OPS(t) {
  forward_row<math::Neg, 1>(t, "neg");
  forward_row<math::Exp>(t, "exp");
  forward_row<math::Log>(t, "log");
  forward_row<math::Sqrt, 1>(t, "sqrt");
  forward_row<math::Sin>(t, "sin");
  forward_row<math::Cos>(t, "cos");
  forward_row<math::Tan>(t, "tan");
  forward_row<math::Asin>(t, "asin");
  forward_row<math::Acos>(t, "acos");
  forward_row<math::Atan>(t, "atan");
  forward_row<math::Sinh>(t, "sinh");
  forward_row<math::Cosh>(t, "cosh");
  forward_row<math::Asinh>(t, "asinh");
  forward_row<math::Acosh>(t, "acosh");
  forward_row<math::Atanh>(t, "atanh");
  forward_row<math::Erf>(t, "erf");
  forward_row<math::Ceil, 1>(t, "ceil");
  forward_row<math::Floor, 1>(t, "floor");
  forward_row<math::Round, 1>(t, "round");
  forward_row<math::Sign, 1>(t, "sign");
  rows_with_grad<math::Elu>(t, "elu", "elu_grad");
  rows_with_grad<math::Gelu>(t, "gelu", "gelu_grad");
  rows_with_grad<math::Silu>(t, "silu", "silu_grad");
  rows_with_grad<math::HardSwish>(t, "hard_swish", "hard_swish_grad");
  rows_with_grad<math::Softplus>(t, "softplus", "softplus_grad");
  rows_with_grad<math::Mish>(t, "mish", "mish_grad");
  rows_with_grad<math::Clip>(t, "clip", "clip_grad");
  rows_with_grad<math::Abs>(t, "abs", "abs_grad");
  forward_row<math::Square, 1>(t, "square");
  forward_row<math::Rsqrt>(t, "rsqrt");
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    t.push_back({op, &check_compare, &create_compare});
  t.push_back({"where", &check_where, &create_where});
}

}  // namespace dlrt::cuda
