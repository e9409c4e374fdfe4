// cuda_status.hpp: NVIDIA library errors -> dlrt errors, with the failing call, file and line.
//
//   CUDA_CHECK(cudaMalloc(&p, n));                       // cudaError_t      (CUDA runtime)
//   CUDA_CHECK_MSG(cudaMalloc(&p, n), "GPU:0 mem_alloc of 64 bytes");  // same, with context
//   CUDNN_CHECK(cudnnCreate(&h));                        // cudnnStatus_t    (cuDNN)
//   CUBLAS_CHECK(cublasCreate(&h));                      // cublasStatus_t   (cuBLAS, cuBLASLt)
//   NCCL_CHECK(ncclGetUniqueId(&id));                    // ncclResult_t     (NCCL)
//
// Each macro evaluates its argument once and, on failure, throws a dlrt::plugin::Error that
// plugin_support's guard() turns into the dlrt_status the host receives, e.g.
//   "cuda: GPU:0 mem_alloc of 10995116277760 bytes: cudaMalloc(&ptr, bytes) failed:
//    cudaErrorMemoryAllocation (out of memory) [plugins/cuda/memory.cc:61]"
//
// Codes (the rest is INTERNAL: a bug here or a library failing unexpectedly):
//   out of device or host memory                          -> RESOURCE_EXHAUSTED
//   no driver, no device, driver too old, device busy     -> UNAVAILABLE
//   "not supported" (cuDNN/cuBLAS: this shape/type/arch)   -> UNIMPLEMENTED
//   a call CUDA forbids during stream capture               -> FAILED_PRECONDITION
//   NCCL invalid argument / usage                          -> INVALID_ARGUMENT
//   NCCL remote error (a peer died or left)                -> UNAVAILABLE
//
// This header deliberately includes only the CUDA runtime header: the cuDNN, cuBLAS and NCCL
// status types appear only inside the macro bodies, so a file that uses CUDNN_CHECK includes
// cudnn.h itself and the heavy vendor headers stay in the translation units that need them.
// The mapping from numbers to names and codes lives in cuda_status.cc.
#pragma once

#include <cuda_runtime_api.h>
#include <dlrt/status.h>

#include <string>

namespace dlrt::cuda {

// The dlrt code for each library's error value (cuda_status.cc holds the tables).
dlrt_code code_for_cuda(cudaError_t error);
dlrt_code code_for_cudnn(int status);
dlrt_code code_for_cublas(int status);
dlrt_code code_for_nccl(int result);

// "cudaErrorMemoryAllocation (out of memory)": the error's name and description.
std::string describe_cuda(cudaError_t error);

// Throw the dlrt::plugin::Error for a failed call. `call` is the call's source text, `file`
// and `line` where it was made, `context` (may be empty) what the plugin was doing.
// throw_cuda also clears CUDA's per-thread "last error" for non-sticky errors, so one failed
// call (an out-of-memory cudaMalloc, say) does not poison the next cudaGetLastError.
[[noreturn]] void throw_cuda(cudaError_t error, const char* call, const char* file, int line,
                             const std::string& context = {});
[[noreturn]] void throw_cudnn(int status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(int status, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl(int result, const char* call, const char* file, int line,
                             const std::string& context = {});

// `file` relative to the repository ("plugins/cuda/memory.cc"), for messages.
const char* short_file(const char* file);

}  // namespace dlrt::cuda

#define CUDA_CHECK_MSG(expr, context)                                                 \
  do {                                                                                \
    cudaError_t dlrt_cuda_err_ = (expr);                                              \
    if (dlrt_cuda_err_ != cudaSuccess)                                                \
      ::dlrt::cuda::throw_cuda(dlrt_cuda_err_, #expr, __FILE__, __LINE__, (context)); \
  } while (0)

#define CUDA_CHECK(expr) CUDA_CHECK_MSG(expr, std::string())

#define CUDNN_CHECK(expr)                                                                     \
  do {                                                                                        \
    cudnnStatus_t dlrt_cudnn_st_ = (expr);                                                    \
    if (dlrt_cudnn_st_ != CUDNN_STATUS_SUCCESS)                                               \
      ::dlrt::cuda::throw_cudnn(static_cast<int>(dlrt_cudnn_st_), #expr, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(expr)                                                                      \
  do {                                                                                          \
    cublasStatus_t dlrt_cublas_st_ = (expr);                                                    \
    if (dlrt_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::dlrt::cuda::throw_cublas(static_cast<int>(dlrt_cublas_st_), #expr, __FILE__, __LINE__); \
  } while (0)

// Note: ncclInProgress (a non-blocking communicator still working) is an error here; code
// that drives non-blocking communicators handles it first (see collectives.cc).
#define NCCL_CHECK(expr)                                                                     \
  do {                                                                                       \
    ncclResult_t dlrt_nccl_res_ = (expr);                                                    \
    if (dlrt_nccl_res_ != ncclSuccess)                                                       \
      ::dlrt::cuda::throw_nccl(static_cast<int>(dlrt_nccl_res_), #expr, __FILE__, __LINE__); \
  } while (0)
