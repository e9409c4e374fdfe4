// c_api_onnx.cc: the exported dlrt_session_* functions over Session.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <memory>

#include "graph/graph_handle.hpp"

#include "c_api_util.hpp"
#include "onnx_import/export.hpp"
#include "onnx_import/session.hpp"

#include <fstream>

struct dlrt_session {
  std::unique_ptr<dlrt::onnx_import::Session> session;
};

namespace {
using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::onnx_import::ModelIo;

dlrt::onnx_import::SessionOptions options_of(const dlrt_session_options* o) {
  dlrt::onnx_import::SessionOptions s;
  if (o == nullptr) return s;
  if (o->struct_size < sizeof(size_t))
    fail(DLRT_INVALID_ARGUMENT, "options->struct_size is not set; use dlrt_session_options_init");
  dlrt_session_options full;
  dlrt_session_options_init(&full);
  std::memcpy(&full, o, std::min(o->struct_size, sizeof(full)));
  if (full.device != nullptr) s.device = full.device;
  s.soft_placement = full.soft_placement;
  s.log_device_placement = full.log_device_placement;
  if (full.max_cached_shapes > 0) s.max_cached_shapes = static_cast<size_t>(full.max_cached_shapes);
  s.optimize = full.optimize != 0;
  return s;
}

void io_out(const ModelIo& io, dlrt_session_io* out) {
  dlrt_session_io full{};
  full.struct_size = sizeof(full);
  full.name = io.name.c_str();
  full.dtype = io.dtype;
  full.rank = static_cast<int32_t>(io.dims.size());
  full.has_shape = io.has_shape ? 1 : 0;
  for (size_t k = 0; k < io.dims.size(); ++k) {
    full.dims[k] = io.dims[k];
    full.dim_names[k] = io.dim_names[k].c_str();
  }
  dlrt::core::write_out(out, full, "out");
}

template <typename Load>
dlrt_status* create(dlrt_context* context, const dlrt_session_options* options,
                    dlrt_session** out, Load load) {
  return guarded([&] {
    require(context, "context");
    require(out, "out_session");
    *out = nullptr;
    auto s = std::make_unique<dlrt_session>();
    s->session = std::make_unique<dlrt::onnx_import::Session>(context, load(), options_of(options));
    *out = s.release();
  });
}
}  // namespace

extern "C" {

DLRT_API void dlrt_session_options_init(dlrt_session_options* options) {
  if (options == nullptr) return;
  *options = dlrt_session_options{};
  options->struct_size = sizeof(*options);
  options->device = nullptr;
  options->soft_placement = -1;
  options->log_device_placement = -1;
  options->max_cached_shapes = 0;
  options->optimize = -1;
}

DLRT_API dlrt_status* dlrt_session_create_from_onnx(dlrt_context* context, const char* path,
                                                    const dlrt_session_options* options,
                                                    dlrt_session** out_session) {
  return create(context, options, out_session, [&] {
    return dlrt::onnx_import::load_model_file(require(path, "path"));
  });
}

DLRT_API dlrt_status* dlrt_session_create_from_onnx_bytes(dlrt_context* context, const void* data,
                                                          size_t size,
                                                          const dlrt_session_options* options,
                                                          dlrt_session** out_session) {
  return create(context, options, out_session, [&] {
    return dlrt::onnx_import::load_model_bytes(require(data, "data"), size);
  });
}

DLRT_API void dlrt_session_destroy(dlrt_session* session) { delete session; }

DLRT_API size_t dlrt_session_input_count(const dlrt_session* session) {
  return session == nullptr ? 0 : session->session->model().inputs.size();
}
DLRT_API size_t dlrt_session_output_count(const dlrt_session* session) {
  return session == nullptr ? 0 : session->session->model().outputs.size();
}

DLRT_API dlrt_status* dlrt_session_input(const dlrt_session* session, size_t index,
                                         dlrt_session_io* out) {
  return guarded([&] {
    const auto& v = require(session, "session")->session->model().inputs;
    if (index >= v.size())
      fail(DLRT_OUT_OF_RANGE, fmt::format("input {} of a model with {} inputs", index, v.size()));
    io_out(v[index], require(out, "out"));
  });
}

DLRT_API dlrt_status* dlrt_session_output(const dlrt_session* session, size_t index,
                                          dlrt_session_io* out) {
  return guarded([&] {
    const auto& v = require(session, "session")->session->model().outputs;
    if (index >= v.size())
      fail(DLRT_OUT_OF_RANGE, fmt::format("output {} of a model with {} outputs", index, v.size()));
    io_out(v[index], require(out, "out"));
  });
}

DLRT_API dlrt_status* dlrt_session_run(dlrt_session* session, const dlrt_tensor* const* inputs,
                                       size_t num_inputs, dlrt_tensor** outputs, size_t num_outputs) {
  return guarded([&] {
    require(session, "session");
    if (num_inputs > 0) require(inputs, "inputs");
    if (num_outputs > 0) require(outputs, "outputs");
    session->session->run(inputs, num_inputs, outputs, num_outputs);
  });
}

DLRT_API dlrt_executable* dlrt_session_executable(dlrt_session* session) {
  return session == nullptr ? nullptr : session->session->last_executable();
}

DLRT_API dlrt_status* dlrt_graph_export_onnx(dlrt_graph* graph, const dlrt_value* inputs,
                                             const char* const* input_names, size_t num_inputs,
                                             const dlrt_value* outputs,
                                             const char* const* output_names, size_t num_outputs,
                                             int32_t symbolic_batch, const char* path) {
  return guarded([&] {
    require(graph, "graph");
    require(path, "path");
    if (num_inputs > 0) {
      require(inputs, "inputs");
      require(input_names, "input_names");
    }
    if (num_outputs == 0) fail(DLRT_INVALID_ARGUMENT, "dlrt_graph_export_onnx: no outputs");
    require(outputs, "outputs");
    require(output_names, "output_names");
    const size_t nodes = graph->nodes().size();
    auto ref = [&](dlrt_value v, const char* what) {
      const dlrt::core::ValueRef r = dlrt::core::from_c(v);
      if (r.node >= nodes || r.output >= graph->node(r.node).outputs.size())
        fail(DLRT_INVALID_ARGUMENT, fmt::format("dlrt_graph_export_onnx: {} is not a value of this graph", what));
      return r;
    };
    std::vector<dlrt::onnx_import::ExportIo> in, out;
    for (size_t i = 0; i < num_inputs; ++i)
      in.push_back({ref(inputs[i], "an input"), require(input_names[i], "input_names[i]")});
    for (size_t i = 0; i < num_outputs; ++i)
      out.push_back({ref(outputs[i], "an output"), require(output_names[i], "output_names[i]")});
    const std::string bytes = dlrt::onnx_import::export_onnx_bytes(*graph, in, out, symbolic_batch != 0);
    std::ofstream f(path, std::ios::binary);
    if (!f) fail(DLRT_PERMISSION_DENIED, fmt::format("dlrt_graph_export_onnx: cannot write {}", path));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) fail(DLRT_DATA_LOSS, fmt::format("dlrt_graph_export_onnx: writing {} failed", path));
  });
}

}  // extern "C"
