// support.cc: the op_supported oracle of one place() call (see support.hpp).
#include "placement/support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "ops/op_instance.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core::placement {
namespace {

// Lower ranks are placed first: docs/design.md section 4, "GPU before CPU".
int class_rank(int32_t device_class) {
  switch (device_class) {
    case DLRT_DEVICE_CLASS_GPU:
      return 0;
    case DLRT_DEVICE_CLASS_ACCEL:
      return 1;
    case DLRT_DEVICE_CLASS_CPU:
      return 2;
    default:
      return 3;
  }
}

// A cache key equal for two op instances exactly when their descriptors are equal: the op,
// every input type and every attribute (complete, so defaults are spelled out). Strings are
// length-prefixed and floats printed to round trip, so no two instances share a key. Outputs
// are left out: they are a function of the rest.
std::string instance_key(const ops::OpInstance& inst) {
  std::string key = fmt::format("{}|", inst.name());
  for (const ops::TensorType& t : inst.inputs()) key += ops::to_string(t) + "|";
  for (const auto& [name, value] : inst.attrs()) {
    key += fmt::format("{}:{}=", name.size(), name);
    switch (value.type()) {
      case DLRT_ATTR_INT:
        key += fmt::format("i{}", value.as_int());
        break;
      case DLRT_ATTR_FLOAT:
        key += fmt::format("f{}", value.as_float());
        break;
      case DLRT_ATTR_BOOL:
        key += value.as_bool() ? "b1" : "b0";
        break;
      case DLRT_ATTR_STRING:
        key += fmt::format("s{}:{}", value.as_string().size(), value.as_string());
        break;
      case DLRT_ATTR_INTS:
        key += fmt::format("I({})", fmt::join(value.as_ints(), ","));
        break;
      case DLRT_ATTR_FLOATS:
        key += fmt::format("F({})", fmt::join(value.as_floats(), ","));
        break;
      case DLRT_ATTR_DTYPE:
        key += fmt::format("d{}", static_cast<int>(value.as_dtype()));
        break;
      default:
        key += "?";
        break;
    }
    key += ";";
  }
  return key;
}

}  // namespace

std::string op_type(const Node& node) {
  switch (node.kind) {
    case NodeKind::kPlaceholder:
      return "placeholder";
    case NodeKind::kConstant:
      return "constant";
    case NodeKind::kVariable:
      return "variable";
    case NodeKind::kOp:
      return node.op;
  }
  return node.op;
}

// What is asked about one node: its instantiated descriptor (none for placeholders and
// constants, which every device supports) and the descriptor's cache key.
struct SupportOracle::NodeQuery {
  std::optional<ops::OpInstance> instance;
  std::string key;
};

SupportOracle::SupportOracle(const Graph& graph) : graph_(graph) {
  const Context& ctx = graph.context();
  const auto& devices = ctx.registry().devices();
  for (size_t d = 0; d < devices.size(); ++d) {
    names_.push_back(fmt::format("{}:{}", devices[d].type, devices[d].index));
    by_priority_.push_back(d);
  }
  std::stable_sort(by_priority_.begin(), by_priority_.end(), [&](size_t a, size_t b) {
    return class_rank(ctx.desc_of(a).device_class) < class_rank(ctx.desc_of(b).device_class);
  });
  for (size_t d : by_priority_)
    if (ctx.automatic_candidate(d)) automatic_.push_back(d);
}

bool SupportOracle::is_automatic(size_t d) const {
  return std::find(automatic_.begin(), automatic_.end(), d) != automatic_.end();
}

SupportOracle::~SupportOracle() = default;

const SupportOracle::NodeQuery& SupportOracle::query(NodeId id) {
  auto it = queries_.find(id);
  if (it != queries_.end()) return *it->second;
  const Node& node = graph_.node(id);
  auto q = std::make_unique<NodeQuery>();
  if (node.kind == NodeKind::kOp || node.kind == NodeKind::kVariable) {
    const bool is_var = node.kind == NodeKind::kVariable;
    std::vector<ops::TensorType> inputs;
    if (!is_var)
      for (ValueRef v : node.inputs) inputs.push_back(graph_.type_of(v));
    ops::Result<ops::OpInstance> inst = ops::instantiate(is_var ? node.init_op : node.op, inputs,
                                                         is_var ? node.init_attrs : node.attrs);
    if (!inst.ok())
      fail(DLRT_INTERNAL, fmt::format("placement: node {} ({}) no longer instantiates: {}",
                                      node.name, op_type(node), inst.status().message()));
    q->key = instance_key(*inst);
    q->instance.emplace(std::move(inst).value());
  }
  return *queries_.emplace(id, std::move(q)).first->second;
}

const std::string& SupportOracle::why_not(NodeId id, size_t d) {
  static const std::string kYes;
  const NodeQuery& q = query(id);
  if (!q.instance) return kYes;
  auto [it, inserted] = answers_.try_emplace({d, q.key});
  if (!inserted) return it->second;

  const Context& ctx = graph_.context();
  const LogicalDevice& dev = ctx.registry().devices()[d];
  const Plugin& plugin = ctx.plugin_of(d);
  const int32_t ordinal = ctx.registry().physical()[dev.physical].ordinal;
  std::string& answer = it->second;
  if (!plugin.usable() || plugin.api().op_supported == nullptr) {
    answer = fmt::format("{}: plugin '{}' is not loaded", names_[d], plugin.name);
    return answer;
  }
  // An exception that crosses the boundary anyway (plugin.h forbids it) is a "no".
  const StatusValue s = plugin_status("op_supported", [&] {
    return plugin.api().op_supported(plugin.instance(), ordinal, &q.instance->desc(), nullptr);
  });
  if (!s.ok())
    answer = fmt::format("{}: {}", names_[d], s.message.empty() ? "unsupported" : s.message);
  return answer;
}

std::vector<size_t> SupportOracle::capable(NodeId id) {
  std::vector<size_t> out;
  for (size_t d : automatic_)
    if (supports(id, d)) out.push_back(d);
  return out;
}

}  // namespace dlrt::core::placement
