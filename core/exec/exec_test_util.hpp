// exec_test_util.hpp: helpers shared by the executor's tests (header-only, test code only):
// a context on this build tree's plugins, tensors from vectors and back, the small graphs the
// tests compile (TwoLayers: two dense layers that scopes may split across devices; Mlp: a
// 4 -> 16 -> 3 classifier with autodiff gradients and optimizer updates assigned back to its
// variables) and a toy data set.
#pragma once

#include <dlrt/dlrt.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/autodiff.hpp"
#include "context.hpp"
#include "exec/executable.hpp"
#include "graph/graph.hpp"
#include "status.hpp"
#include "tensor.hpp"

#ifndef DLRT_TEST_PLUGIN_DIR
#error "DLRT_TEST_PLUGIN_DIR (the build tree's plugin folder) must be defined by the build"
#endif

namespace dlrt::core::exec_test {

using ops::TensorType;
using TensorPtr = std::unique_ptr<dlrt_tensor>;

// A context on the build tree's plugins, environment ignored. `split_cpu` > 1 splits CPU:0
// into that many logical devices.
inline std::unique_ptr<dlrt_context> make_context(const char* visible, int split_cpu = 1) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
  o.plugin_paths = paths;
  o.num_plugin_paths = 1;
  o.search_default_paths = 0;
  o.visible_devices = visible;
  o.plugin_options = "";
  dlrt_logical_device_config split{};
  split.struct_size = sizeof(split);
  split.physical_device = "CPU:0";
  split.count = split_cpu;
  if (split_cpu > 1) {
    o.logical_devices = &split;
    o.num_logical_devices = 1;
  }
  return std::make_unique<dlrt_context>(&o, [](const char*) -> const char* { return nullptr; });
}

template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

inline TensorPtr tensor(Context& ctx, size_t device, TensorType type,
                        const std::vector<float>& data) {
  auto t = std::make_unique<dlrt_tensor>(ctx, device, std::move(type));
  t->write(data.data(), data.size() * sizeof(float));
  return t;
}

template <typename T = float>
std::vector<T> read(const dlrt_tensor& t) {
  std::vector<T> v(t.byte_size() / sizeof(T));
  t.read(v.data(), t.byte_size());
  return v;
}

inline std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

inline std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// x(4,3) -> matmul w(3,5) -> bias_add b(5) -> relu -> matmul w2(5,2); the two layers may be
// put on different devices by scope.
struct TwoLayers {
  std::vector<float> w = random_floats(15, 1), b = random_floats(5, 2), w2 = random_floats(10, 3);
  ValueRef x, h, y;
  void build(Graph& g, const std::string& dev1 = "", const std::string& dev2 = "") {
    x = g.add_placeholder("x", {DLRT_F32, {4, 3}});
    if (!dev1.empty()) g.push_device(dev1);
    ValueRef wv = g.add_constant("w", {DLRT_F32, {3, 5}}, bytes_of(w));
    ValueRef bv = g.add_constant("b", {DLRT_F32, {5}}, bytes_of(b));
    ValueRef mm = g.add_op("matmul", "mm", {x, wv}, {}).at(0);
    ValueRef ba = g.add_op("bias_add", "ba", {mm, bv}, {}).at(0);
    h = g.add_op("relu", "h", {ba}, {}).at(0);
    if (!dev1.empty()) g.pop_device();
    if (!dev2.empty()) g.push_device(dev2);
    ValueRef w2v = g.add_constant("w2", {DLRT_F32, {5, 2}}, bytes_of(w2));
    y = g.add_op("matmul", "y", {h, w2v}, {}).at(0);
    if (!dev2.empty()) g.pop_device();
  }
};

inline const std::vector<float> kX = random_floats(12, 4);

// Compile options that run the graph as built: no graph passes (which would fuse TwoLayers'
// matmul, bias_add and relu into one matmul_bias_act; core/passes tests that). For tests that
// count kernels or trace events per op.
inline const CompileOptions kAsBuilt = [] {
  CompileOptions o;
  o.graph_passes = "none";
  return o;
}();

// Compile options of a training step: every assign of the graph runs.
inline const CompileOptions kTrain = [] {
  CompileOptions o;
  o.run_assigns = true;
  return o;
}();

// An MLP 4 -> 16 -> 3 on a separable toy problem, trained with gradients from autodiff and
// an optimizer update assigned back to each variable (in place).
struct Mlp {
  ValueRef x, labels, logits, loss;
  std::vector<ValueRef> vars;
  void build(Graph& g, const std::string& optimizer, int batch) {
    x = g.add_placeholder("x", {DLRT_F32, {batch, 4}});
    labels = g.add_placeholder("labels", {DLRT_I32, {batch}});
    auto var = [&](const char* name, ops::Dims dims, int seed) {
      ValueRef v = g.add_variable(name, {DLRT_F32, dims}, "random_uniform",
                                  {{"minval", -0.5}, {"maxval", 0.5}, {"seed", seed}}, true);
      vars.push_back(v);
      return v;
    };
    ValueRef w1 = var("w1", {4, 16}, 1), b1 = var("b1", {16}, 2);
    ValueRef w2 = var("w2", {16, 3}, 3), b2 = var("b2", {3}, 4);
    ValueRef h = g.add_op(
        "relu", "h",
        {g.add_op("bias_add", "", {g.add_op("matmul", "", {x, w1}, {})[0], b1}, {})[0]}, {})[0];
    logits = g.add_op("bias_add", "logits", {g.add_op("matmul", "", {h, w2}, {})[0], b2}, {})[0];
    ValueRef xent = g.add_op("sparse_softmax_cross_entropy", "xent", {logits, labels}, {})[0];
    loss = g.add_op("reduce_mean", "loss", {xent}, {})[0];
    std::vector<ValueRef> grads = gradients(g, loss, vars);
    ValueRef step;
    if (optimizer == "adam") {
      ValueRef one = g.add_constant("one", {DLRT_F32, {}}, bytes_of({1.f}));
      ValueRef counter = g.add_variable("step", {DLRT_F32, {}}, "fill", {{"value", 0.0}}, false);
      step = g.add_op("add", "next_step", {counter, one}, {})[0];
      g.add_assign(counter, step);
    }
    for (size_t i = 0; i < vars.size(); ++i) {
      const TensorType& t = g.type_of(vars[i]);
      auto slot = [&](const char* what) {
        return g.add_variable(g.node(vars[i].node).name + "/" + what, t, "fill", {}, false);
      };
      if (optimizer == "adam") {
        ValueRef m = slot("m"), v = slot("v");
        ValueRef lr = g.add_constant("", {DLRT_F32, {}}, bytes_of({0.02f}));
        auto out = g.add_op("adam_update", "", {vars[i], grads[i], m, v, step, lr}, {});
        g.add_assign(vars[i], out[0]);
        g.add_assign(m, out[1]);
        g.add_assign(v, out[2]);
      } else {
        ValueRef vel = slot("velocity");
        ValueRef lr = g.add_constant("", {DLRT_F32, {}}, bytes_of({0.2f}));
        auto out = g.add_op("sgd_update", "", {vars[i], grads[i], vel, lr}, {{"momentum", 0.9}});
        g.add_assign(vars[i], out[0]);
        g.add_assign(vel, out[1]);
      }
    }
  }
};

// Class = which of three fixed directions x is closest to.
inline void toy_batch(int batch, unsigned seed, std::vector<float>& x, std::vector<int32_t>& y) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.f, 0.3f);
  const float centres[3][4] = {{1, 0, 0, 1}, {0, 1, 1, 0}, {-1, -1, 0, 0}};
  x.resize(batch * 4);
  y.resize(batch);
  for (int n = 0; n < batch; ++n) {
    y[n] = n % 3;
    for (int k = 0; k < 4; ++k) x[n * 4 + k] = centres[y[n]][k] + noise(gen);
  }
}

}  // namespace dlrt::core::exec_test
