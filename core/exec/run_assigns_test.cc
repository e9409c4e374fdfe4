// run_assigns_test.cc: which assigns an executable applies is the caller's choice
// (CompileOptions::run_assigns / dlrt_compile_options::run_assigns). A training executable
// (on) applies every assign of the graph; an evaluation executable (off) of the same graph
// fetching the logits needs no label feed, changes no variable and sees the weights the
// training executable wrote.
#include <gtest/gtest.h>

#include <vector>

#include "exec/compiled.hpp"
#include "exec/exec_test_util.hpp"
#include "graph/graph_handle.hpp"

namespace dlrt::core {
namespace {

using namespace exec_test;  // NOLINT: the shared test helpers

// Every variable's bytes (through the C API's read, as a checkpoint would).
std::vector<std::vector<float>> snapshot(dlrt_graph& g, const std::vector<ValueRef>& vars) {
  std::vector<std::vector<float>> out;
  for (ValueRef v : vars) {
    std::vector<float> data(dense_byte_size(g.type_of(v)) / sizeof(float));
    dlrt_status* s = dlrt_graph_variable_read(&g, to_c(v), data.data(), data.size() * 4);
    EXPECT_EQ(s, nullptr) << dlrt_status_message(s);
    dlrt_status_free(s);
    out.push_back(std::move(data));
  }
  return out;
}

TEST(RunAssigns, EvaluationExecutableSharesTrainedVariablesAndChangesNone) {
  auto ctx = make_context("CPU");
  dlrt_graph g(*ctx);
  Mlp mlp;
  const int batch = 12;
  mlp.build(g, "sgd", batch);
  // Variables of the graph: the four weights and their four velocity slots.
  std::vector<ValueRef> all_vars;
  for (NodeId id = 0; id < g.nodes().size(); ++id)
    if (g.node(id).kind == NodeKind::kVariable) all_vars.push_back({id, 0});
  ASSERT_EQ(all_vars.size(), 8u);

  // Evaluation: only x is fed; labels (read only by the loss behind the assigns) are not.
  auto eval = Executable::compile(g, {mlp.x}, {mlp.logits}, {});
  auto* ev = dynamic_cast<exec::CompiledExecutable*>(eval.get());
  ASSERT_NE(ev, nullptr);
  EXPECT_TRUE(ev->assign_copies.empty());
  EXPECT_EQ(ev->in_place_assigns, 0u);
  for (const PlacedNode& p : ev->placed().nodes) {
    const std::string& name = g.node(p.source).name;
    EXPECT_NE(name, "labels");
    EXPECT_NE(name, "loss");
    EXPECT_EQ(name.find("velocity"), std::string::npos) << name;
  }
  // The old rule ("assigns whose variable the fetches touch") would have pulled in the
  // updates and so the labels: compiling a training step without them must still fail.
  auto [code, msg] = error_of([&] { Executable::compile(g, {mlp.x}, {mlp.logits}, kTrain); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("placeholder 'labels'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("run_assigns"), std::string::npos) << msg;

  std::vector<float> xs;
  std::vector<int32_t> ys;
  toy_batch(batch, 7, xs, ys);
  TensorPtr x = tensor(*ctx, 0, {DLRT_F32, {batch, 4}}, xs);
  auto labels = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_I32, {batch}});
  labels->write(ys.data(), ys.size() * sizeof(int32_t));
  auto new_logits = [&] {
    return std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {batch, 3}});
  };
  TensorPtr eval_logits = new_logits(), train_logits = new_logits();
  TensorPtr loss = std::make_unique<dlrt_tensor>(*ctx, 0, TensorType{DLRT_F32, {}});

  // Evaluating changes nothing: the same logits twice, the same variables.
  const auto before = snapshot(g, all_vars);
  std::vector<dlrt_tensor*> out{eval_logits.get()};
  eval->run({x.get()}, out);
  const std::vector<float> first = read(*eval_logits);
  eval->run({x.get()}, out);
  EXPECT_EQ(read(*eval_logits), first);
  EXPECT_EQ(snapshot(g, all_vars), before);

  // Training (every assign) fetches the logits too: those of run k come from the variables
  // at the start of run k, i.e. after run k-1's updates, which the evaluation executable
  // (run in between) must have seen.
  auto train = Executable::compile(g, {mlp.x, mlp.labels}, {mlp.loss, mlp.logits}, kTrain);
  auto* tr = dynamic_cast<exec::CompiledExecutable*>(train.get());
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->in_place_assigns, 8u);  // four sgd_update pairs, straight into the variables
  std::vector<float> seen_by_eval = first;
  for (int step = 0; step < 5; ++step) {
    std::vector<dlrt_tensor*> t_out{loss.get(), train_logits.get()};
    train->run({x.get(), labels.get()}, t_out);
    EXPECT_EQ(read(*train_logits), seen_by_eval) << "step " << step;
    const auto trained = snapshot(g, all_vars);
    EXPECT_NE(trained, before);
    eval->run({x.get()}, out);
    seen_by_eval = read(*eval_logits);
    EXPECT_NE(seen_by_eval, read(*train_logits)) << "step " << step << ": no update seen";
    EXPECT_EQ(snapshot(g, all_vars), trained) << "the evaluation changed a variable";
  }
  EXPECT_EQ(eval->stats().run_allocations, 0u);
  EXPECT_EQ(train->stats().run_allocations, 0u);
}

TEST(RunAssigns, CApiDefaultIsNoAssignsAndBadValuesAreRejected) {
  auto ctx = make_context("CPU");
  dlrt_graph g(*ctx);
  ValueRef v = g.add_variable("v", {DLRT_F32, {2}}, "fill", {{"value", 1.0}}, false);
  ValueRef c = g.add_constant("c", {DLRT_F32, {2}}, bytes_of({1.f, 1.f}));
  g.add_assign(v, g.add_op("add", "next", {v, c}, {})[0]);
  const dlrt_value fetch = to_c(v);

  auto run_and_read = [&](dlrt_executable* ex) {
    dlrt_tensor* out = nullptr;
    dlrt_status* s = dlrt_executable_run(ex, nullptr, 0, &out, 1);
    EXPECT_EQ(s, nullptr) << dlrt_status_message(s);
    TensorPtr t(out);
    return read(*t);
  };
  dlrt_compile_options opts;
  dlrt_compile_options_init(&opts);
  dlrt_executable* ex = nullptr;
  ASSERT_EQ(dlrt_graph_compile(&g, nullptr, 0, &fetch, 1, &opts, &ex), nullptr);  // -1: none
  EXPECT_EQ(run_and_read(ex), (std::vector<float>{1, 1}));
  EXPECT_EQ(run_and_read(ex), (std::vector<float>{1, 1}));
  dlrt_executable_destroy(ex);

  opts.run_assigns = 1;
  ASSERT_EQ(dlrt_graph_compile(&g, nullptr, 0, &fetch, 1, &opts, &ex), nullptr);
  EXPECT_EQ(run_and_read(ex), (std::vector<float>{1, 1}));  // the value at the run's start
  EXPECT_EQ(run_and_read(ex), (std::vector<float>{2, 2}));
  dlrt_executable_destroy(ex);

  opts.run_assigns = 2;
  dlrt_status* s = dlrt_graph_compile(&g, nullptr, 0, &fetch, 1, &opts, &ex);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(dlrt_status_code(s), DLRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlrt_status_message(s)).find("run_assigns is 2"), std::string::npos)
      << dlrt_status_message(s);
  dlrt_status_free(s);
  EXPECT_EQ(ex, nullptr);
}

// A stateful op (OpDef::stateful) belongs to every training step even when nothing fetches or
// assigns its results: here an sgd_update whose outputs go nowhere pulls its gradient
// placeholder into the step (so compiling it unfed fails naming it), and an evaluation
// executable of the same graph leaves it out.
TEST(RunAssigns, StatefulOpsAreNeverPrunedFromATrainingStep) {
  auto ctx = make_context("CPU");
  dlrt_graph g(*ctx);
  ValueRef x = g.add_placeholder("x", {DLRT_F32, {4}});
  ValueRef y = g.add_op("neg", "y", {x}, {}).at(0);
  ValueRef w = g.add_variable("w", {DLRT_F32, {4}}, "fill", {{"value", 1.0}}, true);
  ValueRef vel = g.add_variable("vel", {DLRT_F32, {4}}, "fill", {{"value", 0.0}}, false);
  ValueRef grad = g.add_placeholder("grad", {DLRT_F32, {4}});
  ValueRef lr = g.add_constant("lr", {DLRT_F32, {}}, bytes_of({0.1f}));
  g.add_op("sgd_update", "update", {w, grad, vel, lr}, {});

  auto [code, msg] = error_of([&] { Executable::compile(g, {x}, {y}, kTrain); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("placeholder 'grad'"), std::string::npos) << msg;

  auto train = Executable::compile(g, {x, grad}, {y}, kTrain);
  auto* tr = dynamic_cast<exec::CompiledExecutable*>(train.get());
  ASSERT_NE(tr, nullptr);
  bool has_update = false;
  for (const PlacedNode& p : tr->placed().nodes) has_update |= g.node(p.source).name == "update";
  EXPECT_TRUE(has_update);

  auto eval = Executable::compile(g, {x}, {y}, {});
  auto* ev = dynamic_cast<exec::CompiledExecutable*>(eval.get());
  ASSERT_NE(ev, nullptr);
  for (const PlacedNode& p : ev->placed().nodes) EXPECT_NE(g.node(p.source).name, "update");
}

// Unless its state is assigned another value: an executable that sets both in-place inputs
// of an sgd_update (w, vel) from a placeholder leaves the update out, so the update's
// gradient placeholder is not needed; with only w assigned, vel's update still belongs.
TEST(RunAssigns, AStatefulOpWhoseStateIsAssignedElsewhereIsLeftOut) {
  auto ctx = make_context("CPU");
  dlrt_graph g(*ctx);
  ValueRef w = g.add_variable("w", {DLRT_F32, {4}}, "fill", {{"value", 1.0}}, true);
  ValueRef vel = g.add_variable("vel", {DLRT_F32, {4}}, "fill", {{"value", 0.0}}, false);
  ValueRef grad = g.add_placeholder("grad", {DLRT_F32, {4}});
  ValueRef lr = g.add_constant("lr", {DLRT_F32, {}}, bytes_of({0.1f}));
  g.add_op("sgd_update", "update", {w, grad, vel, lr}, {});
  ValueRef next = g.add_placeholder("next", {DLRT_F32, {4}});
  ValueRef half = g.add_op("neg", "half", {next}, {}).at(0);
  g.add_assign(w, half);

  // Only w is set elsewhere: vel's state is still the update's to write.
  auto [code, msg] = error_of([&] { Executable::compile(g, {next}, {half}, kTrain); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("placeholder 'grad'"), std::string::npos) << msg;

  g.add_assign(vel, next);
  auto train = Executable::compile(g, {next}, {half}, kTrain);
  auto* tr = dynamic_cast<exec::CompiledExecutable*>(train.get());
  ASSERT_NE(tr, nullptr);
  for (const PlacedNode& p : tr->placed().nodes) EXPECT_NE(g.node(p.source).name, "update");
}

}  // namespace
}  // namespace dlrt::core
