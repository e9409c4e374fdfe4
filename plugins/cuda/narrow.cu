// narrow.cu: the conversion kernels of the CUDA plugin's 16-bit path (widening.hpp): n
// elements of f16/bf16 to f32 and back, per element through narrow_math.hpp (host-tested in
// narrow_math_test.cc). Grid-stride loops on the caller's stream; nothing synchronises, so
// they capture into CUDA Graphs with the kernel they surround.
#include "narrow_math.hpp"
#include "op_support.hpp"
#include "widening.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

// x: n 16-bit elements of `dtype` -> y: n f32
__global__ void widen_kernel(const uint16_t* x, int32_t dtype, float* y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::narrow_to_float(dtype, x[i]); }
}

// x: n f32 -> y: n 16-bit elements of `dtype`, each rounded once to nearest (ties to even)
__global__ void narrow_kernel(const float* x, int32_t dtype, uint16_t* y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = math::float_to_narrow(dtype, x[i]); }
}

}  // namespace

void launch_widen(cudaStream_t stream, const void* x, int32_t dtype, float* y, int64_t n) {
  if (n == 0) return;
  widen_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const uint16_t*>(x),
                                                               dtype, y, n);
  check_launch("widen kernel (16-bit to f32)");
}

void launch_narrow(cudaStream_t stream, const float* x, int32_t dtype, void* y, int64_t n) {
  if (n == 0) return;
  narrow_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, dtype,
                                                                static_cast<uint16_t*>(y), n);
  check_launch("narrow kernel (f32 to 16-bit)");
}

}  // namespace dlrt::cuda
