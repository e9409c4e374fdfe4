// dlrt/context.hpp: Context, the owner of the loaded plugins and the device registry
// (dlrt_context). Move-only; every Tensor, Graph and Strategy made from it must be destroyed
// before it. Queries are thread-safe, as in the C API.
//
// Context::run_op returns Tensors, so its two eager-op methods are defined in tensor.hpp,
// after Tensor; this header includes tensor.hpp at its end, so that including either one
// gives both classes complete.
#ifndef DLRT_CONTEXT_HPP_
#define DLRT_CONTEXT_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlrt/context_info.hpp"
#include "dlrt/context_options.hpp"
#include "dlrt/error.hpp"
#include "dlrt/op_attr.hpp"
#include "dlrt/op_info.hpp"
#include "dlrt/tensor_desc.hpp"

namespace dlrt {

class Tensor;  // tensor.hpp

class Context {
 public:
  // Loads plugins as `options` say. A plugin that fails to load does not make this throw
  // (see plugins()); malformed options do (Error with DLRT_INVALID_ARGUMENT).
  explicit Context(const ContextOptions& options = ContextOptions()) {
    ContextOptions::CView view;
    options.to_c(&view);
    dlrt_context* raw = nullptr;
    check(dlrt_context_create(&view.options, &raw));
    handle_.reset(raw);
  }
  // Adopts a context made through the C API; it is destroyed with this object.
  explicit Context(dlrt_context* adopted) noexcept : handle_(adopted) {}

  Context(Context&&) noexcept = default;
  Context& operator=(Context&&) noexcept = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The C handle, still owned by this object; NULL after a move.
  dlrt_context* get() const noexcept { return handle_.get(); }
  // Gives up ownership: the caller now calls dlrt_context_destroy.
  dlrt_context* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // ---- plugins ----
  size_t plugin_count() const { return dlrt_context_plugin_count(get()); }
  PluginInfo plugin(size_t index) const {
    dlrt_plugin_info c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_plugin_info);
    check(dlrt_context_plugin_info(get(), index, &c));
    return PluginInfo::from_c(c);
  }
  // Every plugin file found, in search order, whatever its state.
  std::vector<PluginInfo> plugins() const {
    std::vector<PluginInfo> out;
    const size_t n = plugin_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(plugin(i));
    return out;
  }

  // ---- devices ----
  size_t device_count() const { return dlrt_context_device_count(get()); }
  DeviceInfo device(size_t index) const {
    dlrt_device_info c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_device_info);
    check(dlrt_context_device_info(get(), index, &c));
    return DeviceInfo::from_c(c);
  }
  // Every visible device, in registry order (index i is device(i)).
  std::vector<DeviceInfo> devices() const {
    std::vector<DeviceInfo> out;
    const size_t n = device_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(device(i));
    return out;
  }
  // The index of the device matching `spec` ("GPU:0", "cpu"); Error(DLRT_NOT_FOUND) lists
  // the devices there are.
  size_t find_device(const std::string& spec) const {
    size_t index = 0;
    check(dlrt_context_find_device(get(), spec.c_str(), &index));
    return index;
  }
  // Free bytes of device `index`'s physical device, asked of its plugin now.
  uint64_t device_memory_free(size_t index) const {
    uint64_t free_bytes = 0;
    check(dlrt_context_device_memory_free(get(), index, &free_bytes));
    return free_bytes;
  }
  // The memory arena of device `index` (every byte the context holds there).
  MemoryStats memory_stats(size_t index) const {
    dlrt_memory_stats c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_memory_stats);
    check(dlrt_context_memory_stats(get(), index, &c));
    return {c.in_use, c.peak, c.reserved, c.limit, c.num_allocs};
  }

  // ---- eager ops (dlrt_op_*; defined after Tensor) ----
  // Runs `op` once on device `device` and returns its outputs, new tensors on that device:
  //   auto y = ctx.run_op("conv2d", cpu, {x, w}, {{"padding", "SAME"}})[0];
  // Two C calls: dlrt_op_infer (for the output count), then dlrt_op_run.
  std::vector<Tensor> run_op(const std::string& op, size_t device,
                             const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                             const OpAttrs& attrs = {}) const;
  // Runs `op` writing into `outputs` (one per output of the op, each of the inferred desc;
  // an optimizer update may name its own inputs). One C call.
  void run_op_into(const std::string& op, size_t device,
                   const std::vector<std::reference_wrapper<const Tensor>>& inputs,
                   const std::vector<std::reference_wrapper<Tensor>>& outputs,
                   const OpAttrs& attrs = {}) const;
  // Can `device` run `op` on inputs of these descs? A "no" is an answer, not an exception;
  // a malformed call (unknown op, bad shapes, bad device index) throws Error.
  OpSupport op_supported(const std::string& op, size_t device,
                         const std::vector<dlrt_tensor_desc>& inputs,
                         const OpAttrs& attrs = {}) const {
    std::vector<const dlrt_tensor_desc*> ptrs;
    for (const dlrt_tensor_desc& d : inputs) ptrs.push_back(&d);
    detail::CAttrs c(attrs);
    dlrt_status* status =
        dlrt_op_supported(get(), op.c_str(), device, ptrs.empty() ? nullptr : ptrs.data(),
                          ptrs.size(), c.data(), c.size());
    // UNIMPLEMENTED is the device's "no"; any other failure is the caller's error.
    if (status != nullptr && dlrt_status_code(status) != DLRT_UNIMPLEMENTED) check(status);
    return OpSupport::from_status(status);
  }
  // The same on the op's example operands (what `dlprobe --ops` shows). Never throws for a
  // "no"; the reason says why (NOT_FOUND for an unknown op, OUT_OF_RANGE for a bad device).
  OpSupport op_probe(const std::string& op, size_t device) const {
    return OpSupport::from_status(dlrt_op_probe(get(), op.c_str(), device));
  }
  // Output descriptors of `op` for inputs of these descs, without running anything.
  std::vector<dlrt_tensor_desc> op_infer(const std::string& op,
                                         const std::vector<dlrt_tensor_desc>& inputs,
                                         const OpAttrs& attrs = {}) const {
    std::vector<const dlrt_tensor_desc*> ptrs;
    for (const dlrt_tensor_desc& d : inputs) ptrs.push_back(&d);
    detail::CAttrs c(attrs);
    std::vector<dlrt_tensor_desc> out(8, detail::dense_desc(DLRT_DTYPE_INVALID, {}));
    size_t n = 0;
    check(dlrt_op_infer(get(), op.c_str(), ptrs.empty() ? nullptr : ptrs.data(), ptrs.size(),
                        c.data(), c.size(), out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }

  // ---- settings ----
  size_t setting_count() const { return dlrt_context_setting_count(get()); }
  Setting setting(size_t index) const {
    dlrt_setting c{};
    c.struct_size = DLRT_STRUCT_SIZE(dlrt_setting);
    check(dlrt_context_setting(get(), index, &c));
    return Setting::from_c(c);
  }
  // Every setting with its effective value and source.
  std::vector<Setting> settings() const {
    std::vector<Setting> out;
    const size_t n = setting_count();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(setting(i));
    return out;
  }

 private:
  detail::Owner<dlrt_context> handle_;
};

}  // namespace dlrt

// Tensor and the definitions of Context::run_op / run_op_into (see the top comment).
#include "dlrt/tensor.hpp"  // IWYU pragma: export

#endif  // DLRT_CONTEXT_HPP_
