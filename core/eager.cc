// eager.cc: see eager.hpp.
#include "eager.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "context.hpp"
#include "log.hpp"
#include "plugin_call.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace dlrt::core {

Eager::Eager(Context& context) : context_(context) {}

Eager::~Eager() {
  std::lock_guard<std::mutex> lock(run_mutex_);
  for (auto& [physical, st] : states_) {
    st.cache.reset();  // kernels and workspaces
    if (st.stream != nullptr) {
      dlrt_stream* stream = st.stream;
      plugin_call_noexcept([&] { st.api->stream_destroy(stream); });
    }
  }
  states_.clear();
}

// ---- memory -------------------------------------------------------------------------------

Buffer Eager::allocate(size_t device, size_t bytes) {
  Buffer buffer = context_.arena(device).allocate(bytes, "a tensor");
  ++live_tensors_;
  return buffer;
}

void Eager::release(Buffer& buffer) noexcept {
  if (buffer.empty()) return;
  buffer.reset();
  --live_tensors_;
}

uint64_t Eager::bytes_in_use(size_t device) const { return context_.arena(device).stats().in_use; }

size_t Eager::live_tensors() const { return live_tensors_.load(); }

// ---- runs ---------------------------------------------------------------------------------

Eager::DeviceState& Eager::state_of(size_t device) {
  const size_t physical = context_.registry().devices()[device].physical;
  auto it = states_.find(physical);
  if (it != states_.end()) return it->second;
  auto [api, handle] = context_.device_handle(device);
  DeviceState st;
  st.api = api;
  plugin_call(fmt::format("{}: stream_create for eager ops", context_.device_name(device)),
              [&] { return api->stream_create(handle, &st.stream); });
  try {
    st.cache = std::make_unique<KernelCache>(api, handle, context_.device_name(device));
    return states_.emplace(physical, std::move(st)).first->second;
  } catch (...) {
    plugin_call_noexcept([&] { api->stream_destroy(st.stream); });
    throw;
  }
}

void Eager::run(const ops::OpInstance& instance, size_t device,
                const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  DeviceState& st = state_of(device);
  const CachedKernel& k = st.cache->get(instance.desc());
  dlrt_kernel_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = inputs.size();
  args.inputs = inputs.empty() ? nullptr : inputs.data();
  args.num_outputs = outputs.size();
  args.outputs = outputs.empty() ? nullptr : outputs.data();
  args.workspace = k.workspace;
  args.workspace_bytes = k.workspace_bytes;
  args.rng_offset = rng_offset_++;
  const std::string where = fmt::format("{} on {}", instance.name(), context_.device_name(device));
  try {
    plugin_call(where + ": kernel_run",
                [&] { return st.api->kernel_run(k.kernel, st.stream, &args); });
  } catch (...) {
    // Let whatever was enqueued finish before the caller frees the buffers it used.
    plugin_call_noexcept([&] { dlrt_status_free(st.api->stream_synchronize(st.stream)); });
    throw;
  }
  plugin_call(where + ": stream_synchronize",
              [&] { return st.api->stream_synchronize(st.stream); });
}

size_t Eager::kernels_created(size_t device) const {
  context_.check_device(device);
  std::lock_guard<std::mutex> lock(run_mutex_);
  auto it = states_.find(context_.registry().devices()[device].physical);
  return it == states_.end() ? 0 : it->second.cache->created();
}

size_t Eager::kernels_cached(size_t device) const {
  context_.check_device(device);
  std::lock_guard<std::mutex> lock(run_mutex_);
  auto it = states_.find(context_.registry().devices()[device].physical);
  return it == states_.end() ? 0 : it->second.cache->size();
}

uint64_t Eager::runs() const {
  std::lock_guard<std::mutex> lock(run_mutex_);
  return rng_offset_;
}

// ---- the C API's operations ---------------------------------------------------------------

namespace {

const char* op_or_fail(const char* op) {
  if (op == nullptr)
    fail(DLRT_INVALID_ARGUMENT, "op is NULL; expected an op name such as \"relu\"");
  return op;
}

std::string names_of(const std::vector<ops::OutputSpec>& outs) {
  std::string s;
  for (size_t i = 0; i < outs.size(); ++i) s += (i ? ", " : "") + outs[i].name;
  return s;
}

}  // namespace

std::vector<ops::TensorType> input_types_from_c(const char* op,
                                                const dlrt_tensor_desc* const* inputs,
                                                size_t num_inputs) {
  op_or_fail(op);
  if (num_inputs > 0 && inputs == nullptr)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: num_inputs is {} but inputs is NULL", op, num_inputs));
  std::vector<ops::TensorType> types;
  for (size_t i = 0; i < num_inputs; ++i) {
    const std::string what = fmt::format("input {}", i);
    if (inputs[i] == nullptr) fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} is NULL", op, what));
    ops::Result<ops::TensorType> t = ops::tensor_type_from_c(op, what, *inputs[i]);
    if (!t.ok()) fail(t.status());
    if (DLRT_HAS_FIELD(dlrt_tensor_desc, layout, inputs[i]->struct_size) &&
        inputs[i]->layout != DLRT_LAYOUT_DENSE)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} has layout {}; eager ops take dense "
                                              "tensors (DLRT_LAYOUT_DENSE)",
                                              op, what, inputs[i]->layout));
    types.push_back(std::move(*t));
  }
  return types;
}

ops::OpInstance instantiate_from_c(const char* op, const std::vector<ops::TensorType>& inputs,
                                   const dlrt_attr* const* attrs, size_t num_attrs) {
  op_or_fail(op);
  if (num_attrs > 0 && attrs == nullptr)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: num_attrs is {} but attrs is NULL", op, num_attrs));
  ops::AttrMap map;
  for (size_t k = 0; k < num_attrs; ++k) {
    if (attrs[k] == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: attribute {} is NULL", op, k));
    ops::Result<ops::AttrValue> v = ops::attr_from_c(op, *attrs[k]);
    if (!v.ok()) fail(v.status());
    if (!map.emplace(attrs[k]->name, std::move(*v)).second)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: attribute '{}' is given twice", op, attrs[k]->name));
  }
  ops::Result<ops::OpInstance> inst = ops::instantiate(op, inputs, map);
  if (!inst.ok()) fail(inst.status());
  return std::move(*inst);
}

void check_supported(Context& context, const ops::OpInstance& instance, size_t device) {
  context.check_device(device);
  const Plugin& plugin = context.plugin_of(device);
  const int32_t ordinal = context.desc_of(device).ordinal;
  plugin_call(fmt::format("{} on {}", instance.name(), context.device_name(device)), [&] {
    return plugin.api().op_supported(plugin.instance(), ordinal, &instance.desc(), nullptr);
  });
}

void run_op(Context& context, const char* op, size_t device, const dlrt_tensor* const* inputs,
            size_t num_inputs, const dlrt_attr* const* attrs, size_t num_attrs,
            dlrt_tensor** outputs, size_t num_outputs) {
  op_or_fail(op);
  if (num_inputs > 0 && inputs == nullptr)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: num_inputs is {} but inputs is NULL", op, num_inputs));
  if (num_outputs > 0 && outputs == nullptr)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: num_outputs is {} but outputs is NULL", op, num_outputs));
  context.check_device(device);

  // 1. The op on the inputs' types.
  std::vector<ops::TensorType> types;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: input {} is NULL", op, i));
    if (&inputs[i]->context() != &context)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: input {} belongs to another context", op, i));
    types.push_back(inputs[i]->type());
  }
  const ops::OpInstance inst = instantiate_from_c(op, types, attrs, num_attrs);
  const ops::OpDef& def = inst.def();
  if (num_outputs != inst.outputs().size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: the op has {} output{} ({}), but num_outputs is {}", op,
                     inst.outputs().size(), inst.outputs().size() == 1 ? "" : "s",
                     names_of(def.outputs), num_outputs));

  // 2. Placement and the caller's outputs.
  const std::string& dev_name = context.device_name(device);
  for (size_t i = 0; i < num_inputs; ++i)
    if (inputs[i]->device() != device)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: input {} ({}) is on device {}, but the op runs on {}; eager ops "
                       "take every operand on their own device (copy it there first)",
                       op, i, def.input_spec(i).name, context.device_name(inputs[i]->device()),
                       dev_name));
  for (size_t o = 0; o < num_outputs; ++o) {
    const dlrt_tensor* out = outputs[o];
    if (out == nullptr) continue;
    const std::string label = fmt::format("output {} ({})", o, def.output_spec(o).name);
    if (&out->context() != &context)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} belongs to another context", op, label));
    if (out->device() != device)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} is on device {}, but the op runs on {}", op,
                                              label, context.device_name(out->device()), dev_name));
    if (out->type() != inst.output(static_cast<int>(o)))
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} is {}, expected {} (the inferred output)", op,
                                              label, ops::to_string(out->type()),
                                              ops::to_string(inst.output(static_cast<int>(o)))));
    for (size_t p = 0; p < o; ++p)
      if (outputs[p] == out)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{}: {} is the same tensor as output {}", op, label, p));
    for (size_t i = 0; i < num_inputs; ++i) {
      if (inputs[i] != out) continue;
      bool allowed = false;
      for (const ops::InPlace& ip : def.in_place)
        allowed |= ip.output == static_cast<int>(o) && ip.input == static_cast<int>(i);
      if (!allowed)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{}: {} is the same tensor as input {} ({}), and the op does not "
                         "update that input in place (see docs/ops.md)",
                         op, label, i, def.input_spec(i).name));
    }
  }

  // 3. The device's say.
  check_supported(context, inst, device);

  // 4-5. Outputs, kernel, run. `created` frees what this call made if anything throws.
  std::vector<std::unique_ptr<dlrt_tensor>> created(num_outputs);
  std::vector<void*> out_ptrs(num_outputs);
  for (size_t o = 0; o < num_outputs; ++o) {
    if (outputs[o] == nullptr)
      created[o] = std::make_unique<dlrt_tensor>(context, device, inst.output(static_cast<int>(o)));
    out_ptrs[o] = outputs[o] != nullptr ? outputs[o]->data() : created[o]->data();
  }
  std::vector<const void*> in_ptrs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) in_ptrs[i] = inputs[i]->data();
  context.eager().run(inst, device, in_ptrs, out_ptrs);
  for (size_t o = 0; o < num_outputs; ++o)
    if (created[o]) outputs[o] = created[o].release();
}

}  // namespace dlrt::core
