// auto_device.cc: compile's auto device (see auto_device.hpp).
#include "placement/auto_device.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "context.hpp"
#include "log.hpp"

namespace dlrt::core::placement {
namespace {

// What one candidate would run: how many ops, and the first it declines with the plugin's words.
struct Tally {
  size_t device = 0;
  size_t runs = 0;
  std::string first_refusal;  // "conv2d: GPU:0: hostile: declines every op", or ""
};

const char* class_name(int32_t device_class) {
  switch (device_class) {
    case DLRT_DEVICE_CLASS_GPU:
      return "GPU";
    case DLRT_DEVICE_CLASS_ACCEL:
      return "ACCEL";
    case DLRT_DEVICE_CLASS_CPU:
      return "CPU";
    default:
      return "unknown";
  }
}

}  // namespace

std::optional<AutoDevice> choose_auto_device(const Graph& graph, SupportOracle& oracle,
                                             const std::vector<NodeId>& needed) {
  const Context& ctx = graph.context();
  // Why devices may be missing from the candidates: the user asked for automatic placement,
  // so a refused plugin (cpu:threads=-5) must not silently change what it picks.
  for (const auto& p : ctx.plugins())
    if (p->state != DLRT_PLUGIN_LOADED)
      log(DLRT_LOG_WARNING, "placement",
          "auto device: plugin {} was not loaded, so its devices are not candidates: {}",
          p->name.empty() ? p->path : p->name, p->error);
  for (size_t d : oracle.by_priority())
    if (!oracle.is_automatic(d))
      log(DLRT_LOG_INFO, "placement", "auto device: {}", ctx.why_not_automatic(d));

  std::vector<NodeId> ops;  // what a device must run: ops and the variables' init ops
  for (NodeId id : needed) {
    const NodeKind k = graph.node(id).kind;
    if (k == NodeKind::kOp || k == NodeKind::kVariable) ops.push_back(id);
  }
  std::vector<Tally> tallies;
  for (size_t d : oracle.automatic()) {
    Tally t{d, 0, ""};
    for (NodeId id : ops) {
      if (oracle.supports(id, d)) {
        ++t.runs;
      } else if (t.first_refusal.empty()) {
        t.first_refusal = fmt::format("{}: {}", op_type(graph.node(id)), oracle.why_not(id, d));
      }
    }
    tallies.push_back(std::move(t));
  }
  if (tallies.empty()) {
    log(DLRT_LOG_WARNING, "placement",
        "auto device: no device may be picked automatically (devices: {})", ctx.registry().names());
    return std::nullopt;
  }
  size_t best = 0;  // strictly more ops wins; ties keep the earlier (higher-ranked) candidate
  for (size_t i = 1; i < tallies.size(); ++i)
    if (tallies[i].runs > tallies[best].runs) best = i;

  const Tally& pick = tallies[best];
  auto describe = [&](size_t d) {
    return fmt::format("{} (plugin {}, class {})", ctx.device_name(d), ctx.plugin_of(d).name,
                       class_name(ctx.desc_of(d).device_class));
  };
  AutoDevice out;
  out.device = pick.device;
  out.runs = pick.runs;
  out.ops = ops.size();
  out.summary =
      fmt::format("picked {}: it runs {} of the {} op(s)", describe(pick.device),
                  pick.runs == ops.size() ? "all" : std::to_string(pick.runs), ops.size());
  if (pick.runs < ops.size())
    out.summary += fmt::format(
        " (the rest go by priority to devices that run them; first it "
        "cannot run: {})",
        pick.first_refusal);
  std::vector<std::string> passed;
  for (size_t i = 0; i < best; ++i)
    passed.push_back(fmt::format("{} runs {} of {} ({})", describe(tallies[i].device),
                                 tallies[i].runs, ops.size(), tallies[i].first_refusal));
  if (!passed.empty())
    out.summary += fmt::format("; passed over higher-ranked {}", fmt::join(passed, "; "));
  log(passed.empty() && pick.runs == ops.size() ? DLRT_LOG_INFO : DLRT_LOG_WARNING, "placement",
      "auto device: {}", out.summary);
  return out;
}

}  // namespace dlrt::core::placement
