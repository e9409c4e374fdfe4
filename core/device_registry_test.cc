// Unit tests of device_registry.cc on made-up physical devices (no plugins needed): base
// numbering across plugins, visibility filtering and renumbering, logical splits with memory
// limits, and find(). tests/loader checks the same through real plugins and the C API.
#include "device_registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "status.hpp"

namespace dlrt::core {
namespace {

// Plugin 0: CPU; plugin 1: GPU, GPU; plugin 2: REF, REF, REF.
std::vector<PhysicalDevice> machine() {
  return {{0, 0, "CPU"}, {1, 0, "GPU"}, {1, 1, "GPU"}, {2, 0, "REF"}, {2, 1, "REF"}, {2, 2, "REF"}};
}

std::vector<std::string> names(const DeviceRegistry& r) {
  std::vector<std::string> out;
  for (const auto& d : r.devices()) out.push_back(d.name);
  return out;
}

// The code and message of the Error `fn` throws.
template <typename Fn>
std::pair<dlrt_code, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.message()};
  }
  return {DLRT_OK, ""};
}

TEST(DeviceRegistry, AllDevicesNumberedPerTypeInLoadOrder) {
  DeviceRegistry r = DeviceRegistry::build(machine(), "", {});
  EXPECT_EQ(names(r),
            (std::vector<std::string>{"/device:CPU:0", "/device:GPU:0", "/device:GPU:1",
                                      "/device:REF:0", "/device:REF:1", "/device:REF:2"}));
  EXPECT_EQ(r.devices()[2].full_name, "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(r.devices()[2].physical, 2u);
  EXPECT_EQ(r.devices()[2].logical_count, 1);
}

TEST(DeviceRegistry, VisibilityFiltersAndRenumbersInListOrder) {
  DeviceRegistry r = DeviceRegistry::build(machine(), "GPU:1, CPU:0,REF:2,GPU:0", {});
  EXPECT_EQ(names(r), (std::vector<std::string>{"/device:GPU:0", "/device:CPU:0", "/device:REF:0",
                                                "/device:GPU:1"}));
  EXPECT_EQ(r.devices()[0].physical, 2u);  // visible GPU:0 is the physical GPU:1
  EXPECT_EQ(r.devices()[2].physical, 5u);
  EXPECT_EQ(r.devices()[3].physical, 1u);
}

TEST(DeviceRegistry, BareTypeMeansAllOfThatTypeAndRepeatsKeepFirstPlace) {
  DeviceRegistry r = DeviceRegistry::build(machine(), "REF:1,REF", {});
  EXPECT_EQ(names(r),
            (std::vector<std::string>{"/device:REF:0", "/device:REF:1", "/device:REF:2"}));
  EXPECT_EQ(r.devices()[0].physical, 4u);
  EXPECT_EQ(r.devices()[1].physical, 3u);
  EXPECT_EQ(r.devices()[2].physical, 5u);
}

TEST(DeviceRegistry, VisibilityErrors) {
  auto [code, msg] = error_of([] { DeviceRegistry::build(machine(), "CPU:0,GPU:7", {}); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("'GPU:7'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/device:REF:2"), std::string::npos) << msg;  // lists what there is

  std::tie(code, msg) = error_of([] { DeviceRegistry::build(machine(), "TPU", {}); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);

  std::tie(code, msg) = error_of([] { DeviceRegistry::build(machine(), "gpu:x", {}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("gpu:x"), std::string::npos) << msg;

  std::tie(code, msg) = error_of([] { DeviceRegistry::build(machine(), "/job:localhost", {}); });
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("names no device type"), std::string::npos) << msg;
}

TEST(DeviceRegistry, LogicalSplitTakesConsecutiveIndicesAndShiftsLaterOnes) {
  LogicalSplit split{"REF:0", 3, {100, 200, 300}};
  DeviceRegistry r = DeviceRegistry::build(machine(), "", {split});
  EXPECT_EQ(names(r), (std::vector<std::string>{"/device:CPU:0", "/device:GPU:0", "/device:GPU:1",
                                                "/device:REF:0", "/device:REF:1", "/device:REF:2",
                                                "/device:REF:3", "/device:REF:4"}));
  for (int k = 0; k < 3; ++k) {
    const LogicalDevice& d = r.devices()[3 + k];
    EXPECT_EQ(d.physical, 3u);
    EXPECT_EQ(d.logical_index, k);
    EXPECT_EQ(d.logical_count, 3);
    EXPECT_EQ(d.memory_limit, 100u * (k + 1));
  }
  EXPECT_EQ(r.devices()[6].physical, 4u);  // old REF:1 is now REF:3
  EXPECT_EQ(r.devices()[6].memory_limit, 0u);
}

TEST(DeviceRegistry, LogicalSplitUsesVisibleNumbering) {
  // After visibility "GPU:1", the only GPU is GPU:0 (the physical GPU:1).
  DeviceRegistry r = DeviceRegistry::build(machine(), "GPU:1", {{"/device:GPU:0", 2, {}}});
  ASSERT_EQ(r.devices().size(), 2u);
  EXPECT_EQ(r.devices()[1].name, "/device:GPU:1");
  EXPECT_EQ(r.devices()[1].physical, 2u);
  EXPECT_EQ(r.devices()[1].memory_limit, 0u);
}

TEST(DeviceRegistry, LogicalSplitErrors) {
  auto code = error_of([] { DeviceRegistry::build(machine(), "", {{"GPU:5", 2, {}}}); }).first;
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  code = error_of([] { DeviceRegistry::build(machine(), "", {{"GPU", 2, {}}}); }).first;
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  code = error_of([] { DeviceRegistry::build(machine(), "", {{"GPU:0", 0, {}}}); }).first;
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  code = error_of([] { DeviceRegistry::build(machine(), "", {{"GPU:0", 2, {1}}}); }).first;
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  auto [c2, msg] = error_of([] {
    DeviceRegistry::build(machine(), "", {{"GPU:0", 2, {}}, {"GPU:0", 2, {}}});
  });
  EXPECT_EQ(c2, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("split twice"), std::string::npos) << msg;
}

TEST(DeviceRegistry, Find) {
  DeviceRegistry r = DeviceRegistry::build(machine(), "", {});
  EXPECT_EQ(r.find("cpu"), 0u);
  EXPECT_EQ(r.find("GPU"), 1u);
  EXPECT_EQ(r.find("/device:GPU:1"), 2u);
  EXPECT_EQ(r.find("/job:localhost/replica:0/task:0/device:REF:2"), 5u);

  auto [code, msg] = error_of([&] { r.find("GPU:9"); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("GPU:9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/device:CPU:0, /device:GPU:0"), std::string::npos) << msg;
  EXPECT_EQ(error_of([&] { r.find("/job:worker/device:CPU:0"); }).first, DLRT_NOT_FOUND);
  EXPECT_EQ(error_of([&] { r.find("gpu:x"); }).first, DLRT_INVALID_ARGUMENT);

  DeviceRegistry empty = DeviceRegistry::build({}, "", {});
  std::tie(code, msg) = error_of([&] { empty.find("cpu"); });
  EXPECT_EQ(code, DLRT_NOT_FOUND);
  EXPECT_NE(msg.find("none"), std::string::npos) << msg;
}

}  // namespace
}  // namespace dlrt::core
