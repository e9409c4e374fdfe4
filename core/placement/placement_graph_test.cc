// Tests of the placement rules that look at more than one node: colocation (variables with
// their optimizer updates and slots, explicit groups), variables placed by an earlier compile,
// follows-input, copy insertion, and the three dumps (log, JSON, DOT).
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "graph/variable_store.hpp"
#include "placement/placement_test_util.hpp"

namespace dlrt::core::testing {
namespace {

const std::string kCpu = "/job:localhost/replica:0/task:0/device:CPU:0";

// w, its Adam slots m and v, and the update assigned back to all three.
struct AdamStep {
  ValueRef w, m, v, g, step;
  std::vector<ValueRef> update;
};
AdamStep add_adam(Graph& g) {
  AdamStep s;
  s.w = g.add_variable("w", kVec, "fill", {{"value", 1.0}}, true);
  s.m = g.add_variable("m", kVec, "fill", {}, false);
  s.v = g.add_variable("v", kVec, "fill", {}, false);
  s.g = g.add_placeholder("g", kVec);
  s.step = g.add_placeholder("step", {DLRT_F32, {}});
  ValueRef lr = g.add_placeholder("lr", {DLRT_F32, {}});
  s.update = g.add_op("adam_update", "adam", {s.w, s.g, s.m, s.v, s.step, lr}, {});
  g.add_assign(s.w, s.update[0]);
  g.add_assign(s.m, s.update[1]);
  g.add_assign(s.v, s.update[2]);
  return s;
}

TEST_F(Placement, VariableUpdateAndSlotsAreColocated) {
  add_adam(*g_);
  PlacedGraph p = place_all();
  // The mock GPUs run fill but not adam_update, so the group's best common device is CPU:0.
  for (const char* name : {"w", "m", "v", "adam"})
    EXPECT_EQ(by_name(p, name).device, dev("CPU:0")) << name;
  EXPECT_EQ(by_name(p, "w").reason, PlacementReason::kDefaultPriority);
  for (const char* name : {"m", "v", "adam"}) {
    EXPECT_EQ(by_name(p, name).reason, PlacementReason::kColocated) << name;
    EXPECT_EQ(by_name(p, name).detail, "with w") << name;
  }
  EXPECT_EQ(copies(p), 0u);
}

TEST_F(Placement, RequestInsideAGroupDecidesAndFallsBackForTheWholeGroup) {
  g_->push_device("/GPU:1");
  add_adam(*g_);
  PlacedGraph p = place_all();
  const PlacedNode& w = by_name(p, "w");
  EXPECT_EQ(w.device, dev("CPU:0"));
  EXPECT_EQ(w.reason, PlacementReason::kFallbackNoKernel);
  EXPECT_NE(w.detail.find("for colocated adam (adam_update)"), std::string::npos) << w.detail;
  EXPECT_EQ(by_name(p, "adam").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "adam").reason, PlacementReason::kColocated);
}

TEST_F(Placement, ExplicitColocationGroups) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:1");
  ValueRef a = op("matmul", "a", {x, x});
  g_->pop_device();
  ValueRef b = op("relu", "b", {x});
  g_->colocate(a, b);
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "b").device, dev("GPU:1"));
  EXPECT_EQ(by_name(p, "b").reason, PlacementReason::kColocated);
  EXPECT_EQ(by_name(p, "b").detail, "with a");
}

TEST_F(Placement, ConflictingRequestsInOneGroupNameBoth) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/CPU:0");
  ValueRef c = op("relu", "c", {x});
  g_->pop_device();
  g_->push_device("/GPU:0");
  ValueRef d = op("relu", "d", {x});
  g_->colocate(c, d);
  Error e = place_error(/*soft=*/true);
  EXPECT_EQ(e.code(), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(),
            "c (relu) requests /CPU:0 and d (relu) requests /GPU:0, but they are "
            "colocated and must share a device");
}

TEST_F(Placement, VariablePlacedByAnEarlierCompileKeepsItsDevice) {
  AdamStep s = add_adam(*g_);
  g_->variables().place_and_init(s.w.node, dev("GPU:1"));  // as an earlier compile would
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "w").device, dev("GPU:1"));
  EXPECT_EQ(by_name(p, "w").reason, PlacementReason::kVariableStore);
  EXPECT_EQ(by_name(p, "m").device, dev("GPU:1"));  // slots follow w: GPU:1 runs fill
  // GPU:1 cannot run the update: soft placement runs it on CPU:0 and copies around it.
  const PlacedNode& adam = by_name(p, "adam");
  EXPECT_EQ(adam.device, dev("CPU:0"));
  EXPECT_EQ(adam.reason, PlacementReason::kFallbackNoKernel);
  EXPECT_EQ(adam.detail.rfind("colocated with variable w on /device:GPU:1 which cannot run it", 0),
            0u)
      << adam.detail;
  // w, m, v to CPU:0 for the update; its three results back to GPU:1 for the assigns.
  EXPECT_EQ(copies(p), 6u);
  Error e = place_error(/*soft=*/false);
  EXPECT_EQ(e.message().rfind("adam (adam_update) colocated with variable w on /device:GPU:1", 0),
            0u)
      << e.message();
  EXPECT_NE(e.message().find("; devices that can: /device:CPU:0"), std::string::npos)
      << e.message();
}

TEST_F(Placement, UnconstrainedOpsFollowTheirInputToAvoidACopy) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/CPU:0");
  ValueRef a = op("relu", "a", {x});
  g_->pop_device();
  ValueRef b = op("relu", "b", {a});  // priority says GPU:0; a is on CPU:0, which runs relu
  op("relu", "c", {b});               // the chain follows as a whole
  g_->push_device("/GPU:0");
  ValueRef k = op("relu", "k", {x});
  g_->pop_device();
  op("matmul", "mixed", {a, k});  // inputs on two devices: priority decides
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "b").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "b").reason, PlacementReason::kFollowsInput);
  EXPECT_EQ(by_name(p, "b").detail, "input a is on /device:CPU:0");
  EXPECT_EQ(by_name(p, "c").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "c").reason, PlacementReason::kFollowsInput);
  EXPECT_EQ(by_name(p, "mixed").device, dev("GPU:0"));
  EXPECT_EQ(by_name(p, "mixed").reason, PlacementReason::kDefaultPriority);
}

TEST_F(Placement, AnInputDeviceThatCannotRunTheOpIsNotFollowed) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:0");
  ValueRef r = op("relu", "r", {x});
  g_->pop_device();
  op("sigmoid", "s", {r});
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "s").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "s").reason, PlacementReason::kDefaultPriority);
  EXPECT_EQ(copies(p), 1u);
}

TEST_F(Placement, OneCopyPerValueAndDeviceSharedByItsConsumers) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/GPU:0");
  ValueRef h = op("matmul", "h", {x, x});
  g_->push_device("/CPU:0");
  op("sigmoid", "s", {h});
  op("tanh", "t", {h});
  PlacedGraph p = place_all();
  ASSERT_EQ(copies(p), 1u);
  const size_t h_index = p.producer(h, dev("GPU:0"));
  const size_t copy_index = p.producer(h, dev("CPU:0"));
  const PlacedNode& copy = p.nodes.at(copy_index);
  EXPECT_TRUE(copy.is_copy);
  EXPECT_EQ(copy.name, "h/copy_to_CPU_0");
  EXPECT_EQ(copy.device, dev("CPU:0"));
  EXPECT_EQ(copy.reason, PlacementReason::kInsertedCopy);
  EXPECT_EQ(copy.detail, "h from /device:GPU:0 to /device:CPU:0");
  ASSERT_EQ(copy.inputs.size(), 1u);
  EXPECT_EQ(copy.inputs[0].node, h_index);
  EXPECT_LT(h_index, copy_index);
  for (const char* name : {"s", "t"}) {
    const PlacedNode& n = by_name(p, name);
    ASSERT_EQ(n.inputs.size(), 1u);
    EXPECT_EQ(n.inputs[0].node, copy_index) << name;
    EXPECT_EQ(n.inputs[0].output, 0u) << name;
  }
  try {
    p.producer(h, dev("GPU:1"));
    ADD_FAILURE() << "h is not on GPU:1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), DLRT_INTERNAL);
  }
}

TEST_F(Placement, NoCopyWhenEverythingSharesADevice) {
  ValueRef x = g_->add_placeholder("x", kVec);
  ValueRef h = op("matmul", "h", {x, x});
  op("relu", "r", {h});
  PlacedGraph p = place_all();
  EXPECT_EQ(copies(p), 0u);
  for (const PlacedNode& n : p.nodes) EXPECT_EQ(n.device, dev("GPU:0")) << n.name;
}

TEST_F(Placement, AnAssignedValueIsCopiedToItsVariablesDevice) {
  g_->push_device("/CPU:0");
  ValueRef w = g_->add_variable("w", kVec, "fill", {}, false);
  g_->pop_device();
  ValueRef x = g_->add_placeholder("x", kVec);
  ValueRef r = op("relu", "r", {x});  // GPU:0: it does not read w, so it is not w's update
  g_->add_assign(w, r);
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "r").device, dev("GPU:0"));
  ASSERT_EQ(copies(p), 1u);
  EXPECT_EQ(p.nodes.at(p.producer(r, dev("CPU:0"))).name, "r/copy_to_CPU_0");
}

TEST_F(Placement, ValuesNoOpConsumesGoToTheirVariableOrByPriority) {
  g_->push_device("/CPU:0");
  ValueRef w = g_->add_variable("w", kVec, "fill", {}, false);
  g_->pop_device();
  g_->add_assign(w, g_->add_constant("c", kVec, std::vector<uint8_t>(16, 0)));
  g_->add_placeholder("unused", kVec);
  PlacedGraph p = place_all();
  EXPECT_EQ(by_name(p, "c").device, dev("CPU:0"));
  EXPECT_EQ(by_name(p, "c").reason, PlacementReason::kFollowsInput);
  EXPECT_EQ(by_name(p, "c").detail, "assigned to w");
  EXPECT_EQ(by_name(p, "unused").device, dev("GPU:0"));
  EXPECT_EQ(by_name(p, "unused").reason, PlacementReason::kDefaultPriority);
  EXPECT_EQ(copies(p), 0u);
}

TEST_F(Placement, LogLinesHaveTensorFlowsFormat) {
  ValueRef x = g_->add_placeholder("x", kVec);
  g_->push_device("/CPU:0");
  op("relu", "r", {x});
  PlacedGraph p = place_all();
  EXPECT_EQ(placement_log(*g_, p), "x: (placeholder): " + kCpu +
                                       " [follows-input: first consumer r]\n"
                                       "r: (relu): " +
                                       kCpu + " [explicit]\n");
}

// h (GPU:0) feeds s (CPU:0) through one copy.
class PlacementDumps : public Placement {
 protected:
  void SetUp() override {
    Placement::SetUp();
    ValueRef x = g_->add_placeholder("x", kVec);
    g_->push_device("/GPU:0");
    ValueRef h = op("matmul", "h", {x, x});
    g_->pop_device();
    g_->push_device("/CPU:0");
    op("sigmoid", "s", {h});
    placed_ = place_all();
  }
  PlacedGraph placed_;
};

TEST_F(PlacementDumps, LogShowsTheCopy) {
  EXPECT_NE(placement_log(*g_, placed_)
                .find("h/copy_to_CPU_0: (copy): " + kCpu +
                      " [inserted-copy: h from /device:GPU:0 to /device:CPU:0]\n"),
            std::string::npos);
}

TEST_F(PlacementDumps, JsonParsesAndDescribesEveryNode) {
  nlohmann::json j = nlohmann::json::parse(placement_json(*g_, placed_));
  ASSERT_EQ(j.at("nodes").size(), placed_.nodes.size());
  ASSERT_EQ(j.at("devices").size(), 3u);
  const nlohmann::json& s = j.at("nodes").back();
  EXPECT_EQ(s.at("name"), "s");
  EXPECT_EQ(s.at("op"), "sigmoid");
  EXPECT_EQ(s.at("requested"), "/CPU:0");
  EXPECT_EQ(s.at("assigned"), kCpu);
  EXPECT_EQ(s.at("reason"), "explicit");
  EXPECT_EQ(s.at("detail"), "");
  EXPECT_EQ(s.at("inputs"), nlohmann::json::array({"h/copy_to_CPU_0"}));
  EXPECT_EQ(j.at("devices").at(dev("GPU:0")).at("nodes"), 2);  // x and h
}

TEST_F(PlacementDumps, DotHasOneColourPerDeviceAndDashedCopies) {
  const std::string dot = placement_dot(*g_, placed_);
  const std::regex node_line(R"re(\n  n(\d+) \[.*fillcolor="([^"]+)"\];)re");
  std::map<size_t, std::string> colour_of_device;
  std::set<std::string> colours;
  size_t seen = 0;
  for (std::sregex_iterator it(dot.begin(), dot.end(), node_line), end; it != end; ++it, ++seen) {
    const size_t device = placed_.nodes.at(std::stoul((*it)[1])).device;
    auto [at, fresh] = colour_of_device.emplace(device, (*it)[2]);
    EXPECT_EQ(at->second, (*it)[2]) << "two colours for device " << device;
    if (fresh) EXPECT_TRUE(colours.insert((*it)[2]).second) << "two devices share a colour";
  }
  EXPECT_EQ(seen, placed_.nodes.size());
  EXPECT_EQ(colour_of_device.size(), 2u);
  for (const auto& [device, colour] : colour_of_device)  // the legend
    EXPECT_NE(dot.find("[label=\"" + ctx_->registry().devices()[device].full_name +
                       "\", shape=box, style=filled, fillcolor=\"" + colour + "\"]"),
              std::string::npos);
  // Exactly one dashed node: the copy.
  const size_t dashed = dot.find("style=\"filled,dashed\"");
  EXPECT_NE(dashed, std::string::npos);
  EXPECT_EQ(dot.find("style=\"filled,dashed\"", dashed + 1), std::string::npos);
}

}  // namespace
}  // namespace dlrt::core::testing
