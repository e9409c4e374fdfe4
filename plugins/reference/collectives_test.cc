// collectives_test.cc: the reference plugin's NCCL test double (collectives.cc) through its C
// table, driven by the fake host: ranks meet by id, grouped calls run at group_end and sum in
// rank order, what it refuses (ungrouped ranks > 1, incomplete groups, host memory), joins
// that time out, abort failing the peers, and the collective_fault option.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "testing/fake_host.hpp"
#include "testing/status_checks.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Opts = std::map<std::string, std::string>;

using dlrt::testing::contains;

// A plugin instance of `n` devices, all opened, with a stream and a buffer helper each.
struct Devices {
  explicit Devices(int n, Opts options = {}) : lib(DLRT_PLUGIN_FILE) {
    options["num_devices"] = std::to_string(n);
    inst = lib.create(options);
    if (inst == nullptr) return;
    for (int i = 0; i < n; ++i) {
      dlrt_device* d = nullptr;
      EXPECT_EQ(take_status(api().device_open(inst, i, &d)).first, DLRT_OK);
      dlrt_stream* s = nullptr;
      EXPECT_EQ(take_status(api().stream_create(d, &s)).first, DLRT_OK);
      dev.push_back(d);
      stream.push_back(s);
    }
  }
  ~Devices() {
    for (auto& [d, p] : allocations) api().mem_free(d, p);
    for (dlrt_stream* s : stream) api().stream_destroy(s);
    for (dlrt_device* d : dev) api().device_close(d);  // LoadedPlugin destroys the instance
  }
  const dlrt_plugin_api& api() const { return lib.api(); }
  const dlrt_collective_api& coll() const { return *lib.api().collectives; }

  // Device memory on device `i` holding `values`.
  float* buffer(int i, const std::vector<float>& values) {
    void* p = nullptr;
    EXPECT_EQ(take_status(api().mem_alloc(dev[i], values.size() * 4, 64, &p)).first, DLRT_OK);
    EXPECT_EQ(
        take_status(api().memcpy_h2d(dev[i], p, values.data(), values.size() * 4, nullptr)).first,
        DLRT_OK);
    allocations.emplace_back(dev[i], p);
    return static_cast<float*>(p);
  }
  std::vector<float> read(int i, const float* p, size_t n) {
    std::vector<float> out(n);
    EXPECT_EQ(take_status(api().memcpy_d2h(dev[i], out.data(), p, n * 4, nullptr)).first, DLRT_OK);
    return out;
  }
  // One communicator per device, ranks in device order, created inside one group.
  std::vector<dlrt_comm*> comms(int64_t timeout_ms = 1000) {
    uint8_t id[DLRT_COMM_ID_BYTES];
    EXPECT_EQ(take_status(coll().comm_id_create(inst, id)).first, DLRT_OK);
    std::vector<dlrt_comm*> out(dev.size(), nullptr);
    EXPECT_EQ(take_status(coll().group_begin(inst)).first, DLRT_OK);
    for (size_t r = 0; r < dev.size(); ++r)
      EXPECT_EQ(take_status(coll().comm_create(dev[r], id, static_cast<int32_t>(dev.size()),
                                               static_cast<int32_t>(r), timeout_ms, &out[r]))
                    .first,
                DLRT_OK);
    EXPECT_EQ(take_status(coll().group_end(inst)).first, DLRT_OK);
    return out;
  }

  LoadedPlugin lib;
  dlrt_plugin* inst = nullptr;
  std::vector<dlrt_device*> dev;
  std::vector<dlrt_stream*> stream;
  std::vector<std::pair<dlrt_device*, void*>> allocations;
};

TEST(ReferenceCollectives, IdsAreRandom) {
  Devices d(1);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  uint8_t a[DLRT_COMM_ID_BYTES], b[DLRT_COMM_ID_BYTES];
  ASSERT_OK(d.coll().comm_id_create(d.inst, a));
  ASSERT_OK(d.coll().comm_id_create(d.inst, b));
  EXPECT_NE(std::memcmp(a, b, DLRT_COMM_ID_BYTES), 0);
}

TEST(ReferenceCollectives, OneRankRunsAtOnceOutsideAGroup) {
  Devices d(1);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  uint8_t id[DLRT_COMM_ID_BYTES];
  ASSERT_OK(d.coll().comm_id_create(d.inst, id));
  dlrt_comm* c = nullptr;
  ASSERT_OK(d.coll().comm_create(d.dev[0], id, 1, 0, 1000, &c));
  float* x = d.buffer(0, {1, 2, 3});
  float* y = d.buffer(0, {0, 0, 0});
  ASSERT_OK(d.coll().all_reduce(c, x, y, 3, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
  EXPECT_EQ(d.read(0, y, 3), (std::vector<float>{1, 2, 3}));
  ASSERT_OK(d.coll().all_reduce(c, x, x, 3, DLRT_F32, DLRT_REDUCE_AVG, d.stream[0]));  // in place
  EXPECT_EQ(d.read(0, x, 3), (std::vector<float>{1, 2, 3}));
  d.coll().comm_destroy(c);
}

// What the core's device path relies on: the sum of every rank, in rank order, in f32, the
// same bits on every rank; broadcast from a root; gathering.
TEST(ReferenceCollectives, GroupedCallsRunAtGroupEndInRankOrder) {
  Devices d(3);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  std::vector<dlrt_comm*> c = d.comms();
  // 1e8 + 1 - 1e8 in f32 is 0 in rank order ((1e8 + 1) rounds to 1e8), 1 in another order.
  float* x[3] = {d.buffer(0, {1e8f, 1, 10}), d.buffer(1, {1, 2, 20}), d.buffer(2, {-1e8f, 3, 30})};
  ASSERT_OK(d.coll().group_begin(d.inst));
  for (int r = 0; r < 3; ++r)
    ASSERT_OK(d.coll().all_reduce(c[r], x[r], x[r], 3, DLRT_F32, DLRT_REDUCE_SUM, d.stream[r]));
  EXPECT_EQ(d.read(0, x[0], 3)[2], 10.f) << "queued, not run, before group_end";
  ASSERT_OK(d.coll().group_end(d.inst));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(d.read(r, x[r], 3), (std::vector<float>{0, 6, 60})) << r;

  float* b[3] = {d.buffer(0, {0, 0}), d.buffer(1, {7, 8}), d.buffer(2, {0, 0})};
  ASSERT_OK(d.coll().group_begin(d.inst));
  for (int r = 0; r < 3; ++r)
    ASSERT_OK(d.coll().broadcast(c[r], b[r], b[r], 2, DLRT_F32, 1, d.stream[r]));
  ASSERT_OK(d.coll().group_end(d.inst));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(d.read(r, b[r], 2), (std::vector<float>{7, 8})) << r;

  float* g[3] = {d.buffer(0, {0, 0, 0}), d.buffer(1, {0, 0, 0}), d.buffer(2, {0, 0, 0})};
  ASSERT_OK(d.coll().group_begin(d.inst));
  for (int r = 0; r < 3; ++r)
    ASSERT_OK(d.coll().all_gather(c[r], b[r], g[r], 1, DLRT_F32, d.stream[r]));
  ASSERT_OK(d.coll().group_end(d.inst));
  EXPECT_EQ(d.read(2, g[2], 3), (std::vector<float>{7, 7, 7}));
  for (dlrt_comm* comm : c) d.coll().comm_destroy(comm);
}

TEST(ReferenceCollectives, RefusesWhatItCannotModel) {
  Devices d(2);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  std::vector<dlrt_comm*> c = d.comms();
  float* x = d.buffer(0, {1});
  // Outside a group, one thread cannot play both ranks of a blocking collective.
  auto [code, msg] =
      take_status(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(msg, "group")) << msg;
  // A group in which only rank 0 called.
  ASSERT_OK(d.coll().group_begin(d.inst));
  ASSERT_OK(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
  std::tie(code, msg) = take_status(d.coll().group_end(d.inst));
  EXPECT_EQ(code, DLRT_FAILED_PRECONDITION);
  EXPECT_TRUE(contains(msg, "rank 1")) << msg;
  // Host memory, a stream of another device, a pointer of another device, an odd dtype.
  uint8_t id[DLRT_COMM_ID_BYTES] = {};
  dlrt_comm* host = nullptr;
  EXPECT_EQ(take_status(d.coll().comm_create(nullptr, id, 1, 0, 10, &host)).first,
            DLRT_UNIMPLEMENTED);
  EXPECT_EQ(
      take_status(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[1])).first,
      DLRT_INVALID_ARGUMENT);
  float* other = d.buffer(1, {1});
  EXPECT_EQ(take_status(
                d.coll().all_reduce(c[0], other, other, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]))
                .first,
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(
      take_status(d.coll().all_reduce(c[0], x, x, 1, DLRT_U8, DLRT_REDUCE_SUM, d.stream[0])).first,
      DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(take_status(d.coll().group_end(d.inst)).first, DLRT_FAILED_PRECONDITION)
      << "no group is open";
  for (dlrt_comm* comm : c) d.coll().comm_destroy(comm);
}

TEST(ReferenceCollectives, JoinWaitsForTheOtherRanksUpToTheTimeout) {
  Devices d(2);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  uint8_t id[DLRT_COMM_ID_BYTES];
  ASSERT_OK(d.coll().comm_id_create(d.inst, id));
  // Alone: rank 1 never comes.
  dlrt_comm* c = nullptr;
  const auto start = std::chrono::steady_clock::now();
  auto [code, msg] = take_status(d.coll().comm_create(d.dev[0], id, 2, 0, 50, &c));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_EQ(code, DLRT_DEADLINE_EXCEEDED);
  EXPECT_TRUE(contains(msg, "rank(s) 1 of 2 did not join within 50 ms")) << msg;
  EXPECT_EQ(c, nullptr);
  // Two threads, one rank each: they meet.
  dlrt_comm* comms[2] = {};
  std::pair<dlrt_code, std::string> results[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      results[r] = take_status(d.coll().comm_create(d.dev[r], id, 2, r, 5000, &comms[r]));
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].first, DLRT_OK) << results[r].second;
    d.coll().comm_destroy(comms[r]);
  }
}

TEST(ReferenceCollectives, AbortMakesThePeersFail) {
  Devices d(2);
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  std::vector<dlrt_comm*> c = d.comms();
  d.coll().comm_abort(c[1]);
  float* x = d.buffer(0, {1});
  auto [code, msg] =
      take_status(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
  EXPECT_EQ(code, DLRT_UNAVAILABLE);
  EXPECT_TRUE(contains(msg, "rank 1 of 2 on REF:1 was aborted")) << msg;
  d.coll().comm_abort(c[0]);
}

TEST(ReferenceCollectives, CollectiveFaultOption) {
  EXPECT_TRUE(contains(Devices(1, {{"collective_fault", "soon"}}).lib.error(),
                       "expected <timeout|unavailable>:<n>"));
  {
    Devices d(1, {{"collective_fault", "unavailable:2"}});
    ASSERT_NE(d.inst, nullptr) << d.lib.error();
    std::vector<dlrt_comm*> c = d.comms();
    float* x = d.buffer(0, {1});
    ASSERT_OK(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
    auto [code, msg] = take_status(d.coll().broadcast(c[0], x, x, 1, DLRT_F32, 0, d.stream[0]));
    EXPECT_EQ(code, DLRT_UNAVAILABLE);
    EXPECT_TRUE(contains(msg, "injected fault collective_fault=unavailable:2")) << msg;
    d.coll().comm_abort(c[0]);
  }
  {
    Devices d(2, {{"collective_fault", "timeout:1"}});
    ASSERT_NE(d.inst, nullptr) << d.lib.error();
    std::vector<dlrt_comm*> c = d.comms(/*timeout_ms=*/40);
    float* x = d.buffer(0, {1});
    ASSERT_OK(d.coll().group_begin(d.inst));
    const auto start = std::chrono::steady_clock::now();
    auto [code, msg] =
        take_status(d.coll().all_reduce(c[0], x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, d.stream[0]));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));
    EXPECT_EQ(code, DLRT_DEADLINE_EXCEEDED);
    EXPECT_TRUE(contains(msg, "rank 1 of 2 did not answer within 40 ms")) << msg;
    // The group is closed all the same, reporting that it lost a call.
    EXPECT_EQ(take_status(d.coll().group_end(d.inst)).first, DLRT_FAILED_PRECONDITION);
    for (dlrt_comm* comm : c) d.coll().comm_abort(comm);
  }
}

}  // namespace

// Option collective_blocking=0: the double behaves as NCCL's non-blocking communicators (the
// cuda plugin creates only those). group_begin, all_reduce, group_end, all_reduce: the work
// of the group finishes on a background thread after group_end was called, so group_end
// must wait for every communicator the group used — its calls answered success, as NCCL's
// do inside a group — before the results are read or the communicators used again. Without
// that wait the sums read back are the unreduced inputs and the second all_reduce fails
// with NCCL's "Attempt to use communicator before the previous operation returned
// ncclSuccess".
TEST(ReferenceCollectives, NonBlockingGroupEndWaitsForTheGroupsCollectives) {
  Devices d(2, {{"collective_blocking", "0"}});
  ASSERT_NE(d.inst, nullptr) << d.lib.error();
  std::vector<dlrt_comm*> c = d.comms();
  float* x[2] = {d.buffer(0, {1, 2}), d.buffer(1, {10, 20})};
  for (int round = 1; round <= 2; ++round) {
    ASSERT_OK(d.coll().group_begin(d.inst));
    for (int r = 0; r < 2; ++r)  // round 2 fails here if round 1 was not waited for
      ASSERT_OK(d.coll().all_reduce(c[r], x[r], x[r], 2, DLRT_F32, DLRT_REDUCE_SUM, d.stream[r]));
    ASSERT_OK(d.coll().group_end(d.inst));
    // Round 1: 11, 22 on both ranks; round 2 sums those: 22, 44.
    const std::vector<float> want =
        round == 1 ? std::vector<float>{11, 22} : std::vector<float>{22, 44};
    for (int r = 0; r < 2; ++r) EXPECT_EQ(d.read(r, x[r], 2), want) << "round " << round;
  }
  for (dlrt_comm* comm : c) d.coll().comm_destroy(comm);
}
