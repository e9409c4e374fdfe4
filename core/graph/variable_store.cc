// variable_store.cc: placing and initialising a graph's variables (see variable_store.hpp).
//
// A variable is initialised by running its init op (fill, random_uniform, ...) once on its own
// device, so a GPU variable never crosses the bus to be born. The kernel runs with rng_offset
// 0: a variable's first value depends on its init attributes alone (seed included), and is the
// same on every device, since every backend draws the same Philox stream. Two variables with
// equal init attributes therefore start equal; give each its own seed.
//
// When the chosen device has no kernel for the init op (a plugin with a subset of ops), the op
// runs on the best device that has one and the bytes are copied over through the host.
//
// Memory (the variable, its init workspace, a staging copy) comes from the devices' arenas
// (Context::arena), so it counts against their limits and shows in their stats.
// Interim: the init kernel is created, run and destroyed here (run_generator) until the eager
// path's kernel cache lands.
#include "graph/variable_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "context.hpp"
#include "log.hpp"
#include "ops/op_instance.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core {

namespace {

const std::string& device_name(Context& ctx, size_t device) {
  return ctx.registry().devices().at(device).name;
}

size_t byte_size(const ops::TensorType& t) {
  return static_cast<size_t>(t.num_elements()) * dlrt_dtype_size(t.dtype);
}

Buffer allocate_variable(Context& ctx, size_t device, size_t bytes, const Node& var) {
  const std::string what = fmt::format("variable '{}'", var.name);
  return ctx.arena(device).allocate(bytes, what.c_str());
}

// The plugin's op_supported answer for `inst` on registry device `device`: "" = supported,
// else the plugin's reason.
std::string unsupported_reason(Context& ctx, size_t device, const ops::OpInstance& inst) {
  const Plugin& plugin = ctx.plugin_of(device);
  const int32_t ordinal =
      ctx.registry().physical()[ctx.registry().devices()[device].physical].ordinal;
  const StatusValue s = plugin_status("op_supported", [&] {
    return plugin.api().op_supported(plugin.instance(), ordinal, &inst.desc(), nullptr);
  });
  return s.ok() ? "" : std::string(dlrt_code_name(s.code)) + ": " + s.message;
}

// Runs generator `inst` (no inputs, one output) on `device` into device memory `out`, and
// waits for it. Every handle it makes is released on every path.
void run_generator(Context& ctx, size_t device, const ops::OpInstance& inst, void* out,
                   const std::string& who) {
  auto [api, handle] = ctx.device_handle(device);
  const std::string where = fmt::format("{} on {}", who, device_name(ctx, device));
  struct Handles {
    const dlrt_plugin_api* api;
    dlrt_kernel* kernel = nullptr;
    dlrt_stream* stream = nullptr;
    Buffer workspace;  // given back first, while the kernel that used it still exists
    ~Handles() {
      workspace.reset();
      if (stream) api->stream_destroy(stream);
      if (kernel) api->kernel_destroy(kernel);
    }
  } h{api, nullptr, nullptr, Buffer()};
  size_t workspace_bytes = 0;
  plugin_call(where + ": kernel_create", [&] {
    return api->kernel_create(handle, &inst.desc(), &h.kernel, &workspace_bytes);
  });
  if (workspace_bytes > 0) {
    const std::string what = "the workspace of " + who + "'s init op";
    h.workspace = ctx.arena(device).allocate(workspace_bytes, what.c_str());
  }
  plugin_call(where + ": stream_create", [&] { return api->stream_create(handle, &h.stream); });
  void* outputs[] = {out};
  dlrt_kernel_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = 0;
  args.inputs = nullptr;
  args.num_outputs = 1;
  args.outputs = outputs;
  args.workspace = h.workspace.data();
  args.workspace_bytes = workspace_bytes;
  args.rng_offset = 0;
  plugin_call(where + ": kernel_run", [&] { return api->kernel_run(h.kernel, h.stream, &args); });
  plugin_call(where + ": stream_synchronize", [&] { return api->stream_synchronize(h.stream); });
}

// Registry devices in placement priority: GPU, ACCEL, CPU, anything else; registry order within.
std::vector<size_t> by_priority(Context& ctx) {
  auto rank = [&](size_t d) {
    switch (ctx.desc_of(d).device_class) {
      case DLRT_DEVICE_CLASS_GPU:
        return 0;
      case DLRT_DEVICE_CLASS_ACCEL:
        return 1;
      case DLRT_DEVICE_CLASS_CPU:
        return 2;
      default:
        return 3;
    }
  };
  std::vector<size_t> out(ctx.registry().devices().size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  return out;
}

// The first device by priority that automatic placement may pick (never an unnamed oracle)
// whose plugin supports `inst`; throws FAILED_PRECONDITION listing each device's reason when
// none does. `staging`: only to compute an initial value once for a device that lacks the init op; there
// the oracle is fine (exact, and a one-off), so it may be used.
size_t best_device_for(Context& ctx, const ops::OpInstance& inst, const std::string& who,
                       bool staging = false) {
  std::string reasons;
  for (size_t d : by_priority(ctx)) {
    // Never the reference oracle unless named (Context::why_not_automatic).
    std::string why = staging ? "" : ctx.why_not_automatic(d);
    if (why.empty()) why = unsupported_reason(ctx, d, inst);
    if (why.empty()) return d;
    reasons += fmt::format("; {}: {}", device_name(ctx, d), why);
  }
  fail(DLRT_FAILED_PRECONDITION,
       fmt::format("{}: no device can run its init op '{}' ({} device(s){})", who, inst.name(),
                   ctx.registry().devices().size(), reasons));
}

}  // namespace

VariableSlot* VariableStore::find(NodeId id) {
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : &it->second;
}

VariableSlot& VariableStore::place_and_init(NodeId id, size_t device) {
  const Node& var = graph_->node(id);
  const std::string who = fmt::format("variable '{}'", var.name);
  if (var.kind != NodeKind::kVariable)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("node '{}' is not a variable", var.name));
  Context& ctx = graph_->context();
  if (VariableSlot* slot = find(id)) {
    if (slot->device == device) return *slot;
    fail(DLRT_FAILED_PRECONDITION,
         fmt::format("{} is already placed on {}; it cannot move to {} (a variable keeps its "
                     "device for the graph's life)",
                     who, device_name(ctx, slot->device),
                     device < ctx.registry().devices().size() ? device_name(ctx, device)
                                                              : fmt::format("device {}", device)));
  }
  if (device >= ctx.registry().devices().size())
    fail(DLRT_OUT_OF_RANGE, fmt::format("{}: device index {} is out of range; the context has {} "
                                        "device(s)",
                                        who, device, ctx.registry().devices().size()));

  // The graph checked the init op when the variable was added, so this cannot fail.
  ops::Result<ops::OpInstance> inst = ops::instantiate(var.init_op, {}, var.init_attrs);
  if (!inst.ok()) fail(DLRT_INTERNAL, fmt::format("{}: {}", who, inst.status().message()));

  const size_t bytes = byte_size(var.outputs[0]);
  VariableSlot slot;
  slot.device = device;
  slot.buffer = allocate_variable(ctx, device, bytes, var);
  if (unsupported_reason(ctx, device, *inst).empty()) {
    run_generator(ctx, device, *inst, slot.buffer.data(), who);
  } else {
    // Born elsewhere, copied here through the host.
    const size_t helper = best_device_for(ctx, *inst, who, /*staging=*/true);
    Buffer staging = allocate_variable(ctx, helper, bytes, var);
    run_generator(ctx, helper, *inst, staging.data(), who);
    std::vector<uint8_t> host(bytes);
    auto [helper_api, helper_handle] = ctx.device_handle(helper);
    plugin_call(
        fmt::format("{}: copying its initial value from {}", who, device_name(ctx, helper)), [&] {
          return helper_api->memcpy_d2h(helper_handle, host.data(), staging.data(), bytes, nullptr);
        });
    auto [api, handle] = ctx.device_handle(device);
    plugin_call(
        fmt::format("{}: copying its initial value to {}", who, device_name(ctx, device)),
        [&] { return api->memcpy_h2d(handle, slot.buffer.data(), host.data(), bytes, nullptr); });
  }
  slot.initialized = true;
  return slots_.emplace(id, std::move(slot)).first->second;
}

VariableSlot& VariableStore::ensure(NodeId id) {
  if (VariableSlot* slot = find(id)) return *slot;
  const Node& var = graph_->node(id);
  if (var.kind != NodeKind::kVariable)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("node '{}' is not a variable", var.name));
  Context& ctx = graph_->context();
  const std::string who = fmt::format("variable '{}'", var.name);
  ops::Result<ops::OpInstance> inst = ops::instantiate(var.init_op, {}, var.init_attrs);
  if (!inst.ok()) fail(DLRT_INTERNAL, fmt::format("{}: {}", who, inst.status().message()));
  // A variable read or written before any compile (a checkpoint loaded into a model scoped to
  // a device) is placed here. A requested device that is missing is an error under strict
  // placement; under soft placement (the context's default, as TensorFlow's) it falls back to
  // the best device that runs its init op, as placement at compile would, and says so, so
  // that load_weights works wherever predict does.
  if (var.requested && !var.requested->type.empty()) {
    size_t device = 0;
    try {
      device = ctx.registry().find(var.requested_device);
    } catch (const Error& e) {
      if (!ctx.settings().soft_placement())
        fail(e.code(),
             fmt::format("{} requests device '{}': {}", who, var.requested_device, e.message()));
      const size_t fallback = best_device_for(ctx, *inst, who);
      core::log(DLRT_LOG_WARNING, "placement",
          "{} requests device '{}', which is missing ({}); soft placement puts it on {}", who,
          var.requested_device, e.message(), device_name(ctx, fallback));
      return place_and_init(id, fallback);
    }
    return place_and_init(id, device);
  }
  return place_and_init(id, best_device_for(ctx, *inst, who));
}

}  // namespace dlrt::core
