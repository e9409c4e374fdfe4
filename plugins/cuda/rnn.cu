// rnn.cu: the CUDA plugin's lstm_cell and lstm_cell_grad (f32; core/ops/infer_rnn.cc has the
// arithmetic).
//
//   lstm_cell       act (B,4H) = zx + h U in one cuBLASLt call (beta 1 with zx as C and act
//                   as D: no copy, no scratch), then one thread per state element (B*H) turns
//                   its four z entries into the gate activations in place and writes c', h'.
//   lstm_cell_grad  one thread per state element: dz's four entries and dc.
// The GEMM is row-major done column-major as matmul.cc explains: act^T (4H,B) = U^T . h^T +
// zx^T, with U's buffer the first operand (col-major (4H,H), ld 4H) and h's the second
// (col-major (H,B), ld H). The per-element formulas are kernel_math.hpp's (lstm_*), replayed on
// the host by kernel_math_test.cc.
#include <cublasLt.h>

#include <algorithm>
#include <string>

#include "kernel_math.hpp"
#include "lt_support.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void lstm_gates_kernel(float* act, const float* c, float* c_next, float* h_next,
                                  int64_t h, int64_t n) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n;
       k += int64_t(gridDim.x) * blockDim.x)
    math::lstm_cell_at(act, c, c_next, h_next, h, k);
}

__global__ void lstm_grad_kernel(const float* dh_next, const float* dc_next, const float* c,
                                 const float* c_next, const float* act, float* dz, float* dc,
                                 int64_t h, int64_t n) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n;
       k += int64_t(gridDim.x) * blockDim.x)
    math::lstm_cell_grad_at(dh_next, dc_next, c, c_next, act, dz, dc, h, k);
}

void check_rnn(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  const bool cell = std::string(op.name()) == "lstm_cell";
  const double b = double(op.input(cell ? 1 : 0).dims[0]), h = double(op.input(cell ? 1 : 0).dims[1]);
  fill_cost(cost, dev, (cell ? 8.0 * b * h * h : 0.0) + 40.0 * b * h, operand_bytes(op));
}

class LstmCellKernel final : public Kernel {
 public:
  explicit LstmCellKernel(const OpView& op) : b_(op.input(1).dims[0]), h_(op.input(1).dims[1]) {
    const int64_t n4 = 4 * h_;
    lt_ = lt_handle();
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&first_, CUDA_R_32F, n4, h_, n4));   // U
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&second_, CUDA_R_32F, h_, b_, h_));  // h
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&result_, CUDA_R_32F, n4, b_, n4));  // zx, act
    aligned_ = lt_heuristic(lt_, desc_, first_, second_, result_, 16, "lstm_cell");
    unaligned_ = lt_heuristic(lt_, desc_, first_, second_, result_, 4, "lstm_cell");
    workspace_ = std::max(aligned_.workspace, unaligned_.workspace);
  }
  ~LstmCellKernel() override {
    if (result_ != nullptr) cublasLtMatrixLayoutDestroy(result_);
    if (second_ != nullptr) cublasLtMatrixLayoutDestroy(second_);
    if (first_ != nullptr) cublasLtMatrixLayoutDestroy(first_);
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  }
  size_t workspace_bytes() const { return workspace_; }

  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    check_args(a, 4, 3, workspace_, "lstm_cell");
    const float one = 1.0f;
    const size_t align =
        math::common_alignment({in(a, 0), in(a, 1), in(a, 3), out(a, 2)}, 16);
    const LtChoice& c = align >= 16 ? aligned_ : unaligned_;
    {
      auto held = lt_.lock();  // the handle is shared with the GPU's matmul kernels
      CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, in(a, 3), first_, in(a, 1), second_, &one,
                                  in(a, 0), result_, out(a, 2), result_, &c.algo,
                                  c.workspace > 0 ? a.workspace : nullptr, c.workspace, stream));
    }
    const int64_t n = b_ * h_;
    lstm_gates_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(
        out<float>(a, 2), in<float>(a, 2), out<float>(a, 1), out<float>(a, 0), h_, n);
    check_launch("lstm_cell gate kernel");
  }

 private:
  int64_t b_, h_;
  SharedHandle<cublasLtHandle_t> lt_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, result_ = nullptr;
  LtChoice aligned_, unaligned_;
  size_t workspace_ = 0;
};

std::unique_ptr<Kernel> create_rnn(const dlrt_op_desc& desc, const dlrt_device_desc&,
                                   size_t* workspace) {
  OpView op(&desc);
  if (std::string(op.name()) == "lstm_cell") {
    auto k = std::make_unique<LstmCellKernel>(op);
    *workspace = k->workspace_bytes();
    return k;
  }
  const int64_t h = op.input(0).dims[1], n = op.input(0).dims[0] * h;
  return make_kernel([=](cudaStream_t s, const dlrt_kernel_args& a) {
    check_args(a, 5, 2, 0, "lstm_cell_grad");
    lstm_grad_kernel<<<grid_for(n, kThreads), kThreads, 0, s>>>(
        in<float>(a, 0), in<float>(a, 1), in<float>(a, 2), in<float>(a, 3), in<float>(a, 4),
        out<float>(a, 0), out<float>(a, 1), h, n);
    check_launch("lstm_cell_grad kernel");
  });
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"lstm_cell", &check_rnn, &create_rnn});
  t.push_back({"lstm_cell_grad", &check_rnn, &create_rnn});
}

}  // namespace dlrt::cuda
