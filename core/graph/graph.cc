// graph.cc: the graph builder (see graph.hpp).
//
// Every builder follows one shape: check everything (names, values, types, the op registry's
// validation and shape inference), and only then append. So a failed call throws core::Error
// and leaves nodes, names, counters and colocation groups exactly as they were.
//
// Device scopes: the stack holds, per level, the *effective* request text of that level, so a
// node only reads the top. Nested scopes merge as TensorFlow's do: the inner spec's parts
// override the outer's, parts it leaves out are inherited ("/job:localhost" then "/GPU:0"
// requests "/job:localhost/device:GPU:0"). The device part (type and index) is one unit: an
// inner "/CPU" under an outer "/GPU:1" requests any CPU, not CPU:1. "" clears the request.
#include "graph/graph.hpp"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "graph/variable_store.hpp"
#include "ops/op_instance.hpp"
#include "ops/op_registry.hpp"
#include "status.hpp"

namespace dlrt::core {

namespace {

// Bytes per element; 0 for a dtype the graph cannot hold.
size_t element_bytes(dlrt_dtype dtype) { return dlrt_dtype_size(dtype); }

// A placeholder, constant or variable type: valid dtype, rank <= DLRT_MAX_RANK, dims >= 1
// (the registry rejects empty dims on every op input, so a graph never holds one).
void check_value_type(const char* kind, const std::string& name, const ops::TensorType& t) {
  if (element_bytes(t.dtype) == 0)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{} '{}': dtype {} is not a valid dlrt_dtype", kind,
                                            name, static_cast<int>(t.dtype)));
  if (t.rank() > DLRT_MAX_RANK)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{} '{}': rank {} is above the maximum {}", kind, name,
                                            t.rank(), DLRT_MAX_RANK));
  for (int i = 0; i < t.rank(); ++i)
    if (t.dims[i] < 1)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("{} '{}': dim {} of {} is {}, expected >= 1", kind,
                                              name, i, ops::format_dims(t.dims), t.dims[i]));
}

// ":" separates a name from an output index in find("name:1"), so names may not contain it.
void check_name(const std::string& name) {
  if (name.find(':') != std::string::npos)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("node name '{}' contains ':', which find() reads as 'name:output'", name));
}

// The parts a spec names, as text: "/job:localhost/device:GPU" (absent parts left out, unlike
// format_device_spec, which fills defaults and would turn "any GPU" into GPU:0).
std::string format_partial(const DeviceSpec& s) {
  std::string out;
  if (!s.job.empty()) out += "/job:" + s.job;
  if (s.replica >= 0) out += fmt::format("/replica:{}", s.replica);
  if (s.task >= 0) out += fmt::format("/task:{}", s.task);
  if (!s.type.empty()) {
    out += "/device:" + s.type;
    if (s.index >= 0) out += fmt::format(":{}", s.index);
  }
  return out;
}

}  // namespace

Graph::Graph(Context& context)
    : context_(&context),
      own_store_(std::make_unique<VariableStore>(*this)),
      store_(own_store_.get()) {}

std::unique_ptr<Graph> Graph::derive(const Graph& base) {
  std::unique_ptr<Graph> g(new Graph(*base.context_));
  g->own_store_.reset();
  g->store_ = base.store_;
  g->nodes_ = base.nodes_;  // constant bytes are shared_ptrs: copied by reference
  g->assigns_ = base.assigns_;
  g->by_name_ = base.by_name_;
  g->name_counters_ = base.name_counters_;
  g->next_colocation_group_ = base.next_colocation_group_;
  return g;
}

// Out of line: VariableStore is complete here.
Graph::~Graph() = default;

// ---- names and appending ---------------------------------------------------------------------

std::string Graph::unique_name(const std::string& base) {
  // TensorFlow's rule: "relu", then "relu_1", "relu_2", ...; skipping any a caller took.
  int& n = name_counters_[base];
  std::string candidate = n == 0 ? base : fmt::format("{}_{}", base, n);
  while (by_name_.count(candidate) != 0) candidate = fmt::format("{}_{}", base, ++n);
  ++n;
  return candidate;
}

NodeId Graph::append(Node node) {
  // The only checks left here are the name's; callers checked everything else, so after the
  // name is settled nothing can fail and the graph changes all at once.
  if (node.name.empty()) {
    node.name = unique_name(node.kind == NodeKind::kOp            ? node.op
                            : node.kind == NodeKind::kPlaceholder ? "placeholder"
                            : node.kind == NodeKind::kConstant    ? "constant"
                                                                  : "variable");
  }
  node.id = static_cast<NodeId>(nodes_.size());
  if (!device_scopes_.empty() && !device_scopes_.back().empty()) {
    node.requested_device = device_scopes_.back();
    node.requested = parse_device_spec(node.requested_device);  // parsed at push: cannot fail
  }
  by_name_.emplace(node.name, node.id);
  nodes_.push_back(std::move(node));
  return nodes_.back().id;
}

// Checks a caller-given name before anything else is done with it.
static void check_new_name(const std::map<std::string, NodeId, std::less<>>& by_name,
                           const std::vector<Node>& nodes, const std::string& name) {
  if (name.empty()) return;
  check_name(name);
  auto it = by_name.find(name);
  if (it != by_name.end()) {
    const Node& other = nodes[it->second];
    fail(DLRT_ALREADY_EXISTS,
         fmt::format("a node named '{}' already exists (a {}); names are unique in a graph, "
                     "pass an empty name to get a unique one",
                     name,
                     other.kind == NodeKind::kOp ? other.op : "placeholder/constant/variable"));
  }
}

// ---- builders --------------------------------------------------------------------------------

ValueRef Graph::add_placeholder(const std::string& name, const ops::TensorType& type) {
  check_new_name(by_name_, nodes_, name);
  check_value_type("placeholder", name, type);
  Node n;
  n.name = name;
  n.kind = NodeKind::kPlaceholder;
  n.outputs = {type};
  return {append(std::move(n)), 0};
}

ValueRef Graph::add_constant(const std::string& name, const ops::TensorType& type,
                             std::vector<uint8_t> bytes) {
  check_new_name(by_name_, nodes_, name);
  check_value_type("constant", name, type);
  const size_t expected = static_cast<size_t>(type.num_elements()) * element_bytes(type.dtype);
  if (bytes.size() != expected)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("constant '{}': {} bytes given, {} holds {} bytes",
                                            name, bytes.size(), ops::to_string(type), expected));
  Node n;
  n.name = name;
  n.kind = NodeKind::kConstant;
  n.outputs = {type};
  n.constant_data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  return {append(std::move(n)), 0};
}

ValueRef Graph::add_variable(const std::string& name, const ops::TensorType& type,
                             const std::string& init_op, const ops::AttrMap& init_attrs,
                             bool trainable) {
  check_new_name(by_name_, nodes_, name);
  check_value_type("variable", name, type);
  const std::string who = fmt::format("variable '{}'", name);
  const ops::OpDef* def = ops::find_op(init_op);
  if (def == nullptr)
    fail(DLRT_NOT_FOUND, fmt::format("{}: init op '{}' is not an op of docs/ops.md; use an op "
                                     "with no inputs such as fill or random_uniform",
                                     who, init_op));
  if (!def->inputs.empty())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: init op '{}' takes {} input(s); an initialiser takes none (fill, "
                     "random_uniform, random_normal)",
                     who, init_op, def->inputs.size()));

  // "shape" and "dtype" come from the variable's type; a caller may repeat them, not change them.
  ops::AttrMap attrs = init_attrs;
  const std::pair<const char*, ops::AttrValue> from_type[] = {
      {"shape", ops::AttrValue(type.dims)}, {"dtype", ops::AttrValue(type.dtype)}};
  for (const auto& [attr, value] : from_type) {
    auto it = attrs.find(attr);
    if (it != attrs.end() && it->second != value)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("{}: init attribute '{}' is {}, but the variable's type {} sets it to {}",
                       who, attr, ops::to_string(it->second), ops::to_string(type),
                       ops::to_string(value)));
    attrs[attr] = value;
  }
  // The registry checks the rest now (random_uniform's minval < maxval, a float dtype, ...),
  // so a bad initialiser fails here and not at the first compile.
  ops::Result<ops::OpInstance> inst = ops::instantiate(init_op, {}, attrs);
  if (!inst.ok()) fail(inst.status(), who);
  if (inst->outputs().size() != 1 || inst->output(0) != type)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("{}: init op '{}' makes {}, expected {}", who, init_op,
                                            ops::to_string(inst->output(0)), ops::to_string(type)));

  Node n;
  n.name = name;
  n.kind = NodeKind::kVariable;
  n.outputs = {type};
  n.init_op = init_op;
  n.init_attrs = inst->attrs();
  n.trainable = trainable;
  return {append(std::move(n)), 0};
}

std::vector<ValueRef> Graph::add_op(const std::string& op, const std::string& name,
                                    const std::vector<ValueRef>& inputs,
                                    const ops::AttrMap& attrs) {
  check_new_name(by_name_, nodes_, name);
  std::vector<ops::TensorType> types;
  types.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    try {
      types.push_back(type_of(inputs[i]));
    } catch (const Error& e) {
      fail(e.code(), fmt::format("{}: input {}: {}", op, i, e.message()));
    }
  }
  // The registry's message already names the op, the input and the axis; pass it through.
  ops::Result<ops::OpInstance> inst = ops::instantiate(op, types, attrs);
  if (!inst.ok()) fail(inst.status());

  Node n;
  n.name = name;
  n.kind = NodeKind::kOp;
  n.op = op;
  n.inputs = inputs;
  n.attrs = inst->attrs();
  n.outputs = inst->outputs();
  const NodeId id = append(std::move(n));
  std::vector<ValueRef> out;
  for (uint32_t k = 0; k < nodes_[id].outputs.size(); ++k) out.push_back({id, k});
  return out;
}

void Graph::add_assign(ValueRef variable, ValueRef value) {
  const ops::TensorType& vtype = type_of(variable);
  const Node& var = nodes_[variable.node];
  if (var.kind != NodeKind::kVariable)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("assign: '{}' is not a variable (it is a {}); only variables take assigns",
                     var.name,
                     var.kind == NodeKind::kOp            ? var.op
                     : var.kind == NodeKind::kPlaceholder ? "placeholder"
                                                          : "constant"));
  const ops::TensorType& type = type_of(value);
  const Node& src = nodes_[value.node];
  if (type != vtype)
    fail(
        DLRT_INVALID_ARGUMENT,
        fmt::format("assign: variable '{}' is {}, but the value '{}:{}' is {}; they must match",
                    var.name, ops::to_string(vtype), src.name, value.output, ops::to_string(type)));
  // One assign per variable: with two, "after a run the variable holds the value" would be
  // ambiguous for every executable touching it.
  for (const Assign& a : assigns_)
    if (a.variable == variable.node)
      fail(DLRT_ALREADY_EXISTS,
           fmt::format("assign: variable '{}' already has an assign (from '{}:{}'); a variable "
                       "takes one assign per graph",
                       var.name, nodes_[a.value.node].name, a.value.output));
  assigns_.push_back({variable.node, value});
}

// ---- device scopes and colocation -----------------------------------------------------------

void Graph::push_device(const std::string& spec) {
  std::string effective;
  if (!spec.empty()) {
    DeviceSpec inner = parse_device_spec(spec);  // INVALID_ARGUMENT naming the bad part
    const std::string outer_text = device_scopes_.empty() ? "" : device_scopes_.back();
    if (outer_text.empty()) {
      effective = spec;  // as written: it is what the placement log shows
    } else {
      DeviceSpec merged = parse_device_spec(outer_text);
      if (!inner.job.empty()) merged.job = inner.job;
      if (inner.replica >= 0) merged.replica = inner.replica;
      if (inner.task >= 0) merged.task = inner.task;
      if (!inner.type.empty()) {
        merged.type = inner.type;
        merged.index = inner.index;
      }
      effective = format_partial(merged);
    }
  }
  device_scopes_.push_back(std::move(effective));
}

void Graph::pop_device() {
  if (device_scopes_.empty())
    fail(DLRT_FAILED_PRECONDITION,
         "pop_device: no device scope is pushed (each pop_device pairs with a push_device)");
  device_scopes_.pop_back();
}

void Graph::colocate(ValueRef a, ValueRef b) {
  type_of(a);  // both checked before either node changes
  type_of(b);
  Node& na = nodes_[a.node];
  Node& nb = nodes_[b.node];
  if (na.colocation_group && nb.colocation_group) {
    // Union: every member of b's group joins a's.
    const uint32_t from = *nb.colocation_group, to = *na.colocation_group;
    if (from != to)
      for (Node& n : nodes_)
        if (n.colocation_group == from) n.colocation_group = to;
  } else if (na.colocation_group) {
    nb.colocation_group = na.colocation_group;
  } else if (nb.colocation_group) {
    na.colocation_group = nb.colocation_group;
  } else {
    na.colocation_group = nb.colocation_group = next_colocation_group_++;
  }
}

// ---- queries ---------------------------------------------------------------------------------

const Node& Graph::node(NodeId id) const {
  if (id >= nodes_.size())
    fail(DLRT_OUT_OF_RANGE,
         fmt::format("node {} is out of range; the graph has {} node(s)", id, nodes_.size()));
  return nodes_[id];
}

Node& Graph::mutable_node(NodeId id) {
  node(id);  // range check
  return nodes_[id];
}

const ops::TensorType& Graph::type_of(ValueRef v) const {
  if (v.node >= nodes_.size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("value {:#x} is not a value of this graph: node {} does not exist (the "
                     "graph has {} node(s))",
                     to_c(v), v.node, nodes_.size()));
  const Node& n = nodes_[v.node];
  if (v.output >= n.outputs.size())
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("value {:#x} is not a value of this graph: node '{}' has {} output(s), not "
                     "an output {}",
                     to_c(v), n.name, n.outputs.size(), v.output));
  return n.outputs[v.output];
}

std::optional<ValueRef> Graph::find(const std::string& text) const {
  std::string_view name = text;
  uint32_t output = 0;
  const size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    const std::string_view digits = std::string_view(text).substr(colon + 1);
    if (digits.empty() || digits.size() > 9) return std::nullopt;
    for (char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    output = static_cast<uint32_t>(std::stoul(std::string(digits)));
    name = name.substr(0, colon);
  }
  auto it = by_name_.find(name);
  if (it == by_name_.end() || output >= nodes_[it->second].outputs.size()) return std::nullopt;
  return ValueRef{it->second, output};
}

std::vector<NodeId> Graph::trainable_variables() const {
  std::vector<NodeId> out;
  for (const Node& n : nodes_)
    if (n.kind == NodeKind::kVariable && n.trainable) out.push_back(n.id);
  return out;
}

}  // namespace dlrt::core
