// kernel_cache.cc: see kernel_cache.hpp.
#include "kernel_cache.hpp"

#include <fmt/format.h>

#include <utility>

#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

void append_desc(std::string& key, const dlrt_tensor_desc* d) {
  if (d == nullptr) {
    key += "null;";
    return;
  }
  const int32_t layout =
      DLRT_HAS_FIELD(dlrt_tensor_desc, layout, d->struct_size) ? d->layout : DLRT_LAYOUT_DENSE;
  key += fmt::format("{}(", d->dtype);
  for (int32_t a = 0; a < d->rank && a < DLRT_MAX_RANK; ++a)
    key += fmt::format("{}{}", a == 0 ? "" : ",", d->dims[a]);
  key += fmt::format(")L{};", layout);
}

// "<len>:<bytes>" so that no string content can forge a delimiter.
void append_string(std::string& key, const char* s) {
  const std::string_view v = s != nullptr ? s : "";
  key += fmt::format("{}:", v.size());
  key += v;
}

void append_attr(std::string& key, const dlrt_attr* a) {
  if (a == nullptr) {
    key += "null;";
    return;
  }
  append_string(key, a->name);
  key += fmt::format("={}:", a->type);
  switch (a->type) {
    case DLRT_ATTR_INT:
    case DLRT_ATTR_BOOL:
    case DLRT_ATTR_DTYPE:
      key += fmt::format("{}", a->i);
      break;
    case DLRT_ATTR_FLOAT:
      key += fmt::format("{}", a->f);
      break;  // shortest round-trip form
    case DLRT_ATTR_STRING:
      append_string(key, a->s);
      break;
    case DLRT_ATTR_INTS:
      for (size_t k = 0; k < a->count && a->ints != nullptr; ++k)
        key += fmt::format("{}{}", k == 0 ? "" : ",", a->ints[k]);
      break;
    case DLRT_ATTR_FLOATS:
      for (size_t k = 0; k < a->count && a->floats != nullptr; ++k)
        key += fmt::format("{}{}", k == 0 ? "" : ",", a->floats[k]);
      break;
    default:
      break;
  }
  key += ";";
}

}  // namespace

std::string kernel_key(const dlrt_op_desc& desc) {
  std::string key;
  append_string(key, desc.op);
  key += "|in:";
  for (size_t i = 0; i < desc.num_inputs; ++i) append_desc(key, desc.inputs[i]);
  key += "|out:";
  for (size_t o = 0; o < desc.num_outputs; ++o) append_desc(key, desc.outputs[o]);
  key += "|attrs:";
  for (size_t k = 0; k < desc.num_attrs; ++k) append_attr(key, desc.attrs[k]);
  // A kernel told an input is constant may keep state prepared from it (plugin.h).
  key += "|const:" + std::to_string(desc.constant_inputs);
  return key;
}

KernelCache::KernelCache(const dlrt_plugin_api* api, dlrt_device* device, std::string device_name)
    : api_(api), device_(device), device_name_(std::move(device_name)) {}

KernelCache::~KernelCache() {
  for (auto& [key, k] : kernels_) {
    plugin_call_noexcept([&] { api_->kernel_destroy(k.kernel); });
    if (k.workspace != nullptr) plugin_call_noexcept([&] { api_->mem_free(device_, k.workspace); });
  }
}

const CachedKernel& KernelCache::get(const dlrt_op_desc& desc) {
  std::string key = kernel_key(desc);
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return it->second;

  const std::string where = fmt::format("{} on {}", desc.op, device_name_);
  CachedKernel k;
  plugin_call(where + ": kernel_create",
              [&] { return api_->kernel_create(device_, &desc, &k.kernel, &k.workspace_bytes); });
  if (k.kernel == nullptr) {
    fail(DLRT_INTERNAL, where + ": kernel_create returned OK but no kernel");
  }
  if (k.workspace_bytes > 0) {
    try {
      plugin_call(fmt::format("{}: allocating the kernel's workspace of {} bytes", where,
                              k.workspace_bytes),
                  [&] { return api_->mem_alloc(device_, k.workspace_bytes, 64, &k.workspace); });
    } catch (...) {
      plugin_call_noexcept([&] { api_->kernel_destroy(k.kernel); });
      throw;
    }
  }
  try {
    const CachedKernel& cached = kernels_.emplace(std::move(key), k).first->second;
    ++created_;
    return cached;
  } catch (...) {  // out of host memory for the map node: release what the plugin made
    plugin_call_noexcept([&] { api_->kernel_destroy(k.kernel); });
    if (k.workspace != nullptr) plugin_call_noexcept([&] { api_->mem_free(device_, k.workspace); });
    throw;
  }
}

}  // namespace dlrt::core
