// arena_test.cc: DeviceArena on its own, over a fake device whose plugin table has only what
// an arena calls (memory_info, mem_alloc, mem_free) and counts every call, so the tests can
// see exactly what reached the "plugin": limits, out-of-memory errors and recovery, the
// growth-on cache, growth off (one reservation, best fit, merging, freed at the end), and
// threads. The arena as the context builds it (options, variables, tensors, executables) is
// tested through the C API in c_api_memory_test.cc.
#include "memory/arena.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "aligned_memory.hpp"
#include "status.hpp"

namespace dlrt::core {
namespace {

// A device of `capacity` bytes (free = capacity - taken) that refuses what does not fit.
// Thread-safe, as plugin memory entries are.
struct FakeDevice {
  std::mutex mu;
  uint64_t capacity = uint64_t{1} << 20;
  uint64_t taken = 0;
  int allocs = 0, frees = 0;
  std::map<void*, size_t> live;
};

FakeDevice* fake(dlrt_device* d) { return reinterpret_cast<FakeDevice*>(d); }

dlrt_status* fake_memory_info(dlrt_device* d, uint64_t* out_free, uint64_t* out_total) {
  std::lock_guard<std::mutex> lock(fake(d)->mu);
  *out_free = fake(d)->capacity - fake(d)->taken;
  *out_total = fake(d)->capacity;
  return nullptr;
}

dlrt_status* fake_alloc(dlrt_device* d, size_t bytes, size_t alignment, void** out) {
  FakeDevice& f = *fake(d);
  std::lock_guard<std::mutex> lock(f.mu);
  if (bytes > f.capacity - f.taken)
    return dlrt_status_create(DLRT_RESOURCE_EXHAUSTED,
                              ("fake device full: " + std::to_string(bytes) + " bytes").c_str());
  // aligned_allocate wants a multiple of the alignment (plugins/common/aligned_memory.hpp).
  *out = dlrt::plugin::aligned_allocate(alignment, (bytes + alignment - 1) / alignment * alignment);
  f.taken += bytes;
  ++f.allocs;
  f.live.emplace(*out, bytes);
  return nullptr;
}

void fake_free(dlrt_device* d, void* p) {
  FakeDevice& f = *fake(d);
  std::lock_guard<std::mutex> lock(f.mu);
  auto it = f.live.find(p);
  ASSERT_NE(it, f.live.end()) << "mem_free of a pointer the device never gave";
  f.taken -= it->second;
  ++f.frees;
  f.live.erase(it);
  dlrt::plugin::aligned_release(p);
}

class Arena : public ::testing::Test {
 protected:
  Arena() {
    api_.struct_size = sizeof api_;
    api_.memory_info = fake_memory_info;
    api_.mem_alloc = fake_alloc;
    api_.mem_free = fake_free;
  }
  std::unique_ptr<DeviceArena> make(ArenaOptions o) {
    return std::make_unique<DeviceArena>("/device:GPU:0", &api_,
                                         reinterpret_cast<dlrt_device*>(&dev_), o);
  }
  // The message of the Error `fn` throws, after checking its code.
  template <typename Fn>
  std::string error_of(Fn&& fn, dlrt_code code) {
    try {
      fn();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.message();
      return e.message();
    }
    ADD_FAILURE() << "no error";
    return "";
  }

  dlrt_plugin_api api_{};
  FakeDevice dev_;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ArenaFormat, Bytes) {
  EXPECT_EQ(format_bytes(800), "800 bytes");
  EXPECT_EQ(format_bytes(1024), "1024 bytes (1.00 KiB)");
  EXPECT_EQ(format_bytes(1572864), "1572864 bytes (1.50 MiB)");
  EXPECT_EQ(format_bytes(uint64_t{3} << 30), "3221225472 bytes (3.00 GiB)");
}

TEST_F(Arena, LimitIsEnforcedAndASmallerRequestThenSucceeds) {
  ArenaOptions o;
  o.limit = 4096;
  auto arena = make(o);
  Buffer a = arena->allocate(3000, "tensor a");
  EXPECT_EQ(a.size(), 3000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kArenaAlignment, 0u);
  const std::string msg =
      error_of([&] { arena->allocate(2000, "variable dense/kernel"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "/device:GPU:0")) << msg;
  EXPECT_TRUE(contains(msg, "variable dense/kernel asked for 2000 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "in use 3000 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "peak 3000 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "limit 4096 bytes (4.00 KiB)")) << msg;
  EXPECT_TRUE(contains(msg, "over the device's memory limit")) << msg;
  EXPECT_EQ(dev_.allocs, 1) << "a request over the limit never reaches the plugin";
  Buffer b = arena->allocate(1000, "tensor b");  // still usable
  ArenaStats s = arena->stats();
  EXPECT_EQ(s.in_use, 4000u);
  EXPECT_EQ(s.peak, 4000u);
  EXPECT_EQ(s.limit, 4096u);
  EXPECT_EQ(s.reserved, 3072u + 1024u) << "blocks are rounded up to 256 bytes";
  a.reset();
  EXPECT_EQ(arena->stats().in_use, 1000u);
  EXPECT_EQ(arena->stats().peak, 4000u);
}

// A limit larger than the device is reported as such, not as a bare
// 18446744073709551615 bytes.
TEST_F(Arena, LimitLargerThanTheDeviceIsReportedAsSuch) {
  ArenaOptions o;
  o.limit = UINT64_MAX;
  auto arena = make(o);
  const std::string msg =
      error_of([&] { arena->allocate(size_t{2} << 20, "tensor big"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg,
                       "limit 18446744073709551615 bytes (16.00 EiB), larger than the "
                       "device's 1048576 bytes (1.00 MiB)"))
      << msg;
  EXPECT_TRUE(contains(msg, "fake device full")) << msg;
}

TEST_F(Arena, ZeroBytesIsInvalid) {
  auto arena = make({});
  const std::string msg = error_of([&] { arena->allocate(0, "a tensor"); }, DLRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg, "0 bytes")) << msg;
}

TEST_F(Arena, GrowthReusesFreedBlocksOfTheSameRoundedSize) {
  auto arena = make({});
  for (int i = 0; i < 10; ++i) {
    Buffer a = arena->allocate(1000, "t");  // 1024 inside
    Buffer b = arena->allocate(900, "t");   // also 1024: a second block
  }
  EXPECT_EQ(dev_.allocs, 2) << "after the first pair, both come from the cache";
  EXPECT_EQ(arena->stats().num_allocs, 2u);
  EXPECT_EQ(arena->stats().in_use, 0u);
  EXPECT_EQ(arena->stats().reserved, 2048u) << "the cache is still held";
  Buffer c = arena->allocate(5000, "t");  // another size: a new block
  EXPECT_EQ(dev_.allocs, 3);
  c.reset();
  arena->trim();
  EXPECT_EQ(arena->stats().reserved, 0u);
  EXPECT_TRUE(dev_.live.empty());
}

TEST_F(Arena, PluginOutOfMemoryEmptiesTheCacheAndRetries) {
  dev_.capacity = 8192;
  auto arena = make({});
  { Buffer a = arena->allocate(4096, "t"); }  // cached: the device holds 4096
  Buffer big = arena->allocate(8192, "t");    // refused once, then fits after the cache went
  EXPECT_EQ(dev_.frees, 1);
  EXPECT_EQ(arena->stats().reserved, 8192u);
  // Truly too big: the plugin's reason, and the arena's numbers.
  const std::string msg =
      error_of([&] { arena->allocate(100, "workspace of conv2d_1"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "workspace of conv2d_1 asked for 100 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "in use 8192 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "limit none")) << msg;
  EXPECT_TRUE(contains(msg, "fake device full")) << msg;
  EXPECT_EQ(arena->stats().in_use, 8192u) << "the failed request is not counted";
  big.reset();
  Buffer after = arena->allocate(100, "t");
  EXPECT_NE(after.data(), nullptr);
}

TEST_F(Arena, CacheNeverHoldsTheArenaPastItsLimit) {
  ArenaOptions o;
  o.limit = 4096;
  auto arena = make(o);
  { Buffer a = arena->allocate(2048, "t"); }  // cached (2048 held)
  Buffer b = arena->allocate(4096, "t");      // needs the cached bytes dropped first
  EXPECT_EQ(arena->stats().reserved, 4096u);
  EXPECT_EQ(dev_.taken, 4096u);
}

TEST_F(Arena, GrowthOffReservesOnceAndFreesAtTheEnd) {
  dev_.capacity = uint64_t{1} << 20;
  ArenaOptions o;
  o.allow_growth = false;
  o.preallocate_fraction = 0.5;
  o.share = 2;  // two logical devices on this physical one: each reserves a quarter
  {
    auto arena = make(o);
    EXPECT_EQ(dev_.allocs, 0) << "nothing is reserved before the first request";
    std::vector<Buffer> held;
    for (int i = 0; i < 100; ++i) {
      held.push_back(arena->allocate(100 + 37 * i, "t"));
      if (i % 3 == 0) held.erase(held.begin());
    }
    ArenaStats s = arena->stats();
    EXPECT_EQ(s.num_allocs, 1u);
    EXPECT_EQ(dev_.allocs, 1);
    EXPECT_EQ(s.reserved, uint64_t{1} << 18);
    EXPECT_GT(s.in_use, 0u);
    EXPECT_GE(s.peak, s.in_use);
    held.clear();
    EXPECT_EQ(arena->stats().in_use, 0u);
    EXPECT_EQ(dev_.frees, 0) << "buffers go back to the reservation, not the plugin";
  }
  EXPECT_EQ(dev_.frees, 1);
  EXPECT_TRUE(dev_.live.empty());
}

TEST_F(Arena, GrowthOffUsesTheMeasuredFreeMemoryAndTheLimit) {
  ArenaOptions o;
  o.allow_growth = false;
  o.preallocate_fraction = 1.0;
  o.physical_free = 64 << 10;  // measured by the context before any logical device reserved
  auto arena = make(o);
  Buffer a = arena->allocate(1, "t");
  EXPECT_EQ(arena->stats().reserved, 64u << 10);

  FakeDevice other;
  o.physical_free = 0;
  o.limit = 10000;  // smaller than the fraction: the reservation is the limit (rounded down)
  DeviceArena limited("/device:GPU:1", &api_, reinterpret_cast<dlrt_device*>(&other), o);
  Buffer b = limited.allocate(1, "t");
  EXPECT_EQ(limited.stats().reserved, 9984u);
  const std::string msg = error_of([&] { limited.allocate(9999, "t"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "limit 10000")) << msg;
}

TEST_F(Arena, GrowthOffBestFitSplitsAndMerges) {
  ArenaOptions o;
  o.allow_growth = false;
  o.preallocate_fraction = 1.0;
  o.physical_free = 8 * 1024;
  auto arena = make(o);
  Buffer a = arena->allocate(1024, "a");
  Buffer b = arena->allocate(512, "b");
  Buffer c = arena->allocate(1024, "c");
  Buffer d = arena->allocate(256, "d");
  void* b_at = b.data();
  b.reset();  // a 512-byte hole between a and c; 5376 bytes free after d
  Buffer e = arena->allocate(300, "e");
  EXPECT_EQ(e.data(), b_at) << "best fit takes the small hole, not the big tail";
  // Too big for any free range: the message says how large the largest is.
  const std::string msg = error_of([&] { arena->allocate(6000, "f"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "largest is 5376 bytes")) << msg;
  // Everything back: the ranges merge into one, and the whole reservation fits again.
  a.reset();
  c.reset();
  e.reset();
  d.reset();
  Buffer all = arena->allocate(8 * 1024, "all");
  EXPECT_NE(all.data(), nullptr);
}

TEST_F(Arena, GrowthOffReservationFailureLeavesTheArenaUsable) {
  dev_.capacity = 4096;
  ArenaOptions o;
  o.allow_growth = false;
  o.preallocate_fraction = 1.0;
  o.physical_free = 1 << 20;  // stale: the device has less now
  auto arena = make(o);
  const std::string msg = error_of([&] { arena->allocate(10, "t"); }, DLRT_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(contains(msg, "growth is off")) << msg;
  EXPECT_TRUE(contains(msg, "fake device full")) << msg;
  EXPECT_EQ(arena->stats().reserved, 0u);
}

TEST_F(Arena, ConcurrentAllocationsBalance) {
  dev_.capacity = uint64_t{1} << 30;
  ArenaOptions grow;
  ArenaOptions pooled;
  pooled.allow_growth = false;
  pooled.preallocate_fraction = 0.01;
  for (const ArenaOptions& o : {grow, pooled}) {
    auto arena = make(o);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          Buffer x = arena->allocate(64 + 64 * ((i + t) % 7), "t");
          Buffer y = arena->allocate(1000, "t");
        }
      });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(arena->stats().in_use, 0u);
  }
  EXPECT_TRUE(dev_.live.empty());
}

}  // namespace
}  // namespace dlrt::core
