// random_1_0.hpp: the ops and capture table of test_plugin.cc's CASE_RANDOM_1_0 — a plugin
// built against ABI 1.0 that runs random_uniform (f32) and relu, and captures.
//
// "Built against 1.0" is modelled honestly: the plugin declares minor 0 and reads kernel
// arguments through KernelArgs10, dlrt_kernel_args exactly as 1.0 shipped it
// (tests/abi/layout_abi_1_0.c), never past its 64 bytes. So it knows nothing of
// rng_offset_device: it draws with rng_offset, which the host must keep setting on every run.
//
// Its capture table freezes kernel arguments the way CUDA Graphs do (a copy of the 1.0 args
// taken at enqueue, replayed as is). A host that captured this plugin's random ops would
// therefore replay the captured run's numbers forever: the loader test checks that the host
// does not (random ops of a 1.0 plugin run uncaptured) while its other work is captured.
// Kernels run at enqueue time on the calling thread; only a capturing stream defers them.
#pragma once

#include <dlrt/plugin.h>
#include <op_view.hpp>
#include <philox.hpp>
#include <plugin_support.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace random_1_0 {

using dlrt::plugin::fail;
using dlrt::plugin::guard;
using dlrt::plugin::OpView;

// dlrt_kernel_args of ABI 1.0, field for field.
struct KernelArgs10 {
  size_t struct_size;
  size_t num_inputs;
  const void* const* inputs;
  size_t num_outputs;
  void* const* outputs;
  void* workspace;
  size_t workspace_bytes;
  uint64_t rng_offset;
};
static_assert(sizeof(KernelArgs10) == 64 && offsetof(KernelArgs10, rng_offset) == 56,
              "KernelArgs10 must be the ABI 1.0 layout");

// One stream's capture state (the stream struct of test_plugin.cc holds one).
struct Capture {
  bool on = false;
  std::vector<std::function<void()>> work;
};

}  // namespace random_1_0

struct dlrt_kernel {
  dlrt::plugin::OpView op;
};

struct dlrt_graph_exec {
  std::vector<std::function<void()>> work;
};

namespace random_1_0 {

inline bool supported(const OpView& op) {
  if (op.name() == "relu")
    return op.num_inputs() == 1 && op.num_outputs() == 1 && op.input(0).dtype == DLRT_F32;
  if (op.name() == "random_uniform")
    return op.num_inputs() == 0 && op.num_outputs() == 1 && op.output(0).dtype == DLRT_F32;
  return false;
}

inline dlrt_status* op_supported(dlrt_plugin*, int32_t, const dlrt_op_desc* desc, dlrt_op_cost*) {
  return guard([&] {
    if (!supported(OpView(desc)))
      fail(DLRT_UNIMPLEMENTED,
           std::string(TEST_PLUGIN_NAME) + " runs only f32 relu and random_uniform");
  });
}

inline dlrt_status* kernel_create(dlrt_device*, const dlrt_op_desc* desc, dlrt_kernel** out,
                                  size_t* ws) {
  *out = nullptr;
  *ws = 0;
  return guard([&] {
    OpView op(desc);
    if (!supported(op)) fail(DLRT_UNIMPLEMENTED, "unsupported op " + op.name());
    *out = new dlrt_kernel{std::move(op)};
  });
}

// y[i] = minval + (maxval - minval) * u(seed, rng_offset, i), in double, rounded once.
inline void execute(const dlrt_kernel& k, const KernelArgs10& a) {
  const OpView& op = k.op;
  float* y = static_cast<float*>(a.outputs[0]);
  const int64_t n = op.output(0).numel;
  if (op.name() == "relu") {
    const float* x = static_cast<const float*>(a.inputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
    return;
  }
  const uint64_t seed = static_cast<uint64_t>(op.get_int("seed"));
  const double lo = op.get_float("minval"), hi = op.get_float("maxval");
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(
        lo + (hi - lo) * double(dlrt::philox::uniform(seed, a.rng_offset, uint64_t(i))));
}

// Reads the 1.0 part of the host's args only; a capturing stream keeps a copy of it.
template <typename Stream>
dlrt_status* kernel_run(dlrt_kernel* k, Stream* stream, const dlrt_kernel_args* args) {
  return guard([&] {
    if (args == nullptr || args->struct_size < sizeof(KernelArgs10))
      fail(DLRT_INVALID_ARGUMENT, "kernel args shorter than ABI 1.0's");
    KernelArgs10 a;
    std::memcpy(&a, args, sizeof a);
    if (!stream->capture.on) {
      execute(*k, a);
      return;
    }
    auto ins = std::make_shared<std::vector<const void*>>(a.inputs, a.inputs + a.num_inputs);
    auto outs = std::make_shared<std::vector<void*>>(a.outputs, a.outputs + a.num_outputs);
    stream->capture.work.push_back([k, a, ins, outs]() mutable {
      a.inputs = ins->data();
      a.outputs = outs->data();
      execute(*k, a);
    });
  });
}

inline void kernel_destroy(dlrt_kernel* k) { delete k; }

template <typename Stream>
dlrt_status* capture_begin(Stream* s) {
  return guard([&] {
    if (s->capture.on) fail(DLRT_FAILED_PRECONDITION, "already capturing");
    s->capture.on = true;
    s->capture.work.clear();
  });
}

template <typename Stream>
dlrt_status* capture_end(Stream* s, dlrt_graph_exec** out) {
  *out = nullptr;
  return guard([&] {
    if (!s->capture.on) fail(DLRT_FAILED_PRECONDITION, "not capturing");
    s->capture.on = false;
    *out = new dlrt_graph_exec{std::move(s->capture.work)};
    s->capture.work.clear();
  });
}

template <typename Stream>
dlrt_status* graph_launch(dlrt_graph_exec* g, Stream*) {
  return guard([&] {
    for (auto& w : g->work) w();
  });
}

inline void graph_destroy(dlrt_graph_exec* g) { delete g; }

}  // namespace random_1_0
