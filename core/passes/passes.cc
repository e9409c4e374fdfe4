// passes.cc: the stage's order, its option, and the driver (passes.hpp).
#include "passes/passes.hpp"

#include <fmt/format.h>

#include "passes/pass_list.hpp"
#include "status.hpp"

namespace dlrt::core::passes {

namespace {

std::string names_list() {
  std::string out;
  for (Pass p : stage_order()) out += (out.empty() ? "" : ", ") + std::string(pass_name(p));
  return out;
}

}  // namespace

const std::array<Pass, kPassCount>& stage_order() {
  static const std::array<Pass, kPassCount> order = {
      Pass::kFoldBatchNorm, Pass::kFuseBiasActivation, Pass::kFuseResidualTail,
      Pass::kFoldConstants, Pass::kRemoveDeadNodes};
  return order;
}

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::kFoldBatchNorm:
      return "fold_batch_norm";
    case Pass::kFuseBiasActivation:
      return "fuse_bias_activation";
    case Pass::kFuseResidualTail:
      return "fuse_residual_tail";
    case Pass::kFoldConstants:
      return "fold_constants";
    case Pass::kRemoveDeadNodes:
      return "remove_dead_nodes";
  }
  return "?";
}

bool PassSet::any() const {
  for (bool b : on)
    if (b) return true;
  return false;
}

PassSet PassSet::parse(std::string_view spec) {
  PassSet set;
  set.on.fill(true);  // "" is the default
  size_t start = 0;
  while (start <= spec.size() && !spec.empty()) {
    const size_t comma = spec.find(',', start);
    std::string_view item = spec.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "default") {
      set.on.fill(true);
    } else if (item == "none") {
      set.on.fill(false);
    } else if (!item.empty()) {
      const bool off = item.front() == '-';
      if (off) item.remove_prefix(1);
      bool found = false;
      for (Pass p : stage_order())
        if (item == pass_name(p)) {
          set.on[static_cast<size_t>(p)] = !off;
          found = true;
        }
      if (!found)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("graph passes '{}': '{}' is not a pass; expected default, none, or pass "
                         "names ({}), each optionally prefixed by '-' to turn it off",
                         spec, item, names_list()));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return set;
}

std::string PassSet::to_string() const {
  std::string out;
  for (Pass p : stage_order())
    if (has(p)) out += (out.empty() ? "" : ",") + std::string(pass_name(p));
  return out.empty() ? "none" : out;
}

StageResult run_stage(Graph& work, const std::vector<NodeId>& selected,
                      const std::vector<ValueRef>& fetches, const std::vector<Assign>& assigns,
                      const PassSet& set) {
  Rewrite rw(work, selected, fetches, assigns);
  if (set.has(Pass::kFoldBatchNorm)) fold_batch_norm(rw);
  if (set.has(Pass::kFuseBiasActivation)) fuse_bias_activation(rw);
  if (set.has(Pass::kFuseResidualTail)) fuse_residual_tail(rw);
  if (set.has(Pass::kFoldConstants)) fold_constants(rw);
  StageResult r;
  r.changed = rw.changed();
  if (!r.changed) {
    r.nodes = selected;
    return r;
  }
  const bool remove = set.has(Pass::kRemoveDeadNodes);
  r.nodes = rw.selection(/*keep_dead=*/!remove);
  if (remove) {
    const std::vector<NodeId> gone = rw.dropped();
    if (!gone.empty()) {
      std::string names;
      for (size_t i = 0; i < gone.size() && i < 8; ++i)
        names += (i ? ", " : "") + rw.describe(gone[i]);
      if (gone.size() > 8) names += fmt::format(", and {} more", gone.size() - 8);
      rw.log(fmt::format("remove_dead_nodes: {} node{} no longer read: {}", gone.size(),
                         gone.size() == 1 ? "" : "s", names));
    }
  }
  r.log = std::move(rw.log_lines());
  return r;
}

}  // namespace dlrt::core::passes
