// null_test.cc: the skeleton loads, creates an instance, and answers every other entry with
// UNIMPLEMENTED naming that entry (what a copy's author relies on to know what is left).
#include <gtest/gtest.h>

#include <string>

#include "testing/fake_host.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

// Expects UNIMPLEMENTED with a message that names `entry`.
void expect_unimplemented(dlrt_status* s, const std::string& entry) {
  auto [code, msg] = take_status(s);
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED) << entry << ": " << msg;
  EXPECT_NE(msg.find(entry), std::string::npos) << "message does not name " << entry << ": " << msg;
}

TEST(NullPlugin, LoadsWithEveryRequiredEntry) {
  LoadedPlugin p(DLRT_PLUGIN_FILE);
  ASSERT_TRUE(p.ok()) << p.error();
  const dlrt_plugin_api& api = p.api();
  EXPECT_EQ(api.struct_size, sizeof(dlrt_plugin_api));
  EXPECT_EQ(api.abi_major, static_cast<uint32_t>(DLRT_ABI_MAJOR));
  EXPECT_STREQ(api.name, "null");
  EXPECT_STREQ(api.platform, "null");
  const void* required[] = {(void*)api.plugin_create,
                            (void*)api.plugin_destroy,
                            (void*)api.device_count,
                            (void*)api.device_get_desc,
                            (void*)api.device_open,
                            (void*)api.device_close,
                            (void*)api.memory_info,
                            (void*)api.mem_alloc,
                            (void*)api.mem_free,
                            (void*)api.memcpy_h2d,
                            (void*)api.memcpy_d2h,
                            (void*)api.memcpy_d2d,
                            (void*)api.memset,
                            (void*)api.stream_create,
                            (void*)api.stream_destroy,
                            (void*)api.stream_synchronize,
                            (void*)api.event_create,
                            (void*)api.event_destroy,
                            (void*)api.event_record,
                            (void*)api.stream_wait_event,
                            (void*)api.event_synchronize,
                            (void*)api.op_supported,
                            (void*)api.kernel_create,
                            (void*)api.kernel_run,
                            (void*)api.kernel_destroy};
  for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); ++i)
    EXPECT_NE(required[i], nullptr) << "required entry #" << i << " is NULL";
  EXPECT_EQ(api.capture, nullptr);
  EXPECT_EQ(api.collectives, nullptr);
}

TEST(NullPlugin, CreateSucceedsAndRejectsOptions) {
  LoadedPlugin p(DLRT_PLUGIN_FILE);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p.create({{"threads", "2"}}), nullptr);
  EXPECT_NE(p.error().find("unknown option 'threads'"), std::string::npos) << p.error();
  LoadedPlugin q(DLRT_PLUGIN_FILE);
  EXPECT_NE(q.create(), nullptr) << q.error();
}

TEST(NullPlugin, DeviceCountSaysItIsASkeleton) {
  LoadedPlugin p(DLRT_PLUGIN_FILE);
  dlrt_plugin* inst = p.create();
  ASSERT_NE(inst, nullptr) << p.error();
  int32_t count = 7;
  auto [code, msg] = take_status(p.api().device_count(inst, &count));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_EQ(count, 0);
  EXPECT_NE(msg.find("copy plugins/null to start a backend"), std::string::npos) << msg;
}

TEST(NullPlugin, EveryEntryIsUnimplementedByName) {
  LoadedPlugin p(DLRT_PLUGIN_FILE);
  dlrt_plugin* inst = p.create();
  ASSERT_NE(inst, nullptr) << p.error();
  const dlrt_plugin_api& a = p.api();
  // The null plugin never dereferences handles, so fake ones are enough to reach each body.
  auto* dev = reinterpret_cast<dlrt_device*>(0x1000);
  auto* stream = reinterpret_cast<dlrt_stream*>(0x2000);
  auto* event = reinterpret_cast<dlrt_event*>(0x3000);
  auto* kernel = reinterpret_cast<dlrt_kernel*>(0x4000);
  char buf[16] = {};
  dlrt_device_desc desc{sizeof(dlrt_device_desc)};
  expect_unimplemented(a.device_get_desc(inst, 0, &desc), "device_get_desc");

  dlrt_device* out_dev = dev;
  expect_unimplemented(a.device_open(inst, 0, &out_dev), "device_open");
  EXPECT_EQ(out_dev, nullptr) << "out-param not cleared on entry";

  uint64_t free_b = 1, total_b = 1;
  expect_unimplemented(a.memory_info(dev, &free_b, &total_b), "memory_info");
  EXPECT_EQ(free_b, 0u);
  EXPECT_EQ(total_b, 0u);
  void* ptr = buf;
  expect_unimplemented(a.mem_alloc(dev, 16, 64, &ptr), "mem_alloc");
  EXPECT_EQ(ptr, nullptr);
  expect_unimplemented(a.memcpy_h2d(dev, buf, buf, 1, nullptr), "memcpy_h2d");
  expect_unimplemented(a.memcpy_d2h(dev, buf, buf, 1, nullptr), "memcpy_d2h");
  expect_unimplemented(a.memcpy_d2d(dev, buf, buf, 1, nullptr), "memcpy_d2d");
  expect_unimplemented(a.memset(dev, buf, 0, 1, nullptr), "memset");

  dlrt_stream* out_stream = stream;
  expect_unimplemented(a.stream_create(dev, &out_stream), "stream_create");
  EXPECT_EQ(out_stream, nullptr);
  expect_unimplemented(a.stream_synchronize(stream), "stream_synchronize");
  dlrt_event* out_event = event;
  expect_unimplemented(a.event_create(dev, &out_event), "event_create");
  EXPECT_EQ(out_event, nullptr);
  expect_unimplemented(a.event_record(event, stream), "event_record");
  expect_unimplemented(a.stream_wait_event(stream, event), "stream_wait_event");
  expect_unimplemented(a.event_synchronize(event), "event_synchronize");

  dlrt_op_desc op{sizeof(dlrt_op_desc), "relu"};
  expect_unimplemented(a.op_supported(inst, 0, &op, nullptr), "op_supported");
  dlrt_kernel* out_kernel = kernel;
  size_t ws = 99;
  expect_unimplemented(a.kernel_create(dev, &op, &out_kernel, &ws), "kernel_create");
  EXPECT_EQ(out_kernel, nullptr);
  EXPECT_EQ(ws, 0u);
  dlrt_kernel_args args{sizeof(dlrt_kernel_args)};
  expect_unimplemented(a.kernel_run(kernel, stream, &args), "kernel_run");

  // Entries without a status do nothing and must not crash.
  a.mem_free(dev, nullptr);
  a.stream_destroy(nullptr);
  a.event_destroy(nullptr);
  a.kernel_destroy(nullptr);
  a.device_close(nullptr);
}

}  // namespace
