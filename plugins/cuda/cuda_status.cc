// cuda_status.cc: the tables behind cuda_status.hpp. The one translation unit that sees every
// vendor's status enum (cudnn.h is large; nothing else in the plugin needs it yet).
#include "cuda_status.hpp"

#include <cublas_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstring>

#include "plugin_support.hpp"

namespace dlrt::cuda {

dlrt_code code_for_cuda(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return DLRT_OK;
    case cudaErrorMemoryAllocation:
      return DLRT_RESOURCE_EXHAUSTED;
    // The platform is there but cannot be used: no (or a stub, or too old a) driver, no
    // device, a device reserved by another process, a binary built for other GPUs.
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemNotReady:
    case cudaErrorInitializationError:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return DLRT_UNAVAILABLE;
    // Something CUDA forbids while a stream is being captured into a graph happened (a
    // synchronising call, work from another thread joining the capture, ...): the caller's
    // sequence of calls was wrong, not the device.
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureWrongThread:
      return DLRT_FAILED_PRECONDITION;
    default:
      return DLRT_INTERNAL;
  }
}

// Sticky errors leave the CUDA context of the process unusable: every later call on that
// device fails the same way until the process exits. Worth saying in the message.
static bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

dlrt_code code_for_cudnn(int status) {
  switch (static_cast<cudnnStatus_t>(status)) {
    case CUDNN_STATUS_SUCCESS:
      return DLRT_OK;
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
    case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED:
      return DLRT_RESOURCE_EXHAUSTED;
    case CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED:
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
    case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE:
      return DLRT_UNAVAILABLE;
    default:
      break;
  }
  // cuDNN 9 groups its codes by thousands: 3xxx are "not supported" (shape, type, layout,
  // architecture): this op cannot run here, which is what UNIMPLEMENTED says.
  if (status >= 3000 && status < 4000) return DLRT_UNIMPLEMENTED;
  return DLRT_INTERNAL;
}

dlrt_code code_for_cublas(int status) {
  switch (static_cast<cublasStatus_t>(status)) {
    case CUBLAS_STATUS_SUCCESS:
      return DLRT_OK;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return DLRT_RESOURCE_EXHAUSTED;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return DLRT_UNIMPLEMENTED;
    default:
      return DLRT_INTERNAL;
  }
}

dlrt_code code_for_nccl(int result) {
  switch (static_cast<ncclResult_t>(result)) {
    case ncclSuccess:
      return DLRT_OK;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      return DLRT_INVALID_ARGUMENT;
    case ncclRemoteError:  // a peer failed or went away
    case ncclSystemError:  // network, shared memory or another OS resource
      return DLRT_UNAVAILABLE;
    default:  // ncclUnhandledCudaError, ncclInternalError, ncclInProgress where unexpected
      return DLRT_INTERNAL;
  }
}

std::string describe_cuda(cudaError_t error) {
  // Both return static strings and work without a driver.
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

const char* short_file(const char* file) {
  if (file == nullptr) return "?";
  const char* p = std::strstr(file, "plugins/");
  return p != nullptr ? p : file;
}

static std::string where(const char* file, int line) {
  return " [" + std::string(short_file(file)) + ":" + std::to_string(line) + "]";
}

static std::string prefix(const std::string& context) {
  std::string s = std::string(plugin::g_plugin_name) + ": ";
  if (!context.empty()) s += context + ": ";
  return s;
}

void throw_cuda(cudaError_t error, const char* call, const char* file, int line,
                const std::string& context) {
  // Reset the per-thread last error (a no-op for sticky errors, which cannot be reset).
  (void)cudaGetLastError();
  std::string msg = prefix(context) + call + " failed: " + describe_cuda(error) + where(file, line);
  if (is_sticky(error))
    msg += "; this error is sticky: the GPU context of this process is unusable until it exits";
  throw plugin::Error(code_for_cuda(error), msg);
}

void throw_cudnn(int status, const char* call, const char* file, int line) {
  std::string msg = prefix({}) + call +
                    " failed: " + cudnnGetErrorString(static_cast<cudnnStatus_t>(status)) + " (" +
                    std::to_string(status) + ")" + where(file, line);
  throw plugin::Error(code_for_cudnn(status), msg);
}

void throw_cublas(int status, const char* call, const char* file, int line) {
  auto s = static_cast<cublasStatus_t>(status);
  std::string msg = prefix({}) + call + " failed: " + cublasGetStatusName(s) + " (" +
                    cublasGetStatusString(s) + ")" + where(file, line);
  throw plugin::Error(code_for_cublas(status), msg);
}

void throw_nccl(int result, const char* call, const char* file, int line,
                const std::string& context) {
  auto r = static_cast<ncclResult_t>(result);
  std::string msg = prefix(context) + call + " failed: " + ncclGetErrorString(r);
  // NCCL keeps a human-readable account of the last failure (which peer, which transport).
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && last[0] != '\0') msg += std::string(" (") + last + ")";
  throw plugin::Error(code_for_nccl(result), msg + where(file, line));
}

}  // namespace dlrt::cuda
