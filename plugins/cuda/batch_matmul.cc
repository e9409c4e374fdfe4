// batch_matmul.cc: batch_matmul through cuBLASLt's strided-batched matmul, f32
// (CUBLAS_COMPUTE_32F: no TF32).
//
// Each batch element is matmul.cc's row-major-to-column-major product (c^T = b^T . a^T, b's
// buffer first, a's second; see there). The batch goes into the layouts' BATCH_COUNT and
// STRIDED_BATCH_OFFSET (elements between consecutive matrices):
//   - an operand whose batch dims are all 1 is one matrix for every element: stride 0;
//   - an operand whose batch dims equal c's has one matrix per element: stride = its size;
// so the common shapes — (B*H, T, d) pairs, or a rank-2 weight against a batch — are one
// cuBLASLt call. Any other broadcast (e.g. (2,1,M,K) x (1,5,K,N)) runs one call per batch
// element of c with the operand offsets of batch_matmul_geom.hpp: correct for every shape,
// and the rare mixed-broadcast case pays a launch per matrix.
#include <cublasLt.h>

#include <algorithm>
#include <string>

#include "batch_matmul_geom.hpp"
#include "lt_support.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

void check_batch_matmul(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  require_f32(op);
  const plugin::BatchMatmulGeom g = plugin::batch_matmul_geom(op);
  fill_cost(cost, dev, 2.0 * double(g.batch_count()) * double(g.m) * double(g.n) * double(g.k),
            operand_bytes(op));
}

class BatchMatmulKernel final : public Kernel {
 public:
  explicit BatchMatmulKernel(const OpView& op) : g_(plugin::batch_matmul_geom(op)) {
    single_call_ = g_.a_uniform() && g_.b_uniform();
    const int32_t count = single_call_ ? static_cast<int32_t>(g_.batch_count()) : 1;
    const int64_t stride_a = plugin::BatchMatmulGeom::all_ones(g_.a_bdims) ? 0 : g_.a_size();
    const int64_t stride_b = plugin::BatchMatmulGeom::all_ones(g_.b_bdims) ? 0 : g_.b_size();
    const int64_t stride_c = g_.m * g_.n;
    lt_ = lt_handle();
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t op_first = g_.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                      op_second = g_.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first,
                                                sizeof op_first));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                                                sizeof op_second));
    const int64_t m = g_.m, n = g_.n, k = g_.k;
    first_ = layout(g_.tb ? k : n, g_.tb ? n : k, count, stride_b);
    second_ = layout(g_.ta ? m : k, g_.ta ? k : m, count, stride_a);
    result_ = layout(n, m, count, stride_c);
    aligned_ = heuristic(16);
    unaligned_ = heuristic(4);
    workspace_ = std::max(aligned_.workspace, unaligned_.workspace);
  }
  ~BatchMatmulKernel() override {
    for (cublasLtMatrixLayout_t l : {result_, second_, first_})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  }

  size_t workspace_bytes() const { return workspace_; }

  void run(cudaStream_t stream, const dlrt_kernel_args& args) override {
    check_args(args, 2, 1, workspace_, "batch_matmul");
    const auto* a = in<float>(args, 0);
    const auto* b = in<float>(args, 1);
    auto* c = out<float>(args, 0);
    auto held = lt_.lock();  // the handle is shared with the GPU's other matmul kernels
    if (single_call_) {
      gemm(stream, args, a, b, c);
      return;
    }
    for (int64_t i = 0; i < g_.batch_count(); ++i)
      gemm(stream, args, a + g_.a_matrix(i) * g_.a_size(), b + g_.b_matrix(i) * g_.b_size(),
           c + i * g_.m * g_.n);
  }

 private:
  static cublasLtMatrixLayout_t layout(int64_t rows, int64_t cols, int32_t count,
                                       int64_t stride) {
    cublasLtMatrixLayout_t l = nullptr;
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, rows));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride));
    return l;
  }

  void gemm(cudaStream_t stream, const dlrt_kernel_args& args, const float* a, const float* b,
            float* c) {
    const float one = 1.0f, zero = 0.0f;
    const size_t align = math::common_alignment({a, b, c}, 16);
    const LtChoice& ch = align >= 16 ? aligned_ : unaligned_;
    CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, b, first_, a, second_, &zero, c, result_, c,
                                result_, &ch.algo, ch.workspace > 0 ? args.workspace : nullptr,
                                ch.workspace, stream));
  }

  LtChoice heuristic(uint32_t align) {
    return lt_heuristic(lt_, desc_, first_, second_, result_, align, "batch_matmul");
  }

  plugin::BatchMatmulGeom g_;
  bool single_call_ = false;  // both operands uniform: one strided-batched call
  SharedHandle<cublasLtHandle_t> lt_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, result_ = nullptr;
  LtChoice aligned_, unaligned_;
  size_t workspace_ = 0;
};

std::unique_ptr<Kernel> create_batch_matmul(const dlrt_op_desc& d, const dlrt_device_desc&,
                                            size_t* workspace) {
  auto k = std::make_unique<BatchMatmulKernel>(OpView(&d));
  *workspace = k->workspace_bytes();
  return k;
}

}  // namespace

DLRT_CUDA_OPS(t) { t.push_back({"batch_matmul", &check_batch_matmul, &create_batch_matmul}); }

}  // namespace dlrt::cuda
