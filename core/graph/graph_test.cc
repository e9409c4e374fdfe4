// graph_test.cc: core::Graph — building, shape inference pass-through, names, device scopes,
// colocation, assigns, find — and VariableStore's placement and initialisation on the real
// cpu and reference plugins of this build tree.
#include "graph/graph.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "graph/variable_store.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

using ops::TensorType;

// A context with the given plugins' folder (or none) and options; the environment is ignored.
std::unique_ptr<Context> make_context(bool with_plugins, const char* plugin_options = "",
                                      bool soft_placement = true) {
  dlrt_context_options o;
  dlrt_context_options_init(&o);
  o.soft_placement = soft_placement ? 1 : 0;
  const char* paths[] = {DLRT_TEST_PLUGIN_DIR};
  o.plugin_paths = with_plugins ? paths : nullptr;
  o.num_plugin_paths = with_plugins ? 1 : 0;
  o.search_default_paths = 0;
  o.plugin_options = plugin_options;
  o.visible_devices = "";
  return std::make_unique<Context>(&o, [](const char*) -> const char* { return nullptr; });
}

// The code and message of the Error `fn` throws (DLRT_OK, "" when it throws nothing).
template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

class GraphTest : public ::testing::Test {
 protected:
  std::unique_ptr<Context> ctx_ = make_context(false);
  Graph g_{*ctx_};

  ValueRef x_ = g_.add_placeholder("x", {DLRT_F32, {8, 28, 28, 1}});
  ValueRef var(const std::string& name, ops::Dims dims) {
    return g_.add_variable(name, {DLRT_F32, std::move(dims)}, "random_uniform",
                           {{"minval", -0.1}, {"maxval", 0.1}, {"seed", 7}}, true);
  }
  ValueRef op1(const std::string& op, std::vector<ValueRef> in, ops::AttrMap attrs = {}) {
    return g_.add_op(op, "", in, attrs).at(0);
  }
};

TEST_F(GraphTest, SmallCnnInfersShapes) {
  ValueRef w1 = var("w1", {3, 3, 1, 32}), b1 = var("b1", {32});
  ValueRef c1 = op1("relu", {op1("bias_add", {op1("conv2d", {x_, w1}), b1})});
  EXPECT_EQ(g_.type_of(c1), (TensorType{DLRT_F32, {8, 26, 26, 32}}));
  ValueRef p1 = op1("max_pool2d", {c1});
  EXPECT_EQ(g_.type_of(p1), (TensorType{DLRT_F32, {8, 13, 13, 32}}));
  ValueRef w2 = var("w2", {3, 3, 32, 64});
  ValueRef c2 = op1("conv2d", {p1, w2}, {{"padding", "SAME"}, {"strides", ops::Ints{2, 2}}});
  EXPECT_EQ(g_.type_of(c2), (TensorType{DLRT_F32, {8, 7, 7, 64}}));
  ValueRef f = op1("flatten", {c2});
  EXPECT_EQ(g_.type_of(f), (TensorType{DLRT_F32, {8, 3136}}));
  ValueRef logits = op1("matmul", {f, var("w3", {3136, 10})});
  EXPECT_EQ(g_.type_of(logits), (TensorType{DLRT_F32, {8, 10}}));
  ValueRef labels = g_.add_placeholder("labels", {DLRT_I32, {8}});
  std::vector<ValueRef> xent =
      g_.add_op("sparse_softmax_cross_entropy", "loss", {logits, labels}, {});
  ASSERT_EQ(xent.size(), 2u);
  EXPECT_EQ(g_.type_of(xent[0]), (TensorType{DLRT_F32, {8}}));
  EXPECT_EQ(g_.type_of(xent[1]), (TensorType{DLRT_F32, {8, 10}}));
  // Defaults are filled: the node holds the complete attribute set.
  EXPECT_EQ(g_.node(c2.node).attrs.at("dilations"), ops::AttrValue(ops::Ints{1, 1}));
  EXPECT_EQ(g_.node(c2.node).attrs.at("data_format"), ops::AttrValue("NHWC"));
  // Nodes are in topological order: every input is an earlier node.
  for (const Node& n : g_.nodes())
    for (ValueRef in : n.inputs) EXPECT_LT(in.node, n.id) << n.name;
}

TEST_F(GraphTest, ShapeErrorsPassThroughAndChangeNothing) {
  ValueRef w = var("w", {3, 3, 3, 16});  // Ci 3, but x has 1 channel
  const size_t before = g_.nodes().size();
  auto [code, msg] = error_of([&] { g_.add_op("conv2d", "", {x_, w}, {}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("conv2d: input 1 (w)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dim 2"), std::string::npos) << msg;
  EXPECT_EQ(g_.nodes().size(), before);
  // Unknown op: NOT_FOUND from the registry; a bad attribute names it.
  EXPECT_EQ(error_of([&] { g_.add_op("conv3d", "", {x_}, {}); }).first, DLRT_NOT_FOUND);
  auto bad_attr = error_of([&] { g_.add_op("max_pool2d", "", {x_}, {{"padding", "FULL"}}); });
  EXPECT_EQ(bad_attr.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_attr.second.find("padding"), std::string::npos) << bad_attr.second;
  // A value of no node: the input index is named.
  auto bad_value = error_of([&] { g_.add_op("relu", "", {ValueRef{999, 0}}, {}); });
  EXPECT_EQ(bad_value.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_value.second.find("relu: input 0"), std::string::npos) << bad_value.second;
  EXPECT_EQ(g_.nodes().size(), before);
  // The failed calls took no names: the next relu is still "relu".
  EXPECT_EQ(g_.node(op1("relu", {x_}).node).name, "relu");
}

TEST_F(GraphTest, UniqueAndDuplicateNames) {
  EXPECT_EQ(g_.node(op1("relu", {x_}).node).name, "relu");
  EXPECT_EQ(g_.node(op1("relu", {x_}).node).name, "relu_1");
  g_.add_op("relu", "relu_2", {x_}, {});                      // a caller takes the next one
  EXPECT_EQ(g_.node(op1("relu", {x_}).node).name, "relu_3");  // ... so it is skipped
  EXPECT_EQ(g_.node(g_.add_placeholder("", {DLRT_F32, {2}}).node).name, "placeholder");

  const size_t before = g_.nodes().size();
  auto dup = error_of([&] { g_.add_op("sigmoid", "relu", {x_}, {}); });
  EXPECT_EQ(dup.first, DLRT_ALREADY_EXISTS);
  EXPECT_NE(dup.second.find("'relu'"), std::string::npos) << dup.second;
  EXPECT_EQ(error_of([&] { g_.add_placeholder("x", {DLRT_F32, {1}}); }).first, DLRT_ALREADY_EXISTS);
  EXPECT_EQ(error_of([&] { var("x", {1}); }).first, DLRT_ALREADY_EXISTS);
  EXPECT_EQ(error_of([&] { g_.add_op("relu", "a:0", {x_}, {}); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(g_.nodes().size(), before);
}

TEST_F(GraphTest, ConstantsAndPlaceholdersAreChecked) {
  std::vector<uint8_t> six_floats(24);
  ValueRef c = g_.add_constant("c", {DLRT_F32, {2, 3}}, six_floats);
  EXPECT_EQ(g_.node(c.node).constant_data->size(), 24u);
  auto [code, msg] = error_of([&] {
    g_.add_constant("d", {DLRT_F32, {2, 3}}, std::vector<uint8_t>(20));
  });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("20 bytes"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] {
              g_.add_placeholder("p", {DLRT_F32, {2, 0}});
            }).first,
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] {
              g_.add_placeholder("p", {DLRT_DTYPE_INVALID, {2}});
            }).first,
            DLRT_INVALID_ARGUMENT);
}

TEST_F(GraphTest, VariableInitOpIsCheckedAtBuildTime) {
  EXPECT_EQ(error_of([&] {
              g_.add_variable("v", {DLRT_F32, {2}}, "no_such_op", {}, true);
            }).first,
            DLRT_NOT_FOUND);
  auto with_inputs = error_of([&] { g_.add_variable("v", {DLRT_F32, {2}}, "relu", {}, true); });
  EXPECT_EQ(with_inputs.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(with_inputs.second.find("takes 1 input"), std::string::npos) << with_inputs.second;
  auto bad_range = error_of([&] {
    g_.add_variable("v", {DLRT_F32, {2}}, "random_uniform", {{"minval", 1.0}, {"maxval", 0.0}},
                    true);
  });
  EXPECT_EQ(bad_range.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(bad_range.second.find("variable 'v': random_uniform"), std::string::npos)
      << bad_range.second;
  EXPECT_NE(bad_range.second.find("minval"), std::string::npos) << bad_range.second;
  auto shape_clash = error_of([&] {
    g_.add_variable("v", {DLRT_F32, {2}}, "fill", {{"shape", ops::Ints{3}}}, true);
  });
  EXPECT_EQ(shape_clash.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(shape_clash.second.find("'shape'"), std::string::npos) << shape_clash.second;
  // Integer variables take fill, not random_uniform (float only).
  EXPECT_EQ(error_of([&] {
              g_.add_variable("v", {DLRT_I32, {2}}, "random_uniform", {}, false);
            }).first,
            DLRT_INVALID_ARGUMENT);
  ValueRef step = g_.add_variable("step", {DLRT_I32, {}}, "fill", {{"value", 0.0}}, false);
  const Node& n = g_.node(step.node);
  EXPECT_EQ(n.init_attrs.at("dtype"), ops::AttrValue(DLRT_I32));
  EXPECT_EQ(n.init_attrs.at("shape"), ops::AttrValue(ops::Ints{}));
  EXPECT_EQ(g_.trainable_variables().size(), 0u);
}

TEST_F(GraphTest, DeviceScopesNestMergeAndPop) {
  ValueRef outside = op1("relu", {x_});
  g_.push_device("/job:localhost");
  ValueRef in_job = op1("relu", {x_});
  g_.push_device("/GPU:0");
  ValueRef in_gpu = op1("relu", {x_});
  g_.push_device("");  // clears the request
  ValueRef cleared = op1("relu", {x_});
  g_.pop_device();
  g_.push_device("cpu");  // overrides the device part, keeps the job
  ValueRef in_cpu = op1("relu", {x_});
  g_.pop_device();
  g_.pop_device();
  ValueRef back = op1("relu", {x_});
  g_.pop_device();
  ValueRef after = op1("relu", {x_});

  EXPECT_EQ(g_.node(outside.node).requested_device, "");
  EXPECT_FALSE(g_.node(outside.node).requested.has_value());
  EXPECT_EQ(g_.node(in_job.node).requested_device, "/job:localhost");
  EXPECT_EQ(g_.node(in_gpu.node).requested_device, "/job:localhost/device:GPU:0");
  ASSERT_TRUE(g_.node(in_gpu.node).requested.has_value());
  EXPECT_EQ(g_.node(in_gpu.node).requested->type, "GPU");
  EXPECT_EQ(g_.node(in_gpu.node).requested->index, 0);
  EXPECT_EQ(g_.node(cleared.node).requested_device, "");
  EXPECT_EQ(g_.node(in_cpu.node).requested_device, "/job:localhost/device:CPU");
  EXPECT_EQ(g_.node(in_cpu.node).requested->index, -1);  // any CPU: the index is placement's
  EXPECT_EQ(g_.node(back.node).requested_device, "/job:localhost");
  EXPECT_EQ(g_.node(after.node).requested_device, "");

  auto [code, msg] = error_of([&] { g_.pop_device(); });
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_NE(msg.find("no device scope"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { g_.push_device("/foo:1"); }).first, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(error_of([&] { g_.pop_device(); }).first, DLRT_FAILED_PRECONDITION);  // not pushed

  g_.push_device("REF:1");  // variables and placeholders take the request too
  EXPECT_EQ(g_.node(var("v", {2}).node).requested_device, "REF:1");
  EXPECT_EQ(g_.node(g_.add_placeholder("p", {DLRT_F32, {2}}).node).requested_device, "REF:1");
}

TEST_F(GraphTest, ColocationGroupsJoin) {
  ValueRef a = op1("relu", {x_}), b = op1("relu", {x_}), c = op1("relu", {x_}),
           d = op1("relu", {x_});
  EXPECT_FALSE(g_.node(a.node).colocation_group.has_value());
  g_.colocate(a, b);
  g_.colocate(c, d);
  EXPECT_EQ(g_.node(a.node).colocation_group, g_.node(b.node).colocation_group);
  EXPECT_NE(g_.node(a.node).colocation_group, g_.node(c.node).colocation_group);
  g_.colocate(b, d);  // the two groups become one
  for (ValueRef v : {b, c, d})
    EXPECT_EQ(g_.node(v.node).colocation_group, g_.node(a.node).colocation_group);
  EXPECT_FALSE(g_.node(x_.node).colocation_group.has_value());
  EXPECT_EQ(error_of([&] { g_.colocate(a, ValueRef{a.node, 5}); }).first, DLRT_INVALID_ARGUMENT);
}

TEST_F(GraphTest, AssignChecksKindAndType) {
  ValueRef w = var("w", {4, 3});
  ValueRef same = op1("relu", {w});
  ValueRef other = g_.add_placeholder("p", {DLRT_F32, {3, 4}});
  auto mismatch = error_of([&] { g_.add_assign(w, other); });
  EXPECT_EQ(mismatch.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(mismatch.second.find("f32(4,3)"), std::string::npos) << mismatch.second;
  EXPECT_NE(mismatch.second.find("f32(3,4)"), std::string::npos) << mismatch.second;
  auto not_var = error_of([&] { g_.add_assign(same, w); });
  EXPECT_EQ(not_var.first, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(not_var.second.find("not a variable"), std::string::npos) << not_var.second;
  EXPECT_TRUE(g_.assigns().empty());
  g_.add_assign(w, same);
  ASSERT_EQ(g_.assigns().size(), 1u);
  EXPECT_EQ(g_.assigns()[0].variable, w.node);
  EXPECT_EQ(g_.assigns()[0].value, same);
  EXPECT_EQ(error_of([&] { g_.add_assign(w, w); }).first, DLRT_ALREADY_EXISTS);
}

TEST_F(GraphTest, FindNameAndOutput) {
  ValueRef logits = g_.add_placeholder("logits", {DLRT_F32, {4, 10}});
  ValueRef labels = g_.add_placeholder("labels", {DLRT_I32, {4}});
  std::vector<ValueRef> out =
      g_.add_op("sparse_softmax_cross_entropy", "xent", {logits, labels}, {});
  EXPECT_EQ(g_.find("xent"), out[0]);
  EXPECT_EQ(g_.find("xent:0"), out[0]);
  EXPECT_EQ(g_.find("xent:1"), out[1]);
  EXPECT_FALSE(g_.find("xent:2").has_value());
  EXPECT_FALSE(g_.find("xent:").has_value());
  EXPECT_FALSE(g_.find("xent:x").has_value());
  EXPECT_FALSE(g_.find("nothing").has_value());
  EXPECT_EQ(g_.find("x"), x_);
}

TEST_F(GraphTest, TrainableVariablesInCreationOrder) {
  ValueRef a = var("a", {2});
  g_.add_variable("frozen", {DLRT_F32, {2}}, "fill", {}, false);
  ValueRef b = var("b", {3});
  EXPECT_EQ(g_.trainable_variables(), (std::vector<NodeId>{a.node, b.node}));
}

// ---- variables on real devices ---------------------------------------------------------------

std::vector<float> read_floats(Context& ctx, const VariableSlot& slot) {
  std::vector<float> out(slot.buffer.size() / sizeof(float));
  auto [api, device] = ctx.device_handle(slot.device);
  EXPECT_EQ(api->memcpy_d2h(device, out.data(), slot.buffer.data(), slot.buffer.size(), nullptr),
            nullptr);
  return out;
}

TEST(VariableStore, SeededUniformIsTheSameOnCpuAndReference) {
  std::unique_ptr<Context> ctx = make_context(true);
  const size_t cpu = ctx->registry().find("CPU:0"), ref = ctx->registry().find("REF:0");
  Graph g(*ctx);
  const ops::AttrMap init = {{"minval", -2.0}, {"maxval", 3.0}, {"seed", 1234}};
  ValueRef a = g.add_variable("a", {DLRT_F32, {5, 7}}, "random_uniform", init, true);
  ValueRef b = g.add_variable("b", {DLRT_F32, {5, 7}}, "random_uniform", init, true);
  std::vector<float> on_cpu = read_floats(*ctx, g.variables().place_and_init(a.node, cpu));
  std::vector<float> on_ref = read_floats(*ctx, g.variables().place_and_init(b.node, ref));
  ASSERT_EQ(on_cpu.size(), 35u);
  EXPECT_EQ(on_cpu, on_ref);  // Philox is the same stream everywhere
  for (float v : on_cpu) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
  }
  EXPECT_NE(on_cpu[0], on_cpu[1]);
  // Placed once: asking again for the same device gives the same slot, another device fails.
  EXPECT_EQ(&g.variables().place_and_init(a.node, cpu), g.variables().find(a.node));
  EXPECT_EQ(error_of([&] { g.variables().place_and_init(a.node, ref); }).first,
            DLRT_FAILED_PRECONDITION);
}

TEST(VariableStore, FillGivesExactValuesAndEnsureFollowsTheRequest) {
  std::unique_ptr<Context> ctx = make_context(true);
  Graph g(*ctx);
  ValueRef plain = g.add_variable("plain", {DLRT_F32, {3, 2}}, "fill", {{"value", 0.25}}, true);
  g.push_device("REF:0");
  ValueRef on_ref = g.add_variable("on_ref", {DLRT_F32, {4}}, "fill", {{"value", -1.5}}, true);
  g.pop_device();
  g.push_device("GPU:3");
  ValueRef missing = g.add_variable("missing", {DLRT_F32, {4}}, "fill", {}, true);
  g.pop_device();

  const VariableSlot& s1 = g.variables().ensure(plain.node);
  EXPECT_EQ(s1.device, ctx->registry().find("CPU:0"));  // no GPU here: CPU before REF (class cpu)
  EXPECT_TRUE(s1.initialized);
  EXPECT_EQ(read_floats(*ctx, s1), std::vector<float>(6, 0.25f));
  const VariableSlot& s2 = g.variables().ensure(on_ref.node);
  EXPECT_EQ(s2.device, ctx->registry().find("REF:0"));
  EXPECT_EQ(read_floats(*ctx, s2), std::vector<float>(4, -1.5f));
  // A missing device: soft placement (the default) falls back as compile would...
  EXPECT_EQ(g.variables().ensure(missing.node).device, ctx->registry().find("CPU:0"));

  // ...strict placement refuses, naming the request, and places nothing.
  std::unique_ptr<Context> strict = make_context(true, "", /*soft_placement=*/false);
  Graph h(*strict);
  h.push_device("GPU:3");
  ValueRef refused = h.add_variable("missing", {DLRT_F32, {4}}, "fill", {}, true);
  h.pop_device();
  auto [code, msg] = error_of([&] { h.variables().ensure(refused.node); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("GPU:3"), std::string::npos) << msg;
  EXPECT_EQ(h.variables().find(refused.node), nullptr);  // nothing placed on failure
}

TEST(VariableStore, InitRunsElsewhereWhenTheDeviceHasNoKernel) {
  // REF:0 runs only relu: its variable is born on CPU:0 and copied over.
  std::unique_ptr<Context> ctx = make_context(true, "reference:ops=relu");
  Graph g(*ctx);
  g.push_device("REF:0");
  ValueRef v = g.add_variable("v", {DLRT_F32, {3}}, "fill", {{"value", 2.0}}, true);
  g.pop_device();
  const VariableSlot& s = g.variables().ensure(v.node);
  EXPECT_EQ(s.device, ctx->registry().find("REF:0"));
  EXPECT_EQ(read_floats(*ctx, s), std::vector<float>(3, 2.0f));
}

}  // namespace
}  // namespace dlrt::core
