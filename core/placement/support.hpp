// support.hpp: "can device d run node n?" for one place() call — the question every placement
// rule asks. Private to core/placement.
//
// The answer is the plugin's op_supported on the node's complete descriptor, built with
// ops::instantiate from the node's input types and (complete) attributes, exactly what
// kernel_create will later receive. What is asked per node kind:
//   op           the op itself;
//   variable     its init op (the variable's storage is written by running it there);
//   placeholder,
//   constant     nothing: any device can hold bytes, so every device supports them.
// Answers are cached per (device, descriptor key), so a graph of 200 identical relus asks each
// plugin once; the cache lives only as long as the oracle (one place() call), because a
// plugin's answers may change between contexts (options) but not within one call.
//
// Devices are registry indices. `by_priority` orders them as placement ranks them: class GPU,
// then ACCEL, then CPU, then anything else, registry order within a class; requests are
// matched against all of them. `automatic` is the same order without the devices automatic
// placement may not pick (Context::why_not_automatic: the reference oracle, unless named):
// priority placement, soft fallbacks, `capable` and the auto device choose only from it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context.hpp"
#include "graph/graph.hpp"

namespace dlrt::core::placement {

class SupportOracle {
 public:
  explicit SupportOracle(const Graph& graph);
  ~SupportOracle();
  SupportOracle(const SupportOracle&) = delete;
  SupportOracle& operator=(const SupportOracle&) = delete;

  // "" when device `d` can run node `id`; otherwise why not, prefixed by the device's short
  // name: "GPU:0: reference device GPU:0 is restricted to ops {matmul}".
  // Throws INTERNAL when the node's own descriptor does not instantiate (a graph bug).
  const std::string& why_not(NodeId id, size_t d);
  bool supports(NodeId id, size_t d) { return why_not(id, d).empty(); }

  const std::vector<size_t>& by_priority() const { return by_priority_; }
  const std::vector<size_t>& automatic() const { return automatic_; }
  bool is_automatic(size_t d) const;
  size_t device_count() const { return names_.size(); }
  // "GPU:0" — the short form used inside reasons.
  const std::string& short_name(size_t d) const { return names_[d]; }
  // Every device automatic placement may pick that can run `id`, in priority order.
  std::vector<size_t> capable(NodeId id);

 private:
  struct NodeQuery;  // the node's descriptor and key (defined in support.cc)
  const NodeQuery& query(NodeId id);

  const Graph& graph_;
  std::vector<std::string> names_;
  std::vector<size_t> by_priority_;
  std::vector<size_t> automatic_;
  std::map<NodeId, std::unique_ptr<NodeQuery>> queries_;
  std::map<std::pair<size_t, std::string>, std::string> answers_;  // (device, key) -> why not
};

// The op type shown in logs and errors: the registry op, or "placeholder" / "constant" /
// "variable".
std::string op_type(const Node& node);

}  // namespace dlrt::core::placement
