// device_services_suite.hpp: the device-services conformance suite, written once and run
// against every plugin that has devices: memory (alloc/free, alignment), copies host<->device
// and device<->device (synchronous and on a stream, at offsets into an allocation), memset,
// streams and events (an event orders work across two streams), and copies between two
// devices of one instance where a plugin has two.
//
// Use: include this header in exactly one test file of a plugin's test binary and
// instantiate the suite with that plugin's file and options, e.g.
//   INSTANTIATE_TEST_SUITE_P(reference, DeviceServices,
//       ::testing::Values(dlrt::testing::DeviceServicesTarget{"reference", DLRT_PLUGIN_FILE,
//                                                             {{"num_devices", "2"}}}));
// A plugin whose device_count fails or is 0 (cuda on a machine without a GPU) skips every
// case, naming the plugin's reason. The plugin's own test file keeps only what is specific
// to it (its error messages, limits, options).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

namespace dlrt::testing {

struct DeviceServicesTarget {
  std::string label;  // test-name suffix: "cpu", "reference", "gpu"
  std::string file;   // the plugin library
  std::map<std::string, std::string> options;
};

inline void PrintTo(const DeviceServicesTarget& t, std::ostream* os) { *os << t.label; }

// Loads the plugin, creates one instance and opens up to two devices; skips without devices.
class DeviceServices : public ::testing::TestWithParam<DeviceServicesTarget> {
 protected:
  void SetUp() override {
    lib_ = std::make_unique<LoadedPlugin>(GetParam().file);
    ASSERT_TRUE(lib_->ok()) << lib_->error();
    inst_ = lib_->create(GetParam().options);
    ASSERT_NE(inst_, nullptr) << lib_->error();
    if (api().device_count == nullptr)  // a device-less transport (plugin.h, ABI 1.2)
      GTEST_SKIP() << GetParam().label << " has no device entries";
    int32_t count = 0;
    auto [code, msg] = take_status(api().device_count(inst_, &count));
    if (code != DLRT_OK || count == 0)
      GTEST_SKIP() << GetParam().label << " has no device here: " << msg;
    for (int32_t i = 0; i < count && i < 2; ++i) {
      dlrt_device* d = nullptr;
      ASSERT_OK(api().device_open(inst_, i, &d));
      devices_.push_back(d);
    }
  }
  void TearDown() override {
    for (dlrt_device* d : devices_) api().device_close(d);
    devices_.clear();
    lib_.reset();
  }

  const dlrt_plugin_api& api() const { return lib_->api(); }
  dlrt_device* dev(size_t i = 0) const { return devices_.at(i); }

  std::unique_ptr<LoadedPlugin> lib_;
  dlrt_plugin* inst_ = nullptr;
  std::vector<dlrt_device*> devices_;
};

// Every power of two up to 4096 is honoured (the pointer is a multiple of it); an alignment
// that is not a power of two is INVALID_ARGUMENT with the out-pointer NULL.
TEST_P(DeviceServices, AllocationIsAlignedAndBadAlignmentsAreRefused) {
  for (size_t align : {1, 16, 64, 256, 4096}) {
    for (size_t bytes : {1, 100, 1 << 20}) {
      void* p = nullptr;
      ASSERT_OK(api().mem_alloc(dev(), bytes, align, &p));
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << bytes << " bytes @ " << align;
      api().mem_free(dev(), p);
    }
  }
  for (size_t align : {3, 48}) {
    void* p = reinterpret_cast<void*>(0x1);
    auto [code, msg] = take_status(api().mem_alloc(dev(), 64, align, &p));
    EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << "alignment " << align << ": " << msg;
    EXPECT_EQ(p, nullptr);
  }
}

// h2d -> d2d -> d2h round trip and memset at an offset; once synchronous (stream NULL), once
// enqueued on a stream and synchronised.
TEST_P(DeviceServices, CopiesAndMemsetRoundTripSyncAndOnAStream) {
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev(), &s));
  for (dlrt_stream* stream : {static_cast<dlrt_stream*>(nullptr), s}) {
    std::vector<int32_t> host(4099), back(4099, -1);  // odd size: no multiple of a vector
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * 7 + 1);
    const size_t bytes = host.size() * sizeof(int32_t);
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_OK(api().mem_alloc(dev(), bytes, 64, &a));
    ASSERT_OK(api().mem_alloc(dev(), bytes, 64, &b));
    EXPECT_OK(api().memcpy_h2d(dev(), a, host.data(), bytes, stream));
    EXPECT_OK(api().memcpy_d2d(dev(), b, a, bytes, stream));
    EXPECT_OK(api().memset(dev(), a, 0, bytes, stream));
    EXPECT_OK(api().memcpy_d2h(dev(), back.data(), b, bytes, stream));
    if (stream != nullptr) EXPECT_OK(api().stream_synchronize(stream));
    EXPECT_EQ(host, back) << (stream ? "on a stream" : "synchronous");

    std::vector<int32_t> zeros(host.size(), -1);
    EXPECT_OK(api().memcpy_d2h(dev(), zeros.data(), a, bytes, stream));
    if (stream != nullptr) EXPECT_OK(api().stream_synchronize(stream));
    EXPECT_EQ(zeros, std::vector<int32_t>(host.size(), 0));

    // memset the second half of b with 0x7F and read just that half (an offset pointer).
    const size_t half = bytes / 2;
    char* b_half = static_cast<char*>(b) + half;
    EXPECT_OK(api().memset(dev(), b_half, 0x7F, bytes - half, stream));
    std::vector<unsigned char> tail(bytes - half, 0);
    EXPECT_OK(api().memcpy_d2h(dev(), tail.data(), b_half, tail.size(), stream));
    std::vector<int32_t> head(half / sizeof(int32_t), -1);
    EXPECT_OK(api().memcpy_d2h(dev(), head.data(), b, head.size() * sizeof(int32_t), stream));
    if (stream != nullptr) EXPECT_OK(api().stream_synchronize(stream));
    EXPECT_EQ(tail, std::vector<unsigned char>(tail.size(), 0x7F));
    EXPECT_EQ(head, std::vector<int32_t>(host.begin(), host.begin() + head.size()));
    api().mem_free(dev(), a);
    api().mem_free(dev(), b);
  }
  api().stream_destroy(s);
}

// An event orders work across streams: five memsets of a large buffer on s1, an event
// recorded after them, s2 waits for it and copies the buffer. The copy must see the last
// memset's bytes everywhere (64 MiB: big enough that an unordered copy on an asynchronous
// device would see older data). A never-recorded event is complete.
TEST_P(DeviceServices, EventsOrderWorkAcrossStreams) {
  const size_t n = size_t(64) << 20;
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_OK(api().mem_alloc(dev(), n, 256, &a));
  ASSERT_OK(api().mem_alloc(dev(), n, 256, &b));
  dlrt_stream* s1 = nullptr;
  dlrt_stream* s2 = nullptr;
  dlrt_event* e = nullptr;
  ASSERT_OK(api().stream_create(dev(), &s1));
  ASSERT_OK(api().stream_create(dev(), &s2));
  ASSERT_OK(api().event_create(dev(), &e));
  EXPECT_OK(api().event_synchronize(e));  // never recorded: complete
  ASSERT_OK(api().memset(dev(), b, 0, n, nullptr));
  for (int v : {1, 2, 3, 4, 0x5A}) EXPECT_OK(api().memset(dev(), a, v, n, s1));
  EXPECT_OK(api().event_record(e, s1));
  EXPECT_OK(api().stream_wait_event(s2, e));
  EXPECT_OK(api().memcpy_d2d(dev(), b, a, n, s2));
  EXPECT_OK(api().stream_synchronize(s2));
  EXPECT_OK(api().event_synchronize(e));
  std::vector<uint8_t> out(n, 0);
  EXPECT_OK(api().memcpy_d2h(dev(), out.data(), b, n, nullptr));
  EXPECT_EQ(out.front(), 0x5A);
  EXPECT_EQ(out.back(), 0x5A);
  EXPECT_EQ(out, std::vector<uint8_t>(n, 0x5A));
  EXPECT_OK(api().stream_synchronize(s1));
  api().event_destroy(e);
  api().stream_destroy(s1);
  api().stream_destroy(s2);
  api().mem_free(dev(), a);
  api().mem_free(dev(), b);
}

// Pinned host memory (optional: skipped when the plugin leaves host_alloc_pinned NULL) is a
// valid source and destination of copies on a stream.
TEST_P(DeviceServices, PinnedHostMemoryRoundTripsOnAStream) {
  if (api().host_alloc_pinned == nullptr || api().host_free_pinned == nullptr)
    GTEST_SKIP() << GetParam().label << " offers no pinned host memory (optional)";
  const size_t n = (1 << 20) + 3;  // not a multiple of anything
  void* a = nullptr;
  void* b = nullptr;
  void* in = nullptr;
  void* out = nullptr;
  ASSERT_OK(api().mem_alloc(dev(), n, 256, &a));
  ASSERT_OK(api().mem_alloc(dev(), n, 256, &b));
  ASSERT_OK(api().host_alloc_pinned(dev(), n, &in));
  ASSERT_OK(api().host_alloc_pinned(dev(), n, &out));
  std::vector<uint8_t> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = static_cast<uint8_t>(i * 31 + 99);
  std::memcpy(in, want.data(), n);
  std::memset(out, 0, n);
  dlrt_stream* s = nullptr;
  ASSERT_OK(api().stream_create(dev(), &s));
  EXPECT_OK(api().memcpy_h2d(dev(), a, in, n, s));
  EXPECT_OK(api().memcpy_d2d(dev(), b, a, n, s));
  EXPECT_OK(api().memcpy_d2h(dev(), out, b, n, s));
  ASSERT_OK(api().stream_synchronize(s));
  EXPECT_EQ(std::memcmp(out, want.data(), n), 0);
  api().stream_destroy(s);
  api().host_free_pinned(dev(), in);
  api().host_free_pinned(dev(), out);
  api().mem_free(dev(), a);
  api().mem_free(dev(), b);
}

// memcpy_d2d on the destination device reads memory of another device of the same instance
// (how the host copies between a plugin's devices). Skipped with one device.
TEST_P(DeviceServices, CopiesBetweenTwoDevicesOfOneInstance) {
  if (devices_.size() < 2) GTEST_SKIP() << GetParam().label << " has one device here";
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_OK(api().mem_alloc(dev(0), 64, 64, &a));
  ASSERT_OK(api().mem_alloc(dev(1), 64, 64, &b));
  std::vector<int32_t> v(16), back(16, 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(100 + i);
  EXPECT_OK(api().memcpy_h2d(dev(0), a, v.data(), 64, nullptr));
  EXPECT_OK(api().memcpy_d2d(dev(1), b, a, 64, nullptr));
  EXPECT_OK(api().memcpy_d2h(dev(1), back.data(), b, 64, nullptr));
  EXPECT_EQ(v, back);
  api().mem_free(dev(0), a);
  api().mem_free(dev(1), b);
}

}  // namespace dlrt::testing
