// update.cu: the optimizer updates, one fused kernel each, in place (the executor passes the
// same buffers as inputs and outputs; each thread reads all of element i before writing it).
// Arithmetic in double, exactly kernel_math.hpp's sgd_step / adam_step (tested on the host
// against the reference kernels), rounded once to f32.
//
// sgd_update:  param, grad, velocity (same shape), learning_rate () f32 -> param, velocity
// adam_update: param, grad, m, v (same shape), step () f32, learning_rate () f32 -> param, m, v
// The scalars are read on the device (they live there: the graph advances the step, the host
// writes a schedule's rate into its variable), so a captured graph replays correctly.
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void sgd_kernel(const float* p, const float* g, const float* v, const float* rate,
                           float* p_out, float* v_out, int64_t n, double momentum, bool nesterov) {
  const double lr = double(*rate);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const math::SgdStep s = math::sgd_step(p[i], g[i], v[i], lr, momentum, nesterov);
    v_out[i] = float(s.velocity);
    p_out[i] = float(s.param);
  }
}

__global__ void adam_kernel(const float* p, const float* g, const float* m, const float* v,
                            const float* step, const float* rate, float* p_out, float* m_out,
                            float* v_out, int64_t n, double beta1, double beta2, double epsilon) {
  const double lr_t = math::adam_lr_t(double(*rate), beta1, beta2, double(*step));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const math::AdamStep s = math::adam_step(p[i], g[i], m[i], v[i], lr_t, beta1, beta2, epsilon);
    m_out[i] = float(s.m);
    v_out[i] = float(s.v);
    p_out[i] = float(s.param);
  }
}

void check_sgd(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, 5.0);
}
void check_adam(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  check_f32_streaming(OpView(&d), dev, cost, 12.0);
}

std::unique_ptr<Kernel> create_sgd(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t n = op.input(0).numel;
  const double mom = op.get_float("momentum");
  const bool nesterov = op.get_bool("nesterov");
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 4, 2, 0, "sgd_update");
    sgd_kernel<<<grid_for(n), kThreads, 0, s>>>(in<float>(a, 0), in<float>(a, 1), in<float>(a, 2),
                                                in<float>(a, 3), out<float>(a, 0), out<float>(a, 1),
                                                n, mom, nesterov);
    check_launch("sgd_update kernel");
  });
}

std::unique_ptr<Kernel> create_adam(const dlrt_op_desc& d, const dlrt_device_desc&, size_t*) {
  OpView op(&d);
  const int64_t n = op.input(0).numel;
  const double b1 = op.get_float("beta1"), b2 = op.get_float("beta2"),
               eps = op.get_float("epsilon");
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 6, 3, 0, "adam_update");
    adam_kernel<<<grid_for(n), kThreads, 0, s>>>(
        in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3), in<float>(a, 4),
        in<float>(a, 5), out<float>(a, 0), out<float>(a, 1), out<float>(a, 2), n, b1, b2, eps);
    check_launch("adam_update kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"sgd_update", &check_sgd, &create_sgd});
  t.push_back({"adam_update", &check_adam, &create_adam});
}

}  // namespace dlrt::cuda
