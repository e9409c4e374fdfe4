// executable_hpp_test.cc: dlrt.hpp's Graph::compile and Executable over the C API — a small
// training loop written the way a C++ user would (two logical CPUs, one layer each), the
// placement views and the dumps.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(ExecutableHpp, TrainsAcrossTwoLogicalDevices) {
  dlrt::Context ctx(dlrt::ContextOptions()
                        .plugin_path(DLRT_TEST_PLUGIN_DIR)
                        .search_default_paths(false)
                        .plugin_options("")
                        .visible_devices("CPU")
                        .logical_devices("CPU:0", 2));
  ASSERT_EQ(ctx.device_count(), 2u);
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {4, 2});
  dlrt::Value target = g.placeholder("target", DLRT_F32, {4, 1});
  dlrt::Value w, pred;
  {
    dlrt::DeviceScope on0(g, "CPU:0");
    w = g.variable("w", DLRT_F32, {2, 1}, "fill", {{"value", 0.0}});
  }
  {
    dlrt::DeviceScope on1(g, "CPU:1");
    pred = g.op1("matmul", {x, w}, {}, "pred");
  }
  dlrt::Value err = g.op1("sub", {pred, target});
  dlrt::Value loss = g.op1("reduce_mean", {g.op1("mul", {err, err})}, {}, "loss");
  dlrt_value gw = DLRT_INVALID_VALUE, wv = w.get();
  dlrt::check(dlrt_graph_gradients(g.get(), loss.get(), &wv, 1, &gw));
  std::vector<dlrt::Value> grads = {dlrt::Value(g.get(), gw)};
  dlrt::Value vel = g.variable("w/velocity", DLRT_F32, {2, 1}, "fill", {}, false);
  dlrt::Value lr = g.constant<float>("lr", {}, {0.1f});
  std::vector<dlrt::Value> upd = g.op("sgd_update", {w, grads[0], vel, lr});
  g.assign(w, upd[0]);
  g.assign(vel, upd[1]);

  dlrt::Executable step =
      g.compile({x, target}, {loss}, dlrt::CompileOptions().with_run_assigns(true));
  // x . (1, 2) = target: the loss falls towards 0.
  dlrt::Tensor xt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {4, 2});
  xt.write(std::vector<float>{1, 0, 0, 1, 1, 1, 2, 1});
  dlrt::Tensor tt = dlrt::Tensor::create(ctx, 0, DLRT_F32, {4, 1});
  tt.write(std::vector<float>{1, 2, 3, 4});
  std::vector<dlrt::Tensor> out(1);  // empty: the first run makes the loss tensor
  step.run({&xt, &tt}, out);
  const float first = out[0].read<float>()[0];
  for (int i = 0; i < 60; ++i) step.run({&xt, &tt}, out);  // reuses out[0]
  EXPECT_LT(out[0].read<float>()[0], 0.01f * first);
  std::vector<float> learnt = g.read_variable<float>(w);
  EXPECT_NEAR(learnt[0], 1.f, 0.1f);
  EXPECT_NEAR(learnt[1], 2.f, 0.1f);

  bool saw_copy = false;
  for (size_t i = 0; i < step.node_count(); ++i) {
    dlrt::NodePlacement p = step.node_placement(i);
    if (p.name == "pred") {
      EXPECT_EQ(p.requested, "CPU:1");  // as the scope wrote it
      EXPECT_EQ(p.assigned, "/job:localhost/replica:0/task:0/device:CPU:1");
      EXPECT_EQ(p.reason, "explicit");
    }
    saw_copy |= p.op == "copy" && p.reason == "inserted-copy";
  }
  EXPECT_TRUE(saw_copy);
  EXPECT_NE(step.dump(DLRT_DUMP_LOG).find("pred: (matmul): "), std::string::npos);
  EXPECT_EQ(step.dump(DLRT_DUMP_DOT).rfind("digraph", 0), 0u);
}

TEST(ExecutableHpp, CompileErrorsThrow) {
  dlrt::Context ctx(dlrt::ContextOptions()
                        .plugin_path(DLRT_TEST_PLUGIN_DIR)
                        .search_default_paths(false)
                        .plugin_options("")
                        .visible_devices("CPU"));
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2});
  dlrt::Value y = g.op1("relu", {x});
  try {
    g.compile({}, {y});
    FAIL() << "compile without the feed succeeded";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("placeholder 'x'"), std::string::npos) << e.message();
  }
}

}  // namespace
