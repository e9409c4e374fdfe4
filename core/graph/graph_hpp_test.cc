// graph_hpp_test.cc: the C++ graph layer of dlrt.hpp (Graph, Value, OpAttr, DeviceScope) over
// the C API. The requested devices are read from the core's Graph behind the handle, since
// the C API shows them only through a compiled executable's placement.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include "graph/graph_handle.hpp"

namespace {

dlrt::Context make_context() {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .plugin_options("")
                           .visible_devices(""));
}

const dlrt::core::Node& node_of(const dlrt::Value& v) {
  return static_cast<const dlrt::core::Graph*>(v.graph())->node(v.node());
}

TEST(GraphHpp, DeviceScopeAppliesToOpsBuiltInsideIt) {
  dlrt::Context ctx = make_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {4, 8});
  dlrt::Value outside = g.op1("relu", {x});
  dlrt::Value on_ref, on_ref1, inner_cpu;
  {
    dlrt::DeviceScope scope(g, "/REF:0");
    on_ref = g.op1("relu", {x});
    {
      dlrt::DeviceScope inner(g, "cpu");
      inner_cpu = g.op1("sigmoid", {x});
    }
    on_ref1 = g.op1("tanh", {x});
  }
  dlrt::Value after = g.op1("relu", {x});
  EXPECT_EQ(node_of(outside).requested_device, "");
  EXPECT_EQ(node_of(on_ref).requested_device, "/REF:0");
  EXPECT_EQ(node_of(inner_cpu).requested_device, "/device:CPU");
  EXPECT_EQ(node_of(on_ref1).requested_device, "/REF:0");
  EXPECT_EQ(node_of(after).requested_device, "");
  // A bad spec throws from the constructor, so nothing is pushed and nothing is popped.
  EXPECT_THROW(dlrt::DeviceScope(g, "/foo:1"), dlrt::Error);
  EXPECT_THROW(g.pop_device(), dlrt::Error);
}

TEST(GraphHpp, BuildsQueriesAndRoundTripsVariables) {
  dlrt::Context ctx = make_context();
  dlrt::Graph g(ctx);
  dlrt::Value x = g.placeholder("x", DLRT_F32, {2, 6, 6, 1});
  dlrt::Value w = g.variable("w", DLRT_F32, {3, 3, 1, 2}, "random_uniform",
                             {{"minval", -1.0}, {"maxval", 1.0}, {"seed", 11}});
  dlrt::Value y = g.op1("conv2d", {x, w}, {{"padding", "SAME"}, {"strides", {2, 2}}}, "conv");
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3, 3, 2}));
  EXPECT_EQ(y.dtype(), DLRT_F32);
  EXPECT_EQ(g.find("conv"), y);
  EXPECT_EQ(g.find("w:0"), w);
  try {
    g.find("nope");
    FAIL() << "find of a missing name must throw";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_NOT_FOUND);
  }
  dlrt::Value c = g.constant<float>("c", {2}, {1.5f, -2.0f});
  EXPECT_EQ(c.dims(), (std::vector<int64_t>{2}));
  EXPECT_THROW(g.constant<float>("c2", {3}, {1.0f}), dlrt::Error);  // 4 bytes for 12

  dlrt::Value frozen = g.variable("steps", DLRT_I32, {}, "fill", {{"value", 3.0}}, false);
  EXPECT_EQ(g.trainable_variables(), (std::vector<dlrt::Value>{w}));
  EXPECT_EQ(g.read_variable<int32_t>(frozen), (std::vector<int32_t>{3}));
  EXPECT_THROW(g.read_variable<float>(frozen), dlrt::Error);  // wrong element type

  const std::vector<float> before = g.read_variable<float>(w);
  ASSERT_EQ(before.size(), 18u);
  for (float v : before) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  std::vector<float> next(18);
  for (size_t i = 0; i < next.size(); ++i) next[i] = static_cast<float>(i);
  g.write_variable(w, next);
  EXPECT_EQ(g.read_variable<float>(w), next);

  std::vector<dlrt::Value> outs =
      g.op("sparse_softmax_cross_entropy",
           {g.placeholder("logits", DLRT_F32, {2, 5}), g.placeholder("labels", DLRT_I64, {2})});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[1].dims(), (std::vector<int64_t>{2, 5}));
  dlrt::Value sum = g.op1("reduce_sum", {outs[0]}, {{"axes", {0}}, {"keepdims", true}});
  EXPECT_EQ(sum.dims(), (std::vector<int64_t>{1}));
  g.assign(frozen, g.variable("other", DLRT_I32, {}, "fill", {}, false));
  g.colocate(w, y);
}

// Graph::gradients over dlrt_graph_gradients: loss = sum(w * c) + sum(stop_gradient(w * w)), so
// d loss/d w = c (the stopped path adds nothing); a variable the loss does not reach gets
// zeros; a non-scalar loss and a Value of another graph throw, naming what was wrong.
TEST(GraphHpp, GradientsOfVariablesAndTheirErrors) {
  dlrt::Context ctx = make_context();
  dlrt::Graph g(ctx);
  dlrt::Value w = g.variable("w", DLRT_F32, {3}, "fill", {{"value", 2.0}});
  dlrt::Value unused = g.variable("unused", DLRT_F32, {2, 2}, "fill", {{"value", 1.0}});
  dlrt::Value c = g.constant<float>("c", {3}, {0.5f, -1.0f, 3.0f});
  dlrt::Value prod = g.op1("mul", {w, c}, {}, "prod");
  dlrt::Value stopped = g.op1("stop_gradient", {g.op1("mul", {w, w})});
  dlrt::Value loss = g.op1("add", {g.op1("reduce_sum", {prod}), g.op1("reduce_sum", {stopped})},
                           {}, "loss");
  std::vector<dlrt::Value> grads = g.gradients(loss, {w, unused});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(grads[1].dims(), (std::vector<int64_t>{2, 2}));
  dlrt::Executable exe = g.compile({}, {loss, grads[0], grads[1]});
  std::vector<dlrt::Tensor> out(3);
  exe.run({}, out);
  EXPECT_FLOAT_EQ(out[0].read<float>()[0], 2.0f * 2.5f + 12.0f);  // the forward value is whole
  EXPECT_EQ(out[1].read<float>(), (std::vector<float>{0.5f, -1.0f, 3.0f}));
  EXPECT_EQ(out[2].read<float>(), std::vector<float>(4, 0.0f));

  // depends_on: w reaches the loss through prod; through stop_gradient alone it would not;
  // unused does not reach it at all.
  EXPECT_TRUE(g.depends_on(loss, w));
  EXPECT_FALSE(g.depends_on(loss, unused));
  EXPECT_FALSE(g.depends_on(stopped, w));
  EXPECT_TRUE(g.depends_on(w, w));
  EXPECT_FALSE(g.depends_on(w, loss));  // a later node never feeds an earlier one

  // A non-scalar loss: INVALID_ARGUMENT naming the value and its type; nothing added.
  try {
    g.gradients(prod, {w});
    FAIL() << "gradients of a (3) loss succeeded";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'prod' f32(3)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scalar"), std::string::npos) << e.what();
  }
  // An integer wrt is refused by the core, a Value of another graph by the wrapper.
  dlrt::Value steps = g.variable("steps", DLRT_I32, {}, "fill", {{"value", 0.0}}, false);
  EXPECT_THROW(g.gradients(loss, {steps}), dlrt::Error);
  dlrt::Graph other(ctx);
  dlrt::Value foreign = other.placeholder("x", DLRT_F32, {3});
  try {
    g.gradients(loss, {w, foreign});
    FAIL() << "a value of another graph was accepted";
  } catch (const dlrt::Error& e) {
    EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("wrt[1]"), std::string::npos) << e.what();
  }
}

}  // namespace
