// cuda_status_test.cc: each vendor error becomes the right dlrt code, and the message names
// the error, the call, the file and the line. Needs no GPU: the error-name functions of the
// CUDA runtime, cuDNN, cuBLAS and NCCL work without a driver.
#include "cuda_status.hpp"

#include <cublas_api.h>
#include <cudnn.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <string>

#include "plugin_support.hpp"

namespace {

using dlrt::plugin::Error;

struct CudaStatus : ::testing::Test {
  void SetUp() override { dlrt::plugin::g_plugin_name = "cuda"; }
};

// Runs `body`, expecting it to throw; returns what it threw.
template <typename Fn>
Error thrown(Fn&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "nothing thrown";
  return Error(DLRT_OK, "");
}

TEST_F(CudaStatus, SuccessThrowsNothing) {
  EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess));
  EXPECT_NO_THROW(CUDNN_CHECK(CUDNN_STATUS_SUCCESS));
  EXPECT_NO_THROW(CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS));
  EXPECT_NO_THROW(NCCL_CHECK(ncclSuccess));
}

TEST_F(CudaStatus, CudaOutOfMemoryIsResourceExhaustedWithCallFileAndLine) {
  auto fail = [] { CUDA_CHECK_MSG(cudaErrorMemoryAllocation, "GPU:0 mem_alloc of 64 bytes"); };
  const int line = __LINE__ - 1;  // the line of the CUDA_CHECK_MSG call
  Error e = thrown(fail);
  EXPECT_EQ(e.code(), DLRT_RESOURCE_EXHAUSTED);
  const std::string msg = e.what();
  EXPECT_EQ(msg,
            "cuda: GPU:0 mem_alloc of 64 bytes: cudaErrorMemoryAllocation failed: "
            "cudaErrorMemoryAllocation (out of memory) [plugins/cuda/cuda_status_test.cc:" +
                std::to_string(line) + "]");
}

TEST_F(CudaStatus, CudaCodes) {
  using dlrt::cuda::code_for_cuda;
  EXPECT_EQ(code_for_cuda(cudaSuccess), DLRT_OK);
  EXPECT_EQ(code_for_cuda(cudaErrorNoDevice), DLRT_UNAVAILABLE);
  EXPECT_EQ(code_for_cuda(cudaErrorInsufficientDriver), DLRT_UNAVAILABLE);
  EXPECT_EQ(code_for_cuda(cudaErrorStubLibrary), DLRT_UNAVAILABLE);
  EXPECT_EQ(code_for_cuda(cudaErrorStreamCaptureInvalidated), DLRT_FAILED_PRECONDITION);
  EXPECT_EQ(code_for_cuda(cudaErrorIllegalAddress), DLRT_INTERNAL);
  EXPECT_EQ(code_for_cuda(cudaErrorInvalidValue), DLRT_INTERNAL);
}

TEST_F(CudaStatus, StickyCudaErrorsSaySo) {
  Error e = thrown([] { CUDA_CHECK(cudaErrorIllegalAddress); });
  EXPECT_EQ(e.code(), DLRT_INTERNAL);
  EXPECT_NE(std::string(e.what()).find("sticky"), std::string::npos) << e.what();
}

TEST_F(CudaStatus, ClearsTheLastErrorSoTheNextCheckIsClean) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    GTEST_SKIP() << "no GPU: without a driver every call reports the initialisation error, "
                    "which CUDA never clears";
  // An out-of-memory cudaMalloc sets the thread's last error; CUDA_CHECK must not leave it.
  void* p = nullptr;
  Error e = thrown([&] { CUDA_CHECK(cudaMalloc(&p, size_t(10) << 40)); });  // 10 TiB
  EXPECT_EQ(e.code(), DLRT_RESOURCE_EXHAUSTED) << e.what();
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
}

TEST_F(CudaStatus, CudnnCodesAndMessage) {
  using dlrt::cuda::code_for_cudnn;
  EXPECT_EQ(code_for_cudnn(CUDNN_STATUS_NOT_SUPPORTED_SHAPE), DLRT_UNIMPLEMENTED);
  EXPECT_EQ(code_for_cudnn(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED),
            DLRT_RESOURCE_EXHAUSTED);
  EXPECT_EQ(code_for_cudnn(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED), DLRT_UNAVAILABLE);
  EXPECT_EQ(code_for_cudnn(CUDNN_STATUS_BAD_PARAM), DLRT_INTERNAL);
  Error e = thrown([] { CUDNN_CHECK(CUDNN_STATUS_NOT_SUPPORTED); });
  EXPECT_EQ(e.code(), DLRT_UNIMPLEMENTED);
  EXPECT_NE(std::string(e.what()).find("CUDNN_STATUS_NOT_SUPPORTED"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("cuda_status_test.cc:"), std::string::npos) << e.what();
}

TEST_F(CudaStatus, CublasCodesAndMessage) {
  using dlrt::cuda::code_for_cublas;
  EXPECT_EQ(code_for_cublas(CUBLAS_STATUS_ALLOC_FAILED), DLRT_RESOURCE_EXHAUSTED);
  EXPECT_EQ(code_for_cublas(CUBLAS_STATUS_NOT_SUPPORTED), DLRT_UNIMPLEMENTED);
  EXPECT_EQ(code_for_cublas(CUBLAS_STATUS_EXECUTION_FAILED), DLRT_INTERNAL);
  Error e = thrown([] { CUBLAS_CHECK(CUBLAS_STATUS_ALLOC_FAILED); });
  EXPECT_EQ(e.code(), DLRT_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos)
      << e.what();
}

TEST_F(CudaStatus, NcclCodesAndMessage) {
  using dlrt::cuda::code_for_nccl;
  EXPECT_EQ(code_for_nccl(ncclInvalidArgument), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(code_for_nccl(ncclRemoteError), DLRT_UNAVAILABLE);
  EXPECT_EQ(code_for_nccl(ncclUnhandledCudaError), DLRT_INTERNAL);
  Error e = thrown([] { NCCL_CHECK(ncclInvalidUsage); });
  EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("ncclInvalidUsage failed"), std::string::npos) << e.what();
}

}  // namespace
