// importer.cc: the walk over the model's nodes (importer.hpp) and NodeContext's helpers.
#include "onnx_import/importer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "onnx_import/tensor_proto.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"

namespace dlrt::onnx_import {

// ---------------------------------------------------------------------------------------
// Importer

Importer::Importer(const OnnxModel& model, dlrt::Graph& graph, const ImportOptions& options)
    : model_(model), graph_(graph), options_(options) {
  const auto& g = model_.proto.graph();
  for (const auto& n : g.node())
    for (const std::string& in : n.input())
      if (!in.empty()) ++uses_[in];
  for (const auto& o : g.output()) ++uses_[o.name()];
  for (int k = 0; k < g.node_size(); ++k)
    for (const std::string& out : g.node(k).output())
      if (!out.empty()) producer_[out] = k;
}

std::optional<size_t> Importer::small_input_behind(const std::string& name) {
  const auto& g = model_.proto.graph();
  std::vector<std::string> todo = {name};
  std::set<std::string> seen;
  // Bounded: shape arithmetic is a handful of nodes; a walk through a whole network is not.
  while (!todo.empty() && seen.size() < 256) {
    const std::string v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    const int in = input_index(v);
    if (in >= 0) {
      auto it = slots_.find(v);
      if (it == slots_.end() || it->second.host) continue;  // already a value
      int64_t n = 1;
      for (int64_t d : it->second.dims) n *= d;
      if (n <= kMaxValueInputElements) return static_cast<size_t>(in);
      continue;
    }
    auto p = producer_.find(v);
    if (p == producer_.end()) continue;  // an initializer
    const onnx::NodeProto& node = g.node(p->second);
    if (node.op_type() == "Shape" || node.op_type() == "Size") continue;  // dims only
    for (const std::string& i : node.input())
      if (!i.empty()) todo.push_back(i);
  }
  return std::nullopt;
}

int Importer::uses(const std::string& name) const {
  auto it = uses_.find(name);
  return it == uses_.end() ? 0 : it->second;
}

std::string Importer::unique_name(const std::string& base) {
  std::string clean;
  for (char c : base) clean += (c == ':' || c == '\0') ? '_' : c;
  if (clean.empty()) clean = "onnx";
  std::string name = clean;
  for (int k = 1; names_.count(name) != 0; ++k) name = fmt::format("{}_{}", clean, k);
  names_.insert(name);
  return name;
}

Slot& Importer::slot(const std::string& name, const std::string& reader) {
  auto it = slots_.find(name);
  if (it == slots_.end())
    fail(DLRT_INTERNAL, fmt::format("{} reads '{}', which has no value yet", reader, name));
  return it->second;
}

void Importer::define(const std::string& name, Slot s) { slots_[name] = std::move(s); }

dlrt::Value Importer::materialize(Slot& s, const std::string& name) {
  if (!s.value) {
    const HostTensor& t = *s.host;
    if (t.element_count() == 0)
      fail(DLRT_UNIMPLEMENTED, fmt::format("'{}' has dims {}: dlrt has no zero-sized tensors", name,
                                           dims_text(t.dims)));
    const dlrt_tensor_desc d = dlrt::detail::dense_desc(t.dtype, t.dims);
    dlrt_value v = DLRT_INVALID_VALUE;
    dlrt::check(dlrt_graph_constant(graph_.get(), unique_name(name).c_str(), &d, t.bytes.data(),
                                    t.bytes.size(), &v));
    s.value = dlrt::Value(graph_.get(), v);
  }
  return s.value;
}

int Importer::input_index(const std::string& name) const {
  for (size_t i = 0; i < model_.inputs.size(); ++i)
    if (model_.inputs[i].name == name) return static_cast<int>(i);
  return -1;
}

ImportedGraph Importer::run(const std::vector<std::vector<int64_t>>& input_dims,
                            const InputValues& values) {
  const auto& g = model_.proto.graph();
  ImportedGraph out;
  if (input_dims.size() != model_.inputs.size())
    fail(DLRT_INVALID_ARGUMENT, fmt::format("the model has {} inputs; {} shapes were given",
                                            model_.inputs.size(), input_dims.size()));
  // Initializers first: a graph input of the same name (IR < 4) is the initializer.
  for (const auto& t : g.initializer()) {
    Slot s;
    s.host = read_tensor_proto(t, ExternalDataRoot{model_.folder},
                               fmt::format("initializer '{}'", t.name()));
    s.dtype = s.host->dtype;
    s.dims = s.host->dims;
    define(t.name(), std::move(s));
  }
  std::optional<dlrt::DeviceScope> scope;
  if (!options_.device.empty() && options_.device != "auto") scope.emplace(graph_, options_.device);
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    const ModelIo& io = model_.inputs[i];
    const std::vector<int64_t>& dims = input_dims[i];
    const bool rank_ok = !io.has_shape || dims.size() == io.dims.size();
    bool dims_ok = rank_ok;
    for (size_t k = 0; dims_ok && k < dims.size(); ++k)
      dims_ok = dims[k] >= 1 && (!io.has_shape || io.dims[k] < 0 || io.dims[k] == dims[k]);
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] == 0 || (io.has_shape && k < io.dims.size() && io.dims[k] == 0))
        fail(DLRT_UNIMPLEMENTED,
             fmt::format("input '{}' has dims {}: dlrt has no zero-sized tensors", io.name,
                         dims_text(dims)));
    if (!dims_ok) {
      std::string want;
      for (size_t k = 0; k < io.dims.size(); ++k)
        want += (k ? "," : "") + (io.dims[k] < 0 ? io.dim_names[k] : std::to_string(io.dims[k]));
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("input '{}' was given dims {}; the model wants ({}) with every dim >= 1",
                       io.name, dims_text(dims), io.has_shape ? want : "any"));
    }
    Slot s;
    s.dtype = io.dtype;
    s.dims = dims;
    if (i < values.size() && values[i]) {
      s.host = *values[i];
    } else {
      s.value = graph_.placeholder(unique_name(io.name), io.dtype, dims);
      out.inputs.push_back(s.value);
      out.fed.push_back(i);
    }
    define(io.name, std::move(s));
  }
  const ConverterTable& table = converters();
  for (int index : model_.order) {
    const onnx::NodeProto& node = g.node(index);
    NodeContext ctx(*this, node, model_.opset);
    const ConverterInfo* c = table.find(node.op_type());
    if (c == nullptr) ctx.unsupported("dlrt has no converter for this ONNX op");
    try {
      c->convert(ctx);
    } catch (const dlrt::Error& e) {  // from the graph builder: add the node
      fail(e.code(), fmt::format("{}: {}", ctx.label(), e.message()));
    } catch (const Error& e) {
      if (e.message().rfind("node ", 0) == 0) throw;
      fail(e.code(), fmt::format("{}: {}", ctx.label(), e.message()));
    }
    for (size_t k = 0; k < ctx.num_outputs(); ++k)
      if (ctx.wants_output(k) && slots_.count(node.output(static_cast<int>(k))) == 0)
        ctx.unsupported(fmt::format("output {} ('{}') is not produced by dlrt's converter", k,
                                    node.output(static_cast<int>(k))));
  }
  for (const ModelIo& io : model_.outputs) {
    Slot& s = slot(io.name, "graph output");
    dlrt::Value v = materialize(s, io.name);
    // A fetch that is a placeholder or a constant is copied, so every output is an op's.
    bool is_input = false;
    for (const dlrt::Value& in : out.inputs) is_input = is_input || in == v;
    if (is_input || s.host) {
      dlrt_value c = DLRT_INVALID_VALUE;
      size_t n = 0;
      const dlrt_value in[] = {v.get()};
      dlrt::check(dlrt_graph_op(graph_.get(), "copy", unique_name(io.name + "/copy").c_str(), in,
                                1, nullptr, 0, &c, 1, &n));
      v = dlrt::Value(graph_.get(), c);
    }
    out.outputs.push_back(v);
  }
  return out;
}

ImportedGraph import_model(const OnnxModel& model, dlrt::Graph& graph,
                           const std::vector<std::vector<int64_t>>& input_dims,
                           const ImportOptions& options, const InputValues& values) {
  Importer importer(model, graph, options);
  return importer.run(input_dims, values);
}

// ---------------------------------------------------------------------------------------
// NodeContext

dlrt::Graph& NodeContext::graph() { return importer_.graph(); }
const ImportOptions& NodeContext::options() const { return importer_.options(); }

std::string NodeContext::label() const {
  return node_.name().empty() ? fmt::format("node ({}) making '{}'", node_.op_type(),
                                            node_.output_size() ? node_.output(0) : "")
                              : fmt::format("node '{}' ({})", node_.name(), node_.op_type());
}

void NodeContext::unsupported(const std::string& why) const {
  fail(DLRT_UNIMPLEMENTED, fmt::format("{}: {}", label(), why));
}
void NodeContext::invalid(const std::string& why) const {
  fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: {}", label(), why));
}

int64_t NodeContext::axis(int64_t a, int64_t r) const {
  const int64_t v = a < 0 ? a + r : a;
  if (v < 0 || v >= r) invalid(fmt::format("axis {} is out of range for rank {}", a, r));
  return v;
}

const Slot& NodeContext::slot(size_t i) {
  if (!has_input(i)) invalid(fmt::format("input {} is required", i));
  return importer_.slot(node_.input(static_cast<int>(i)), label());
}

const HostTensor* NodeContext::host(size_t i) {
  if (!has_input(i)) return nullptr;
  const Slot& s = slot(i);
  return s.host ? &*s.host : nullptr;
}

const HostTensor& NodeContext::require_host(size_t i, const char* role) {
  const HostTensor* t = host(i);
  if (t == nullptr) {
    const std::string msg = fmt::format(
        "{}: input {} ('{}', the {}) must be a constant: an initializer, a Constant, computed "
        "from shapes, or a small graph input",
        label(), i, has_input(i) ? node_.input(static_cast<int>(i)) : "", role);
    const int in = has_input(i) ? importer_.input_index(node_.input(static_cast<int>(i))) : -1;
    if (in >= 0) throw NeedsInputValue{static_cast<size_t>(in), msg};
    if (has_input(i))
      if (std::optional<size_t> src = importer_.small_input_behind(node_.input(static_cast<int>(i))))
        throw NeedsInputValue{*src, msg};
    fail(DLRT_UNIMPLEMENTED, msg);
  }
  return *t;
}

dlrt::Value NodeContext::value(size_t i) {
  if (!has_input(i)) invalid(fmt::format("input {} is required", i));
  const std::string& name = node_.input(static_cast<int>(i));
  return importer_.materialize(importer_.slot(name, label()), name);
}

int NodeContext::uses_of_output(size_t k) const {
  return importer_.uses(node_.output(static_cast<int>(k)));
}
int NodeContext::uses_of_input(size_t i) const {
  return importer_.uses(node_.input(static_cast<int>(i)));
}

void NodeContext::set(size_t k, dlrt::Value v) {
  if (!wants_output(k)) return;
  Slot s;
  s.value = v;
  s.dtype = v.dtype();
  s.dims = v.dims();
  importer_.define(node_.output(static_cast<int>(k)), std::move(s));
}

void NodeContext::set_host(size_t k, HostTensor t) {
  if (!wants_output(k)) return;
  Slot s;
  s.dtype = t.dtype;
  s.dims = t.dims;
  s.host = std::move(t);
  importer_.define(node_.output(static_cast<int>(k)), std::move(s));
}

void NodeContext::set_slot(size_t k, Slot s) {
  if (!wants_output(k)) return;
  importer_.define(node_.output(static_cast<int>(k)), std::move(s));
}

namespace {
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
}  // namespace

bool NodeContext::has_attr(const char* name) const { return find_attr(node_, name) != nullptr; }

int64_t NodeContext::attr_int(const char* name, int64_t dflt) const {
  const auto* a = find_attr(node_, name);
  return a ? a->i() : dflt;
}
float NodeContext::attr_float(const char* name, float dflt) const {
  const auto* a = find_attr(node_, name);
  return a ? a->f() : dflt;
}
std::string NodeContext::attr_string(const char* name, const std::string& dflt) const {
  const auto* a = find_attr(node_, name);
  return a ? a->s() : dflt;
}
std::vector<int64_t> NodeContext::attr_ints(const char* name, std::vector<int64_t> dflt) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
}
std::vector<std::string> NodeContext::attr_strings(const char* name) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
           : std::vector<std::string>{};
}
std::vector<float> NodeContext::attr_floats(const char* name, std::vector<float> dflt) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : dflt;
}
const onnx::TensorProto* NodeContext::attr_tensor(const char* name) const {
  const auto* a = find_attr(node_, name);
  return a && a->has_t() ? &a->t() : nullptr;
}
HostTensor NodeContext::attr_host_tensor(const char* name) {
  const onnx::TensorProto* t = attr_tensor(name);
  if (t == nullptr) invalid(fmt::format("attribute '{}' (a tensor) is required", name));
  return read_tensor_proto(*t, ExternalDataRoot{importer_.folder()},
                           fmt::format("{} attribute '{}'", label(), name));
}

namespace {
std::vector<std::string> dtype_names(const std::vector<dlrt_dtype>& set) {
  std::vector<std::string> out;
  for (dlrt_dtype d : set) out.push_back(dlrt_dtype_name(d));
  return out;
}
}  // namespace

std::vector<dlrt::Value> NodeContext::ops(const std::string& op,
                                          const std::vector<dlrt::Value>& inputs,
                                          const dlrt::OpAttrs& attrs, size_t max_outputs) {
  // A valid ONNX model whose tensors have a dtype the dlrt op does not take (an integer Sub,
  // an f64 Exp) is a limit of dlrt, not a bad model: UNIMPLEMENTED, said before building.
  if (const ops::OpDef* def = ops::find_op(op)) {
    for (size_t i = 0; i < inputs.size() && !def->inputs.empty(); ++i) {
      const ops::InputSpec& spec = def->inputs[std::min(i, def->inputs.size() - 1)];
      const dlrt_dtype d = inputs[i].dtype();
      if (std::find(spec.dtypes.begin(), spec.dtypes.end(), d) == spec.dtypes.end())
        unsupported(fmt::format("dlrt's {} takes {} of dtype {}, not {}", op, spec.name,
                                fmt::join(dtype_names(spec.dtypes), "|"), dlrt_dtype_name(d)));
    }
  }
  const std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  return graph().op_outputs(op, inputs, attrs, max_outputs, importer_.unique_name(base));
}

dlrt::Value NodeContext::op(const std::string& op, const std::vector<dlrt::Value>& inputs,
                            const dlrt::OpAttrs& attrs) {
  return ops(op, inputs, attrs).at(0);
}

dlrt::Value NodeContext::constant(const HostTensor& t) {
  Slot s;
  s.host = t;
  s.dtype = t.dtype;
  s.dims = t.dims;
  const std::string base = (node_.name().empty() ? node_.op_type() : node_.name()) + "/const";
  return importer_.materialize(s, base);
}

dlrt::Value NodeContext::scalar(dlrt_dtype dtype, double v) {
  return constant(HostTensor::from_doubles(dtype, {v}, {}));
}

Slot nchw_view(NodeContext& c, dlrt::Value nhwc) {
  Slot s;
  s.value = c.op("transpose", {nhwc}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
  s.transposed_from = nhwc;
  s.perm = {0, 3, 1, 2};
  s.dtype = s.value.dtype();
  s.dims = s.value.dims();
  return s;
}

std::optional<dlrt::Value> nhwc_source(NodeContext& c, size_t i) {
  if (!c.options().prefer_nhwc || !c.has_input(i)) return std::nullopt;
  const Slot& s = c.slot(i);
  if (s.transposed_from && s.perm == std::vector<int64_t>{0, 3, 1, 2}) return s.transposed_from;
  return std::nullopt;
}

dlrt::Value NodeContext::reshape(dlrt::Value x, const std::vector<int64_t>& dims) {
  if (x.dims() == dims) return x;
  return op("reshape", {x}, {{"shape", dims}});
}

}  // namespace dlrt::onnx_import
