// executable_test.cc: compiled graphs on this build tree's real plugins (cpu, reference):
// results equal eager execution, one device equals two logical devices (copies inserted),
// an MLP trains through autodiff and in-place optimizer updates, runs allocate and create
// nothing, feeds and fetches on other devices, feed errors, variables seen across runs and
// executables (run_assigns_test.cc: training and evaluation executables of one graph).
#include "exec/executable.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "autodiff/autodiff.hpp"
#include "context.hpp"
#include "eager.hpp"
#include "exec/compiled.hpp"
#include "exec/exec_test_util.hpp"
#include "graph/variable_store.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace dlrt::core {
namespace {

using namespace exec_test;  // NOLINT: the shared test helpers

TEST(Executable, MatchesEagerOps) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  TwoLayers net;
  net.build(g);
  auto ex = Executable::compile(g, {net.x}, {net.h, net.y}, kAsBuilt);

  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  std::vector<dlrt_tensor*> out(2, nullptr);
  ex->run({x.get()}, out);
  TensorPtr h(out[0]), y(out[1]);

  // The same ops, one at a time through dlrt_op_run.
  TensorPtr w = tensor(*ctx, 0, {DLRT_F32, {3, 5}}, net.w);
  TensorPtr b = tensor(*ctx, 0, {DLRT_F32, {5}}, net.b);
  TensorPtr w2 = tensor(*ctx, 0, {DLRT_F32, {5, 2}}, net.w2);
  auto op = [&](const char* name, std::vector<const dlrt_tensor*> in) {
    dlrt_tensor* o = nullptr;
    dlrt_status* s = dlrt_op_run(ctx.get(), name, 0, in.data(), in.size(), nullptr, 0, &o, 1);
    EXPECT_EQ(s, nullptr) << dlrt_status_message(s);
    return TensorPtr(o);
  };
  TensorPtr e_mm = op("matmul", {x.get(), w.get()});
  TensorPtr e_ba = op("bias_add", {e_mm.get(), b.get()});
  TensorPtr e_h = op("relu", {e_ba.get()});
  TensorPtr e_y = op("matmul", {e_h.get(), w2.get()});
  EXPECT_EQ(read(*h), read(*e_h));
  EXPECT_EQ(read(*y), read(*e_y));
  EXPECT_EQ(ex->stats().kernels, 4u);
  EXPECT_EQ(ex->stats().run_allocations, 0u);
}

TEST(Executable, OneDeviceEqualsTwoLogicalDevices) {
  auto ctx = make_context("CPU", 2);
  ASSERT_EQ(ctx->registry().devices().size(), 2u);
  Graph one(*ctx), two(*ctx);
  TwoLayers a, b;
  a.build(one, "CPU:0", "CPU:0");
  b.build(two, "CPU:0", "CPU:1");
  auto ex1 = Executable::compile(one, {a.x}, {a.y}, {});
  auto ex2 = Executable::compile(two, {b.x}, {b.y}, {});

  size_t copies = 0;
  for (const PlacedNode& p : ex2->placed().nodes) {
    copies += p.is_copy;
    if (!p.is_copy && two.node(p.source).name == "y") EXPECT_EQ(p.device, 1u);
    if (!p.is_copy && two.node(p.source).name == "h") EXPECT_EQ(p.device, 0u);
  }
  EXPECT_EQ(copies, 1u);  // h from CPU:0 to CPU:1
  for (const PlacedNode& p : ex1->placed().nodes) EXPECT_FALSE(p.is_copy);

  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {4, 3}}, kX);
  // The fetch tensor of the split run lives on CPU:0 although y is made on CPU:1.
  TensorPtr y1 = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {4, 2}});
  TensorPtr y2 = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {4, 2}});
  for (int run = 0; run < 3; ++run) {
    std::vector<dlrt_tensor*> o1{y1.get()}, o2{y2.get()};
    ex1->run({x.get()}, o1);
    ex2->run({x.get()}, o2);
    EXPECT_EQ(read(*y1), read(*y2));
  }
  EXPECT_EQ(ex2->stats().run_allocations, 0u);
}

void train_lowers_loss(const std::string& optimizer) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  Mlp mlp;
  const int batch = 30;
  mlp.build(g, optimizer, batch);
  auto ex = Executable::compile(g, {mlp.x, mlp.labels}, {mlp.loss}, kTrain);
  auto* compiled = dynamic_cast<exec::CompiledExecutable*>(ex.get());
  ASSERT_NE(compiled, nullptr);
  // Every optimizer output goes straight into its variable (adam's step counter is an add,
  // which has no in-place form).
  EXPECT_EQ(compiled->in_place_assigns, optimizer == "adam" ? 12u : 8u);
  EXPECT_EQ(compiled->assign_copies.size(), optimizer == "adam" ? 1u : 0u);

  std::vector<float> xs;
  std::vector<int32_t> ys;
  toy_batch(batch, 5, xs, ys);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {batch, 4}}, xs);
  auto labels = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_I32, {batch}});
  labels->write(ys.data(), ys.size() * sizeof(int32_t));
  TensorPtr loss = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {}});
  std::vector<float> losses;
  for (int step = 0; step < 40; ++step) {
    std::vector<dlrt_tensor*> out{loss.get()};
    ex->run({x.get(), labels.get()}, out);
    losses.push_back(read(*loss)[0]);
  }
  EXPECT_GT(losses.front(), 0.5f);  // about ln 3 at random init
  EXPECT_LT(losses.back(), 0.25f * losses.front())
      << "first " << losses.front() << " last " << losses.back();
  EXPECT_EQ(ex->stats().run_allocations, 0u);
}

TEST(Executable, TrainsMlpWithSgd) { train_lowers_loss("sgd"); }
TEST(Executable, TrainsMlpWithAdam) { train_lowers_loss("adam"); }

TEST(Executable, RunsAllocateAndCreateNothing) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  Mlp mlp;
  mlp.build(g, "sgd", 6);
  auto ex = Executable::compile(g, {mlp.x, mlp.labels}, {mlp.loss}, kTrain);
  const size_t kernels = ex->stats().kernels;
  EXPECT_GT(kernels, 10u);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {6, 4}}, random_floats(24, 9));
  auto labels = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_I32, {6}});
  std::vector<int32_t> ys = {0, 1, 2, 0, 1, 2};
  labels->write(ys.data(), ys.size() * sizeof(int32_t));
  TensorPtr loss = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {}});

  const uint64_t eager_runs = ctx->eager().runs();
  const uint64_t tensor_bytes = ctx->eager().bytes_in_use(0);
  const uint64_t blocks = exec::device_allocations();
  for (int i = 0; i < 5; ++i) {
    std::vector<dlrt_tensor*> out{loss.get()};
    ex->run({x.get(), labels.get()}, out);
  }
  EXPECT_EQ(ex->stats().run_allocations, 0u);
  EXPECT_EQ(exec::device_allocations(), blocks);
  EXPECT_EQ(ctx->eager().bytes_in_use(0), tensor_bytes);  // no tensor made
  EXPECT_EQ(ctx->eager().runs(), eager_runs);             // no eager op (no kernel made)
  EXPECT_EQ(ex->stats().kernels, kernels);
  // The CPU plugin offers no capture table, so nothing was replayed.
  EXPECT_EQ(ex->stats().captured_replays, 0u);
}

TEST(Executable, FeedsAndFetchesOnAnotherPlugin) {
  auto ctx = make_context("CPU,REF");
  const size_t cpu = ctx->registry().find("CPU:0"), ref = ctx->registry().find("REF:0");
  Graph g(*ctx);
  TwoLayers net;
  net.build(g, "CPU:0", "CPU:0");
  auto ex = Executable::compile(g, {net.x}, {net.y}, {});
  TensorPtr x_cpu = tensor(*ctx, cpu, {DLRT_F32, {4, 3}}, kX);
  TensorPtr x_ref = tensor(*ctx, ref, {DLRT_F32, {4, 3}}, kX);
  TensorPtr y_ref = std::make_unique<dlrt_tensor>(*ctx, ref, TensorType{DLRT_F32, {4, 2}});
  std::vector<dlrt_tensor*> a{nullptr}, b{y_ref.get()};
  ex->run({x_cpu.get()}, a);
  TensorPtr y_cpu(a[0]);
  EXPECT_EQ(y_cpu->device(), cpu);  // a new fetch tensor lives where the value is made
  ex->run({x_ref.get()}, b);        // staged through host memory both ways
  EXPECT_EQ(read(*y_cpu), read(*y_ref));
  EXPECT_EQ(ex->stats().run_allocations, 0u);
}

TEST(Executable, FeedErrorsNameThePlaceholder) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  TwoLayers net;
  net.build(g);
  auto [code, msg] = error_of([&] { Executable::compile(g, {}, {net.y}, {}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("placeholder 'x' (f32(4,3)) is needed by the fetches but not fed"),
            std::string::npos)
      << msg;
  std::tie(code, msg) = error_of([&] { Executable::compile(g, {net.h}, {net.y}, {}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("feed 'h' is not a placeholder"), std::string::npos) << msg;

  auto ex = Executable::compile(g, {net.x}, {net.y}, {});
  TensorPtr wrong = tensor(*ctx, 0, {DLRT_F32, {3, 4}}, kX);
  std::vector<dlrt_tensor*> out{nullptr};
  std::tie(code, msg) = error_of([&] { ex->run({wrong.get()}, out); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(msg, "feed 'x': expected a tensor of f32(4,3), got f32(3,4)");
  EXPECT_EQ(out[0], nullptr);
  std::tie(code, msg) = error_of([&] { ex->run({}, out); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("compiled with 1 feeds and 1 fetches, got 0 and 1"), std::string::npos);
}

TEST(Executable, FetchedVariableShowsAssignOnNextRun) {
  auto ctx = make_context("CPU");
  Graph g(*ctx);
  ValueRef v = g.add_variable("v", {DLRT_F32, {3}}, "fill", {{"value", 1.0}}, false);
  ValueRef c = g.add_constant("c", {DLRT_F32, {3}}, bytes_of({1.f, 2.f, 3.f}));
  ValueRef next = g.add_op("add", "next", {v, c}, {})[0];
  g.add_assign(v, next);
  auto ex = Executable::compile(g, {}, {v, next}, kTrain);
  std::vector<std::vector<float>> seen;
  for (int run = 0; run < 3; ++run) {
    std::vector<dlrt_tensor*> out{nullptr, nullptr};
    ex->run({}, out);
    TensorPtr a(out[0]), b(out[1]);
    seen.push_back(read(*a));
    EXPECT_EQ(read(*b),
              (std::vector<float>{seen.back()[0] + 1, seen.back()[1] + 2, seen.back()[2] + 3}));
  }
  EXPECT_EQ(seen[0], (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(seen[1], (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(seen[2], (std::vector<float>{3, 5, 7}));
  // A second executable of the same graph sees the same storage. Without run_assigns it
  // applies no assign, even one whose variable it reads; with it, every assign, even one its
  // fetches do not read.
  auto read_only = Executable::compile(g, {}, {v}, {});
  for (int run = 0; run < 2; ++run) {
    std::vector<dlrt_tensor*> out{nullptr};
    read_only->run({}, out);
    TensorPtr r(out[0]);
    EXPECT_EQ(read(*r), (std::vector<float>{4, 7, 10}));
  }
  auto step_only = Executable::compile(g, {}, {c}, kTrain);
  std::vector<dlrt_tensor*> out{nullptr};
  step_only->run({}, out);
  delete out[0];
  out = {nullptr};
  read_only->run({}, out);
  TensorPtr r(out[0]);
  EXPECT_EQ(read(*r), (std::vector<float>{5, 9, 13}));
}

}  // namespace
}  // namespace dlrt::core
