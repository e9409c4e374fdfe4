// c_api_graph.cc: the graph builder functions of dlrt.h (dlrt_graph_*). Compiling and running
// are the executor's (core/exec), gradients autodiff's.
//
// Each function is a thin shell, as in c_api.cc: NULL checks, C structs read through the ABI
// rules (struct_size), one call into core::Graph, and every exception turned into a
// dlrt_status* so nothing throws across the boundary. Out-parameters are reset on entry
// (DLRT_INVALID_VALUE / NULL / 0), and the graph is unchanged when a call fails.
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "context.hpp"
#include "graph/graph.hpp"
#include "graph/graph_handle.hpp"
#include "graph/variable_store.hpp"
#include "ops/attrs.hpp"
#include "ops/op_instance.hpp"
#include "ops/op_registry.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

using dlrt::core::fail;
using dlrt::core::Graph;
using dlrt::core::NodeKind;
using dlrt::core::ValueRef;

namespace {

template <typename Fn>
dlrt_status* guarded(Fn&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return dlrt::core::status_from_current_exception();
  }
}

template <typename T>
T* require(T* p, const char* fn, const char* what) {
  if (p == nullptr) fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {} is NULL", fn, what));
  return p;
}

// A caller's descriptor as a graph type: rank and dtype checked here (the graph checks dims),
// and the dense layout the graph stores everything in.
dlrt::ops::TensorType type_from_c(const char* fn, const dlrt_tensor_desc& desc) {
  dlrt::ops::Result<dlrt::ops::TensorType> t = dlrt::ops::tensor_type_from_c(fn, "desc", desc);
  if (!t.ok()) fail(t.status());
  if (DLRT_HAS_FIELD(dlrt_tensor_desc, layout, desc.struct_size) &&
      desc.layout != DLRT_LAYOUT_DENSE)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: desc has layout {}; graph values are dense (DLRT_LAYOUT_DENSE)", fn,
                     desc.layout));
  return *t;
}

// Attributes as the registry reads them; a NULL entry or a name given twice is an error.
dlrt::ops::AttrMap attrs_from_c(const std::string& who, const dlrt_attr* const* attrs,
                                size_t num_attrs) {
  if (num_attrs > 0 && attrs == nullptr)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: {} attribute(s) but a NULL array", who, num_attrs));
  dlrt::ops::AttrMap out;
  for (size_t i = 0; i < num_attrs; ++i) {
    if (attrs[i] == nullptr)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: attribute {} is NULL", who, i));
    dlrt::ops::Result<dlrt::ops::AttrValue> v = dlrt::ops::attr_from_c(who, *attrs[i]);
    if (!v.ok()) fail(v.status());
    if (!out.emplace(attrs[i]->name, std::move(*v)).second)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: attribute '{}' is given twice", who, attrs[i]->name));
  }
  return out;
}

// The variable node behind `value`, checked.
dlrt::core::NodeId variable_of(const Graph& g, dlrt_value value, const char* fn) {
  const ValueRef v = dlrt::core::from_c(value);
  g.type_of(v);  // INVALID_ARGUMENT for a value not of this graph
  const dlrt::core::Node& n = g.node(v.node);
  if (n.kind != NodeKind::kVariable)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: '{}' is not a variable", fn, n.name));
  return v.node;
}

// The variable's slot (placed and initialised on first use) and its plugin, with the byte
// count checked against the caller's.
dlrt::core::VariableSlot& slot_for_copy(Graph& g, dlrt_value value, size_t bytes, const char* fn) {
  const dlrt::core::NodeId id = variable_of(g, value, fn);
  dlrt::core::VariableSlot& slot = g.variables().ensure(id);
  if (bytes != slot.buffer.size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: {} bytes given, variable '{}' ({}) holds {} bytes", fn, bytes,
                     g.node(id).name, dlrt::ops::to_string(g.node(id).outputs[0]),
                     slot.buffer.size()));
  return slot;
}

// The message of a failed copy: "<fn> on <device>: <the plugin's message>".
std::string copy_what(Graph& g, const dlrt::core::VariableSlot& slot, const char* fn) {
  return fmt::format("{} on {}", fn, g.context().registry().devices()[slot.device].name);
}

}  // namespace

extern "C" {

DLRT_API dlrt_status* dlrt_graph_create(dlrt_context* context, dlrt_graph** out_graph) {
  return guarded([&] {
    require(out_graph, "dlrt_graph_create", "out_graph");
    *out_graph = nullptr;
    require(context, "dlrt_graph_create", "context");
    *out_graph = new dlrt_graph(*context);
  });
}

DLRT_API void dlrt_graph_destroy(dlrt_graph* graph) {
  try {
    delete graph;
  } catch (...) {  // destructors do not throw; this is the belt to their braces
  }
}

DLRT_API dlrt_status* dlrt_graph_placeholder(dlrt_graph* graph, const char* name,
                                             const dlrt_tensor_desc* desc, dlrt_value* out_value) {
  return guarded([&] {
    const char* fn = "dlrt_graph_placeholder";
    require(out_value, fn, "out_value");
    *out_value = DLRT_INVALID_VALUE;
    require(graph, fn, "graph");
    require(name, fn, "name");
    require(desc, fn, "desc");
    *out_value = dlrt::core::to_c(graph->add_placeholder(name, type_from_c(fn, *desc)));
  });
}

DLRT_API dlrt_status* dlrt_graph_constant(dlrt_graph* graph, const char* name,
                                          const dlrt_tensor_desc* desc, const void* data,
                                          size_t bytes, dlrt_value* out_value) {
  return guarded([&] {
    const char* fn = "dlrt_graph_constant";
    require(out_value, fn, "out_value");
    *out_value = DLRT_INVALID_VALUE;
    require(graph, fn, "graph");
    require(name, fn, "name");
    require(desc, fn, "desc");
    require(data, fn, "data");
    const auto* p = static_cast<const uint8_t*>(data);
    *out_value = dlrt::core::to_c(
        graph->add_constant(name, type_from_c(fn, *desc), std::vector<uint8_t>(p, p + bytes)));
  });
}

DLRT_API dlrt_status* dlrt_graph_variable(dlrt_graph* graph, const char* name,
                                          const dlrt_tensor_desc* desc, const char* init_op,
                                          const dlrt_attr* const* init_attrs, size_t num_init_attrs,
                                          int32_t trainable, dlrt_value* out_value) {
  return guarded([&] {
    const char* fn = "dlrt_graph_variable";
    require(out_value, fn, "out_value");
    *out_value = DLRT_INVALID_VALUE;
    require(graph, fn, "graph");
    require(name, fn, "name");
    require(desc, fn, "desc");
    require(init_op, fn, "init_op");
    dlrt::ops::AttrMap attrs =
        attrs_from_c(fmt::format("variable '{}': {}", name, init_op), init_attrs, num_init_attrs);
    *out_value = dlrt::core::to_c(
        graph->add_variable(name, type_from_c(fn, *desc), init_op, attrs, trainable != 0));
  });
}

DLRT_API dlrt_status* dlrt_graph_op(dlrt_graph* graph, const char* op, const char* name,
                                    const dlrt_value* inputs, size_t num_inputs,
                                    const dlrt_attr* const* attrs, size_t num_attrs,
                                    dlrt_value* outputs, size_t max_outputs,
                                    size_t* out_num_outputs) {
  return guarded([&] {
    const char* fn = "dlrt_graph_op";
    require(out_num_outputs, fn, "out_num_outputs");
    *out_num_outputs = 0;
    if (max_outputs > 0) require(outputs, fn, "outputs");
    for (size_t i = 0; i < max_outputs; ++i) outputs[i] = DLRT_INVALID_VALUE;
    require(graph, fn, "graph");
    require(op, fn, "op");
    if (num_inputs > 0) require(inputs, fn, "inputs");
    // Room for every output is checked before the op is added, so a short array changes nothing.
    std::vector<ValueRef> in;
    in.reserve(num_inputs);
    for (size_t i = 0; i < num_inputs; ++i) in.push_back(dlrt::core::from_c(inputs[i]));
    const dlrt::ops::AttrMap op_attrs = attrs_from_c(op, attrs, num_attrs);
    // An op with a fixed output list says its count; a variadic one (split) knows it only from
    // its inputs and attributes, so it is inferred here once (add_op reports a bad call).
    const dlrt::ops::OpDef* def = dlrt::ops::find_op(op);
    size_t count = def != nullptr ? def->outputs.size() : 0;
    if (def != nullptr && def->variadic_outputs()) {
      std::vector<dlrt::ops::TensorType> types;
      try {
        for (const ValueRef& v : in) types.push_back(graph->type_of(v));
      } catch (const std::exception&) {
        types.clear();  // a bad input value: add_op below says which
      }
      dlrt::ops::Result<dlrt::ops::OpInstance> inst = dlrt::ops::instantiate(op, types, op_attrs);
      if (inst.ok()) count = inst->outputs().size();
    }
    if (count > max_outputs)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: {} has {} output(s), but `outputs` has room for {}", fn, op, count,
                       max_outputs));
    std::vector<ValueRef> out = graph->add_op(op, name != nullptr ? name : "", in, op_attrs);
    for (size_t k = 0; k < out.size(); ++k) outputs[k] = dlrt::core::to_c(out[k]);
    *out_num_outputs = out.size();
  });
}

DLRT_API dlrt_status* dlrt_graph_assign(dlrt_graph* graph, dlrt_value variable, dlrt_value value) {
  return guarded([&] {
    require(graph, "dlrt_graph_assign", "graph");
    graph->add_assign(dlrt::core::from_c(variable), dlrt::core::from_c(value));
  });
}

DLRT_API dlrt_status* dlrt_graph_push_device(dlrt_graph* graph, const char* spec) {
  return guarded([&] {
    require(graph, "dlrt_graph_push_device", "graph");
    require(spec, "dlrt_graph_push_device", "spec");
    graph->push_device(spec);
  });
}

DLRT_API dlrt_status* dlrt_graph_pop_device(dlrt_graph* graph) {
  return guarded([&] {
    require(graph, "dlrt_graph_pop_device", "graph");
    graph->pop_device();
  });
}

DLRT_API dlrt_status* dlrt_graph_colocate(dlrt_graph* graph, dlrt_value a, dlrt_value b) {
  return guarded([&] {
    require(graph, "dlrt_graph_colocate", "graph");
    graph->colocate(dlrt::core::from_c(a), dlrt::core::from_c(b));
  });
}

DLRT_API dlrt_status* dlrt_graph_depends_on(const dlrt_graph* graph, dlrt_value value,
                                            dlrt_value on, int* out_depends) {
  return guarded([&] {
    const char* fn = "dlrt_graph_depends_on";
    require(out_depends, fn, "out_depends");
    require(graph, fn, "graph");
    const dlrt::core::ValueRef from = dlrt::core::from_c(value), target = dlrt::core::from_c(on);
    graph->type_of(from);  // OUT_OF_RANGE for a value not of this graph
    graph->type_of(target);
    // Depth-first from `value`'s producer back through its inputs. Inputs always come from
    // earlier nodes, so a node older than `on`'s cannot lead to it and is not searched.
    std::vector<bool> seen(from.node + 1, false);
    std::vector<dlrt::core::NodeId> stack = {from.node};
    bool found = false;
    while (!stack.empty() && !found) {
      const dlrt::core::NodeId id = stack.back();
      stack.pop_back();
      if (id < target.node || seen[id]) continue;
      seen[id] = true;
      const dlrt::core::Node& n = graph->node(id);
      if (id == target.node) {
        found = true;
        break;
      }
      if (n.op == "stop_gradient") continue;
      for (const dlrt::core::ValueRef& in : n.inputs) stack.push_back(in.node);
    }
    *out_depends = found ? 1 : 0;
  });
}

DLRT_API dlrt_status* dlrt_graph_value_desc(const dlrt_graph* graph, dlrt_value value,
                                            dlrt_tensor_desc* out_desc) {
  return guarded([&] {
    const char* fn = "dlrt_graph_value_desc";
    require(out_desc, fn, "out_desc");
    require(graph, fn, "graph");
    const size_t n = out_desc->struct_size;
    if (n < sizeof(size_t))
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: out_desc->struct_size is {}; set it with "
                                              "DLRT_STRUCT_SIZE(dlrt_tensor_desc)",
                                              fn, n));
    const dlrt::ops::TensorType& t = graph->type_of(dlrt::core::from_c(value));
    dlrt_tensor_desc full{};
    full.dtype = t.dtype;
    full.rank = t.rank();
    for (int i = 0; i < t.rank(); ++i) full.dims[i] = t.dims[i];
    full.layout = DLRT_LAYOUT_DENSE;
    // Written as far as the caller's struct reaches; its struct_size stays as it was.
    std::memcpy(reinterpret_cast<unsigned char*>(out_desc) + sizeof(size_t),
                reinterpret_cast<const unsigned char*>(&full) + sizeof(size_t),
                (n < sizeof full ? n : sizeof full) - sizeof(size_t));
  });
}

DLRT_API dlrt_status* dlrt_graph_find(const dlrt_graph* graph, const char* name,
                                      dlrt_value* out_value) {
  return guarded([&] {
    const char* fn = "dlrt_graph_find";
    require(out_value, fn, "out_value");
    *out_value = DLRT_INVALID_VALUE;
    require(graph, fn, "graph");
    require(name, fn, "name");
    std::optional<ValueRef> v = graph->find(name);
    if (!v)
      fail(DLRT_NOT_FOUND, fmt::format("{}: the graph has no value '{}' (expected a node name, "
                                       "or 'name:k' for its output k)",
                                       fn, name));
    *out_value = dlrt::core::to_c(*v);
  });
}

DLRT_API size_t dlrt_graph_trainable_variables(const dlrt_graph* graph, dlrt_value* out_values,
                                               size_t max) {
  try {
    if (graph == nullptr) return 0;
    std::vector<dlrt::core::NodeId> ids = graph->trainable_variables();
    for (size_t i = 0; i < ids.size() && i < max && out_values != nullptr; ++i)
      out_values[i] = dlrt::core::to_c(ValueRef{ids[i], 0});
    return ids.size();
  } catch (...) {
    return 0;
  }
}

DLRT_API dlrt_status* dlrt_graph_variable_read(dlrt_graph* graph, dlrt_value variable, void* dst,
                                               size_t bytes) {
  return guarded([&] {
    const char* fn = "dlrt_graph_variable_read";
    require(graph, fn, "graph");
    require(dst, fn, "dst");
    dlrt::core::VariableSlot& slot = slot_for_copy(*graph, variable, bytes, fn);
    auto [api, device] = graph->context().device_handle(slot.device);
    dlrt::core::plugin_call(
        [&] { return copy_what(*graph, slot, fn); },
        [&] { return api->memcpy_d2h(device, dst, slot.buffer.data(), bytes, nullptr); });
  });
}

DLRT_API dlrt_status* dlrt_graph_variable_write(dlrt_graph* graph, dlrt_value variable,
                                                const void* src, size_t bytes) {
  return guarded([&] {
    const char* fn = "dlrt_graph_variable_write";
    require(graph, fn, "graph");
    require(src, fn, "src");
    dlrt::core::VariableSlot& slot = slot_for_copy(*graph, variable, bytes, fn);
    auto [api, device] = graph->context().device_handle(slot.device);
    dlrt::core::plugin_call(
        [&] { return copy_what(*graph, slot, fn); },
        [&] { return api->memcpy_h2d(device, slot.buffer.data(), src, bytes, nullptr); });
  });
}

}  // extern "C"
