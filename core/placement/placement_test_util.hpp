// placement_test_util.hpp: the fixture of the placement tests — a context with the real
// plugins of the build tree: the cpu plugin (CPU:0, every op in f32) and the test tree's mock
// device (tests/mock_device, the reference plugin's code under the name "mock") posing as two
// GPUs that only run matmul, relu and fill, a mock multi-device machine (no GPU needed) on which
// priority, soft placement, colocation and copies all have something to decide. Not the
// reference plugin itself: automatic placement never picks the oracle unless it is named
// (placement_auto_test.cc tests that rule).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "context.hpp"
#include "graph/graph.hpp"
#include "placement/placement.hpp"
#include "status.hpp"

namespace dlrt::core::testing {

inline constexpr const char* kMockGpus =
    "mock:num_devices=2;mock:device_type=GPU;mock:device_class=gpu;mock:ops=matmul,relu,fill";

inline constexpr const char* kCpuPlugin = DLRT_TEST_PLUGIN_DIR "/libdlrt-cpu.so";
inline constexpr const char* kReferencePlugin = DLRT_TEST_PLUGIN_DIR "/libdlrt-reference.so";

// A context on exactly `paths` (default: the cpu plugin and the mock device).
inline std::unique_ptr<Context> make_context(const char* plugin_options,
                                             const char* visible = nullptr,
                                             std::vector<const char*> paths = {
                                                 kCpuPlugin, DLRT_TEST_MOCK_PLUGIN}) {
  // Plugin files, not their folder: a build with CUDA on a GPU machine must not add its real
  // GPUs to the mock ones.
  dlrt_context_options o = complete_options(nullptr);
  o.plugin_paths = paths.data();
  o.num_plugin_paths = paths.size();
  o.search_default_paths = 0;
  o.plugin_options = plugin_options;
  o.visible_devices = visible;
  // The environment of whoever runs the tests must not change the devices.
  return std::make_unique<Context>(&o, [](const char*) -> const char* { return nullptr; });
}

inline const ops::TensorType kVec{DLRT_F32, {2, 2}};

class Placement : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = make_context(kMockGpus);
    ASSERT_EQ(ctx_->registry().names(), "/device:CPU:0, /device:GPU:0, /device:GPU:1")
        << "the test needs the cpu plugin and the mock device of the build tree";
    g_ = std::make_unique<Graph>(*ctx_);
  }
  size_t dev(const char* spec) const { return ctx_->registry().find(spec); }
  ValueRef op(const std::string& type, const std::string& name, std::vector<ValueRef> in,
              ops::AttrMap attrs = {}) {
    return g_->add_op(type, name, in, attrs).at(0);
  }
  // Every node of the graph, in order (what a compile of everything would need).
  std::vector<NodeId> all() const {
    std::vector<NodeId> ids;
    for (const Node& n : g_->nodes()) ids.push_back(n.id);
    return ids;
  }
  PlacedGraph place_all(bool soft = true) { return place(*g_, all(), PlacementOptions{soft}); }
  static const PlacedNode& by_name(const PlacedGraph& p, const std::string& name) {
    for (const PlacedNode& n : p.nodes)
      if (n.name == name) return n;
    throw std::runtime_error("no placed node " + name);
  }
  static size_t copies(const PlacedGraph& p) {
    return std::count_if(p.nodes.begin(), p.nodes.end(),
                         [](const PlacedNode& n) { return n.is_copy; });
  }
  // The error place() throws (strict or not), or a failure when it does not.
  Error place_error(bool soft) {
    try {
      place_all(soft);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "place() succeeded";
    return Error(DLRT_OK, "");
  }

  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Graph> g_;
};

}  // namespace dlrt::core::testing
