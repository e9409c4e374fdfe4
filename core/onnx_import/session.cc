// session.cc: Session (session.hpp).
#include "onnx_import/session.hpp"

#include <fmt/format.h>

#include "onnx_import/host_tensor.hpp"
#include "status.hpp"

namespace dlrt::onnx_import {

namespace {
// The largest input that may be a value input (its contents key a specialisation).

// Integers (shapes, sizes, K), bool (Dropout's training_mode) and f32/f64 (Resize's scales,
// Clip's bounds, Pad's value): every dtype the host reads exactly. f16/bf16 are left out:
// HostTensor does not fold them.
bool can_be_value(dlrt_dtype d) {
  return d == DLRT_I32 || d == DLRT_I64 || d == DLRT_I8 || d == DLRT_U8 || d == DLRT_I16 ||
         d == DLRT_U16 || d == DLRT_U32 || d == DLRT_U64 || d == DLRT_BOOL || d == DLRT_F32 ||
         d == DLRT_F64;
}
}  // namespace

void Session::mark_value_input(const NeedsInputValue& n) {
  const ModelIo& io = model_.inputs.at(n.input);
  if (!can_be_value(io.dtype))
    fail(DLRT_UNIMPLEMENTED, n.message + fmt::format(" (graph input '{}' is {}, which dlrt does "
                                                     "not read on the host)",
                                                     io.name, dlrt_dtype_name(io.dtype)));
  if (value_inputs_[n.input])  // already a value: the import asked again (cannot happen)
    fail(DLRT_INTERNAL, n.message);
  value_inputs_[n.input] = true;
}

Session::Session(dlrt_context* context, OnnxModel model, SessionOptions options)
    : context_(context), model_(std::move(model)), options_(std::move(options)) {
  if (options_.max_cached_shapes == 0) options_.max_cached_shapes = 8;
  value_inputs_.assign(model_.inputs.size(), false);
  std::vector<std::vector<int64_t>> dims;
  for (const ModelIo& io : model_.inputs) {
    if (!io.has_shape) {
      dims.clear();  // shapeless inputs: nothing to import until the first run
      break;
    }
    std::vector<int64_t> d;
    for (int64_t e : io.dims) d.push_back(e < 0 ? 1 : e);
    dims.push_back(d);
  }
  if (dims.size() != model_.inputs.size()) return;
  try {
    last_ = &specialise(dims, InputValues(model_.inputs.size()));
  } catch (const NeedsInputValue& n) {
    // An input whose value shapes the graph: known at the first run, not before. The rest of
    // the model is checked then.
    mark_value_input(n);
  }
}

namespace {
bool same_values(const InputValues& a, const InputValues& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].has_value() != b[i].has_value()) return false;
    if (a[i] && (a[i]->dims != b[i]->dims || a[i]->bytes != b[i]->bytes)) return false;
  }
  return true;
}
}  // namespace

Session::Specialisation& Session::specialise(const std::vector<std::vector<int64_t>>& dims,
                                             const InputValues& values) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->dims == dims && same_values(it->values, values)) {
      cache_.splice(cache_.begin(), cache_, it);  // most recent first
      return cache_.front();
    }
  }
  Specialisation s;
  s.dims = dims;
  s.values = values;
  dlrt_graph* raw = nullptr;
  if (const core::StatusValue st = core::take_status(dlrt_graph_create(context_, &raw)); !st.ok())
    fail(st);
  s.graph = std::make_unique<dlrt::Graph>(raw);
  ImportOptions io;
  io.device = options_.device;
  io.prefer_nhwc = options_.optimize;
  ImportedGraph ig;
  try {
    ig = import_model(model_, *s.graph, dims, io, values);
    s.fed = ig.fed;
    dlrt::CompileOptions co;
    if (options_.soft_placement >= 0) co.soft_placement = options_.soft_placement != 0;
    if (options_.log_device_placement >= 0)
      co.log_device_placement = options_.log_device_placement != 0;
    if (options_.device.empty() || options_.device == "auto") co.auto_device = true;
    // optimize 0: each node as it is, so no graph passes either (core/passes).
    if (!options_.optimize) co.graph_passes = "none";
    s.exe = s.graph->compile(ig.inputs, ig.outputs, co);
  } catch (const dlrt::Error& e) {
    fail(e.code(), e.message());
  }
  if (cache_.size() >= options_.max_cached_shapes) {
    if (last_ == &cache_.back()) last_ = nullptr;
    cache_.pop_back();
  }
  cache_.push_front(std::move(s));
  return cache_.front();
}

void Session::run(const dlrt_tensor* const* inputs, size_t num_inputs, dlrt_tensor** outputs,
                  size_t num_outputs) {
  if (num_inputs != model_.inputs.size() || num_outputs != model_.outputs.size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("the model has {} inputs and {} outputs; the run gave {} and {}",
                     model_.inputs.size(), model_.outputs.size(), num_inputs, num_outputs));
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < num_inputs; ++i) {
    const ModelIo& io = model_.inputs[i];
    if (inputs[i] == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("input {} ('{}') is NULL", i, io.name));
    dlrt_tensor_desc d{};
    d.struct_size = DLRT_STRUCT_SIZE(dlrt_tensor_desc);
    if (const core::StatusValue st = core::take_status(dlrt_tensor_get_desc(inputs[i], &d));
        !st.ok())
      fail(st);
    if (d.dtype != io.dtype)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("input '{}' is {}; the model wants {}", io.name,
                                              dlrt_dtype_name(d.dtype), dlrt_dtype_name(io.dtype)));
    dims.emplace_back(d.dims, d.dims + d.rank);
  }
  // Value inputs: their contents are part of the key (read from the device: they are small).
  auto read_values = [&] {
    InputValues values(num_inputs);
    for (size_t i = 0; i < num_inputs; ++i) {
      if (!value_inputs_[i]) continue;
      HostTensor t;
      t.dtype = model_.inputs[i].dtype;
      t.dims = dims[i];
      const int64_t n = checked_element_count(
          t.dims, kMaxValueInputElements,
          fmt::format("input '{}' (its value shapes the graph)", model_.inputs[i].name));
      t.bytes.resize(static_cast<size_t>(n) * dlrt_dtype_size(t.dtype));
      if (const core::StatusValue st =
              core::take_status(dlrt_tensor_read(inputs[i], t.bytes.data(), t.bytes.size()));
          !st.ok())
        fail(st);
      values[i] = std::move(t);
    }
    return values;
  };
  Specialisation* s = nullptr;
  for (size_t attempt = 0; s == nullptr; ++attempt) {
    try {
      s = &specialise(dims, read_values());  // checks dims against the model
    } catch (const NeedsInputValue& n) {
      if (attempt > model_.inputs.size()) fail(DLRT_INTERNAL, n.message);
      mark_value_input(n);
    }
  }
  last_ = s;
  std::vector<const dlrt_tensor*> fed;
  for (size_t i : s->fed) fed.push_back(inputs[i]);
  const core::StatusValue ran = core::take_status(dlrt_executable_run(
      s->exe.get(), fed.empty() ? nullptr : fed.data(), fed.size(), outputs, num_outputs));
  if (!ran.ok()) fail(ran);
}

}  // namespace dlrt::onnx_import
