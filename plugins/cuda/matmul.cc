// matmul.cc: matmul and matmul_bias_act through cuBLASLt, f32 (CUBLAS_COMPUTE_32F: no TF32),
// and bf16 / f16 when every operand has that dtype (tensor cores, f32 accumulation and scale,
// one rounding of c; docs/ops.md "16-bit floats"); a 16-bit matmul_bias_act with sigmoid or
// tanh (an f32 activation kernel after the matmul) runs through f32 instead (widening.hpp).
//
// Row-major to column-major: cuBLAS(Lt) is column-major, dlrt is row-major. A row-major (R,C)
// buffer is the column-major (C,R) matrix, its transpose; so c = a.b (row-major, M x N) is
// computed as c^T = b^T . a^T (column-major, N x M) with b's buffer as the first operand and
// a's as the second, no copies:
//   first  = b buffer: col-major (N,K) ld N (op N) or, with transpose_b, (K,N) ld K (op T);
//   second = a buffer: col-major (K,M) ld K (op N) or, with transpose_a, (M,K) ld M (op T);
//   result = c buffer: col-major (N,M) ld N.
// The cuBLASLt handle is the GPU's, shared by every matmul kernel on it (shared_handle.hpp).
// The bias (N) indexes the rows of c^T, which is what cuBLASLt's BIAS epilogue adds.
// Epilogues: "none" BIAS, "relu" RELU_BIAS; "sigmoid"/"tanh" BIAS then one activation kernel.
// The algorithm comes from cublasLtMatmulAlgoGetHeuristic once in create (up to 32 MiB of
// workspace), twice: for 16-byte aligned operands (what the arena's 64-byte alignment gives;
// vectorised kernels need it) and for 4-byte ones; each run takes the one its pointers'
// real alignment allows (math::common_alignment, capped at 16).
#include <cublasLt.h>

#include <algorithm>
#include <string>

#include "lt_support.hpp"
#include "op_support.hpp"

namespace dlrt::cuda {
namespace {

// CUDA_R_32F, or CUDA_R_16BF / CUDA_R_16F when every operand is bf16 / f16 (the check).
cudaDataType_t data_type_of(const OpView& op) {
  switch (op.input(0).dtype) {
    case DLRT_BF16:
      return CUDA_R_16BF;
    case DLRT_F16:
      return CUDA_R_16F;
    default:
      return CUDA_R_32F;
  }
}

// Every operand of one 16-bit dtype, and an activation the epilogue applies itself.
bool native_16bit(const OpView& op) {
  const int32_t t = op.input(0).dtype;
  if (t != DLRT_BF16 && t != DLRT_F16) return false;
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const plugin::TensorView& v : *list)
      if (v.dtype != t) return false;
  if (op.name() == "matmul_bias_act") {
    const math::Act act = parse_act(op);
    return act == math::Act::kNone || act == math::Act::kRelu;
  }
  return true;
}

void check_matmul(const dlrt_op_desc& d, const dlrt_device_desc& dev, dlrt_op_cost* cost) {
  OpView op(&d);
  if (!native_16bit(op)) require_f32(op);
  const auto& c = op.output(0);
  const auto& a = op.input(0);
  const int64_t k = op.get_bool("transpose_a") ? a.dims[0] : a.dims[1];
  fill_cost(cost, dev, 2.0 * double(c.dims[0]) * double(c.dims[1]) * double(k), operand_bytes(op));
}

class MatmulKernel final : public Kernel {
 public:
  explicit MatmulKernel(const OpView& op) : name_(op.name()) {
    const bool ta = op.get_bool("transpose_a"), tb = op.get_bool("transpose_b");
    const auto& a = op.input(0);
    m_ = op.output(0).dims[0], n_ = op.output(0).dims[1];
    const int64_t k = ta ? a.dims[0] : a.dims[1];
    has_bias_ = name_ == "matmul_bias_act";
    if (has_bias_) act_ = parse_act(op);
    lt_ = lt_handle();
    const cudaDataType_t type = data_type_of(op);  // A, B, C, D and the bias; scale stays f32
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t op_first = tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                      op_second = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first,
                                                sizeof op_first));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                                                sizeof op_second));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (has_bias_)
      epi = act_ == math::Act::kRelu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (has_bias_) {
      cudaDataType_t bias_type = type;
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                  &bias_type, sizeof bias_type));
    }
    // Stored (column-major) shapes: first = b, second = a, result = c^T.
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&first_, type, tb ? k : n_, tb ? n_ : k, tb ? k : n_));
    CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&second_, type, ta ? m_ : k, ta ? k : m_, ta ? m_ : k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&result_, type, n_, m_, n_));

    // Two algorithms, both asked of the heuristic once here: one for operands aligned to 16
    // bytes (the arena aligns every buffer to 64, so the usual case; cuBLASLt's vectorised
    // kernels need 16) and one for 4-byte alignment, for pointers an executor hands out at
    // an offset. run() picks by the real alignment of the pointers it gets.
    aligned_ = heuristic(16);
    unaligned_ = heuristic(4);
    workspace_ = std::max(aligned_.workspace, unaligned_.workspace);
    plugin::log(DLRT_LOG_INFO,
                "cuda: " + name_ + " (" + std::to_string(m_) + "x" + std::to_string(k) + ")x(" +
                    std::to_string(k) + "x" + std::to_string(n_) + ")" + (ta ? " ta" : "") +
                    (tb ? " tb" : "") + ": cuBLASLt heuristic algorithms, workspace " +
                    std::to_string(workspace_) + " bytes");
  }

  // The heuristic's first algorithm for operands aligned to `align` bytes (lt_support.hpp).
  LtChoice heuristic(uint32_t align) {
    return lt_heuristic(lt_, desc_, first_, second_, result_, align, name_);
  }
  ~MatmulKernel() override {
    if (result_ != nullptr) cublasLtMatrixLayoutDestroy(result_);
    if (second_ != nullptr) cublasLtMatrixLayoutDestroy(second_);
    if (first_ != nullptr) cublasLtMatrixLayoutDestroy(first_);
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  }

  size_t workspace_bytes() const { return workspace_; }

  void run(cudaStream_t stream, const dlrt_kernel_args& a) override {
    check_args(a, has_bias_ ? 3 : 2, 1, workspace_, name_);
    if (has_bias_) {
      const void* bias = in(a, 2);
      CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                  sizeof bias));
    }
    const float one = 1.0f, zero = 0.0f;
    const size_t align = math::common_alignment({in(a, 0), in(a, 1), out(a, 0)}, 16);
    const LtChoice& c = align >= 16 ? aligned_ : unaligned_;
    auto held = lt_.lock();  // the handle is shared with the GPU's other matmul kernels
    CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, in(a, 1), first_, in(a, 0), second_, &zero,
                                out(a, 0), result_, out(a, 0), result_, &c.algo,
                                c.workspace > 0 ? a.workspace : nullptr, c.workspace, stream));
    if (has_bias_ && (act_ == math::Act::kSigmoid || act_ == math::Act::kTanh))
      launch_act(stream, out<float>(a, 0), m_ * n_, act_);
  }

 private:
  std::string name_;
  int64_t m_ = 0, n_ = 0;
  bool has_bias_ = false;
  math::Act act_ = math::Act::kNone;
  SharedHandle<cublasLtHandle_t> lt_;  // the GPU's, shared by every matmul kernel on it
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, result_ = nullptr;
  LtChoice aligned_, unaligned_;  // for operands aligned to 16 bytes, and to 4
  size_t workspace_ = 0;        // the larger of the two
};

std::unique_ptr<Kernel> create_matmul(const dlrt_op_desc& d, const dlrt_device_desc&,
                                      size_t* workspace) {
  auto k = std::make_unique<MatmulKernel>(OpView(&d));
  *workspace = k->workspace_bytes();
  return k;
}

}  // namespace

DLRT_CUDA_OPS(t) {
  t.push_back({"matmul", &check_matmul, &create_matmul});
  t.push_back({"matmul_bias_act", &check_matmul, &create_matmul});
}

}  // namespace dlrt::cuda
