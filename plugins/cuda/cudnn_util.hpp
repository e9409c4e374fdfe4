// cudnn_util.hpp: owners for the cuDNN objects the cuDNN-backed ops keep (handle and the
// legacy descriptors), and the NCHW/NHWC tensor descriptor every one of them builds.
// Included only by the files that call cuDNN (conv.cc, pool.cc, cudnn_act.cc), so cudnn.h
// stays out of the rest of the plugin.
//
// One cuDNN handle per GPU, shared by the kernels (SharedCudnnHandle, shared_handle.hpp): a
// kernel takes it in create and, in run, holds it through use(stream), which locks it and
// points it at the run's stream, since a handle carries its stream between calls.
#pragma once

#include <cudnn.h>

#include <climits>
#include <string>
#include <utility>

#include "op_support.hpp"
#include "shared_handle.hpp"

namespace dlrt::cuda {

template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnOwner {
 public:
  CudnnOwner() { CUDNN_CHECK(Create(&h_)); }
  ~CudnnOwner() {
    if (h_ != nullptr) Destroy(h_);
  }
  CudnnOwner(const CudnnOwner&) = delete;
  CudnnOwner& operator=(const CudnnOwner&) = delete;
  T get() const { return h_; }
  operator T() const { return h_; }  // NOLINT: passes straight into cuDNN calls

 private:
  T h_ = nullptr;
};

using TensorDesc =
    CudnnOwner<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc =
    CudnnOwner<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc = CudnnOwner<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                            cudnnDestroyConvolutionDescriptor>;
using PoolDesc = CudnnOwner<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                            cudnnDestroyPoolingDescriptor>;
using ActDesc = CudnnOwner<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                           cudnnDestroyActivationDescriptor>;

// The current device's shared cuDNN handle.
class SharedCudnnHandle {
 public:
  SharedCudnnHandle()
      : h_(SharedHandle<cudnnHandle_t>::for_current_device(
            [] {
              cudnnHandle_t h = nullptr;
              CUDNN_CHECK(cudnnCreate(&h));
              return h;
            },
            [](cudnnHandle_t h) { cudnnDestroy(h); })) {}
  operator cudnnHandle_t() const { return h_.get(); }  // NOLINT: passes into cuDNN calls
  // Locks the handle for create's algorithm queries.
  std::unique_lock<std::mutex> lock() const { return h_.lock(); }
  // Locks the handle for one run's calls and points it at `stream`.
  std::unique_lock<std::mutex> use(cudaStream_t stream) const {
    auto held = h_.lock();
    CUDNN_CHECK(cudnnSetStream(h_.get(), stream));
    return held;
  }

 private:
  SharedHandle<cudnnHandle_t> h_;
};

// cuDNN's legacy API takes int sizes; larger tensors are UNIMPLEMENTED here.
inline int to_int(int64_t v, const std::string& op) {
  if (v < 1 || v > INT_MAX)
    plugin::fail(DLRT_UNIMPLEMENTED, "cuda: " + op + ": dimension " + std::to_string(v) +
                                         " does not fit cuDNN's int sizes");
  return static_cast<int>(v);
}

// A 4-D f32 image descriptor of logical (n, c, h, w), stored NCHW or NHWC.
inline void set_image_desc(cudnnTensorDescriptor_t d, bool nchw, int64_t n, int64_t c, int64_t h,
                           int64_t w, const std::string& op) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC,
                                         CUDNN_DATA_FLOAT, to_int(n, op), to_int(c, op),
                                         to_int(h, op), to_int(w, op)));
}

}  // namespace dlrt::cuda
