// host_fold.hpp: what the importer computes on the host when every input of a node is a
// constant: broadcasting arithmetic and comparisons (shape arithmetic of exported PyTorch
// models: Shape -> Gather -> Mul -> Concat -> Reshape), and data movement (transpose, gather,
// slice, concat). Only for tensors up to kMaxFoldElements; bigger ones stay graph ops.
#pragma once

#include <functional>
#include <vector>

#include "onnx_import/host_tensor.hpp"

namespace dlrt::onnx_import {

constexpr int64_t kMaxFoldElements = int64_t{1} << 20;
// The largest tensor ConstantOfShape / Range / Expand may make on the host (1 GiB of f32).
constexpr int64_t kMaxHostElements = int64_t{1} << 28;

// NumPy broadcast of two dim lists; empty optional when they do not broadcast.
bool broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                    std::vector<int64_t>& out);

// out[i] = f(a[i'], b[i'']) over the broadcast shape, in `out_dtype`.
HostTensor host_binary(const HostTensor& a, const HostTensor& b, dlrt_dtype out_dtype,
                       const std::function<double(double, double)>& f);
// ONNX Where: x where cond, else y, the three broadcast together; elements copied as bytes
// (every dtype, exactly). x and y have one dtype.
HostTensor host_where(const HostTensor& cond, const HostTensor& x, const HostTensor& y);
HostTensor host_unary(const HostTensor& a, dlrt_dtype out_dtype,
                      const std::function<double(double)>& f);

HostTensor host_transpose(const HostTensor& x, const std::vector<int64_t>& perm);
// ONNX Gather along `axis` with indices already made non-negative.
HostTensor host_gather(const HostTensor& x, const std::vector<int64_t>& indices,
                       const std::vector<int64_t>& index_dims, int64_t axis);
// x[starts:ends:steps] on every axis (already normalised: 0 <= start, in-range ends).
HostTensor host_slice(const HostTensor& x, const std::vector<int64_t>& starts,
                      const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims);
HostTensor host_concat(const std::vector<const HostTensor*>& parts, int64_t axis);
HostTensor host_cast(const HostTensor& x, dlrt_dtype to);

}  // namespace dlrt::onnx_import
