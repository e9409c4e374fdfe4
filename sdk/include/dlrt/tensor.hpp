// dlrt/tensor.hpp: Tensor, a buffer on one device of a context (dlrt_tensor). Move-only;
// destroy it (let it go out of scope) before its Context.
//
//   dlrt::Tensor x = dlrt::Tensor::create(ctx, cpu, DLRT_F32, {2, 3});
//   x.write(std::vector<float>{1, -2, 3, -4, 5, -6});
//   std::vector<float> y = ctx.run_op("relu", cpu, {x})[0].read<float>();
//
// Also defines Context::run_op and Context::run_op_into, which need Tensor complete.
#ifndef DLRT_TENSOR_HPP_
#define DLRT_TENSOR_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlrt/context.hpp"
#include "dlrt/error.hpp"
#include "dlrt/op_attr.hpp"
#include "dlrt/tensor_desc.hpp"

namespace dlrt {

class Tensor {
 public:
  Tensor() = default;
  // Adopts a tensor made through the C API; it is destroyed with this object.
  explicit Tensor(dlrt_tensor* adopted) noexcept : handle_(adopted) {}

  // An uninitialised dense tensor on visible device `device`.
  static Tensor create(const Context& context, size_t device, dlrt_dtype dtype,
                       const std::vector<int64_t>& dims) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    dlrt_tensor* raw = nullptr;
    check(dlrt_tensor_create(context.get(), device, &d, &raw));
    return Tensor(raw);
  }

  // A tensor over caller memory `data` (dims/dtype as create's, aligned to the element size)
  // on a device whose memory is the host's (attribute "host_memory"; dlrt_tensor_wrap_host):
  // nothing is copied; `release(release_arg)` runs when the tensor is destroyed. Throws
  // FAILED_PRECONDITION on other devices (create() and write() the bytes there instead).
  static Tensor wrap_host(const Context& context, size_t device, dlrt_dtype dtype,
                          const std::vector<int64_t>& dims, void* data,
                          void (*release)(void*) = nullptr, void* release_arg = nullptr) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    dlrt_tensor* raw = nullptr;
    check(dlrt_tensor_wrap_host(context.get(), device, &d, data, release, release_arg, &raw));
    return Tensor(raw);
  }

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  dlrt_tensor* get() const noexcept { return handle_.get(); }
  dlrt_tensor* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  dlrt_tensor_desc desc() const {
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    check(dlrt_tensor_get_desc(get(), &d));
    return d;
  }
  dlrt_dtype dtype() const { return static_cast<dlrt_dtype>(desc().dtype); }
  std::vector<int64_t> dims() const {
    const dlrt_tensor_desc d = desc();
    return std::vector<int64_t>(d.dims, d.dims + d.rank);
  }
  size_t device() const noexcept { return dlrt_tensor_device_index(get()); }
  size_t byte_size() const noexcept { return dlrt_tensor_byte_size(get()); }

  // Copies all of `values` in (their count must match the tensor's elements). T is the
  // tensor's element type (float for f32, int32_t for i32, ...).
  template <typename T>
  void write(const std::vector<T>& values) {
    check(dlrt_tensor_write(get(), values.data(), values.size() * sizeof(T)));
  }
  // The bytes in place (byte_size() of them, valid while the tensor lives) on a device whose
  // memory is the host's (dlrt_tensor_host_data); FAILED_PRECONDITION elsewhere: read() there.
  void* host_data() const {
    void* p = nullptr;
    check(dlrt_tensor_host_data(get(), &p));
    return p;
  }
  // The tensor's elements as T (byte_size() must be a multiple of sizeof(T)).
  template <typename T>
  std::vector<T> read() const {
    std::vector<T> values(byte_size() / sizeof(T));
    check(dlrt_tensor_read(get(), values.data(), values.size() * sizeof(T)));
    return values;
  }

 private:
  detail::Owner<dlrt_tensor> handle_;
};

inline std::vector<Tensor> Context::run_op(
    const std::string& op, size_t device,
    const std::vector<std::reference_wrapper<const Tensor>>& inputs, const OpAttrs& attrs) const {
  std::vector<const dlrt_tensor*> in;
  std::vector<dlrt_tensor_desc> descs;
  for (const Tensor& t : inputs) {
    in.push_back(t.get());
    descs.push_back(t.desc());
  }
  const size_t n = op_infer(op, descs, attrs).size();
  detail::CAttrs c(attrs);
  std::vector<dlrt_tensor*> out(n, nullptr);
  check(dlrt_op_run(get(), op.c_str(), device, in.empty() ? nullptr : in.data(), in.size(),
                    c.data(), c.size(), out.empty() ? nullptr : out.data(), out.size()));
  std::vector<Tensor> result;
  result.reserve(n);
  for (dlrt_tensor* t : out) result.emplace_back(t);
  return result;
}

inline void Context::run_op_into(const std::string& op, size_t device,
                                 const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                                 const std::vector<std::reference_wrapper<Tensor>>& outputs,
                                 const OpAttrs& attrs) const {
  std::vector<const dlrt_tensor*> in;
  for (const Tensor& t : inputs) in.push_back(t.get());
  std::vector<dlrt_tensor*> out;
  for (Tensor& t : outputs) out.push_back(t.get());
  detail::CAttrs c(attrs);
  check(dlrt_op_run(get(), op.c_str(), device, in.empty() ? nullptr : in.data(), in.size(),
                    c.data(), c.size(), out.empty() ? nullptr : out.data(), out.size()));
}

}  // namespace dlrt

#endif  // DLRT_TENSOR_HPP_
