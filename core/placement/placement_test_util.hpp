// placement_test_util.hpp: the fixture of the placement tests — a context with the real
// plugins of the build tree: the cpu plugin (CPU:0, every op in f32) and the reference plugin
// posing as two GPUs that only run matmul, relu and fill, a mock multi-device machine
// (STYLE.md 9) on which priority, soft placement, colocation and copies all have something
// to decide.
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
    "reference:num_devices=2;reference:device_type=GPU;reference:device_class=gpu;"
    "reference:ops=matmul,relu,fill";

inline std::unique_ptr<Context> make_context(const char* plugin_options,
                                             const char* visible = nullptr) {
  // The two plugin files, not their folder: a build with CUDA on a GPU machine must not add
  // its real GPUs to the mock ones.
  const char* paths[] = {DLRT_TEST_PLUGIN_DIR "/libdlrt-cpu.so",
                         DLRT_TEST_PLUGIN_DIR "/libdlrt-reference.so"};
  dlrt_context_options o = complete_options(nullptr);
  o.plugin_paths = paths;
  o.num_plugin_paths = 2;
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
        << "the test needs the cpu and reference plugins of the build tree";
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
