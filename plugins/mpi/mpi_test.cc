// mpi_test.cc: the mpi plugin in one process, without mpirun (an MPI "singleton": world size
// 1). Loads the built plugin through the fake host, RTLD_LOCAL as libdlrt does, so it also
// proves that MPI initialises from a locally loaded plugin (runtime.cc's RTLD_GLOBAL step).
// The multi-rank behaviour (sums, timeouts, a dead peer) is mpi_driver.cc's, under mpirun.
//
// Tests share one plugin instance per process: MPI can be initialised only once per process,
// and the first comm_create does it. Tests that need a fresh process (whether MPI is
// initialised, finalising) run as death tests in the "threadsafe" style, which re-executes
// this binary for just that test.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "testing/fake_host.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;

// The process's one plugin instance (destroyed at exit, which finalises MPI).
LoadedPlugin& plugin() {
  static LoadedPlugin p(DLRT_PLUGIN_FILE);
  static dlrt_plugin* instance = p.ok() ? p.create() : nullptr;
  (void)instance;
  return p;
}

const dlrt_collective_api& coll() { return *plugin().api().collectives; }

// Whether MPI is initialised / finalised, asked of the libmpi the plugin loaded (dlsym on
// the plugin's handle searches its dependencies; the test itself does not link MPI).
int ask_mpi(const char* fn) {
  void* h = dlopen(DLRT_PLUGIN_FILE, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return -1;
  auto f = reinterpret_cast<int (*)(int*)>(dlsym(h, fn));
  int flag = -1;
  if (f != nullptr) f(&flag);
  dlclose(h);
  return flag;
}

dlrt_comm* make_comm(int64_t timeout_ms = 10000) {
  uint8_t id[DLRT_COMM_ID_BYTES];
  auto [code, msg] = take_status(coll().comm_id_create(nullptr, id));
  EXPECT_EQ(code, DLRT_OK) << msg;
  dlrt_comm* comm = nullptr;
  auto [c2, m2] = take_status(coll().comm_create(nullptr, id, 1, 0, timeout_ms, &comm));
  EXPECT_EQ(c2, DLRT_OK) << m2;
  return comm;
}

// A communicator for the test's scope.
struct Comm {
  dlrt_comm* c = make_comm();
  ~Comm() {
    if (c != nullptr) coll().comm_destroy(c);
  }
};

TEST(MpiPlugin, LoadsWithNoDevicesAndACollectivesTable) {
  LoadedPlugin& p = plugin();
  ASSERT_TRUE(p.ok()) << p.error();
  const dlrt_plugin_api& api = p.api();
  EXPECT_STREQ(api.name, "mpi");
  EXPECT_STREQ(api.platform, "mpi");
  EXPECT_NE((void*)api.plugin_create, nullptr);
  EXPECT_NE((void*)api.plugin_destroy, nullptr);
  // No device entries at all (plugin.h, ABI 1.2: a device-less transport leaves them NULL).
  const void* device_entries[] = {(void*)api.device_count,
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
  for (size_t i = 0; i < sizeof(device_entries) / sizeof(device_entries[0]); ++i)
    EXPECT_EQ(device_entries[i], nullptr) << "device entry #" << i << " is a stub";
  ASSERT_NE(api.collectives, nullptr);
  const dlrt_collective_api& c = *api.collectives;
  EXPECT_EQ(c.struct_size, sizeof(dlrt_collective_api));
  EXPECT_EQ(c.group_begin, nullptr);
  EXPECT_EQ(c.group_end, nullptr);
  for (const void* f :
       {(void*)c.comm_id_create, (void*)c.comm_create, (void*)c.comm_destroy, (void*)c.comm_abort,
        (void*)c.all_reduce, (void*)c.broadcast, (void*)c.all_gather})
    EXPECT_NE(f, nullptr);

  // The core finds it by this flag, not by its name.
  EXPECT_EQ(c.flags & DLRT_COLLECTIVES_HOST_MEMORY, DLRT_COLLECTIVES_HOST_MEMORY);
}

TEST(MpiPlugin, RejectsOptions) {
  LoadedPlugin p(DLRT_PLUGIN_FILE);
  EXPECT_EQ(p.create({{"threads", "2"}}), nullptr);
  EXPECT_NE(p.error().find("unknown option 'threads'"), std::string::npos) << p.error();
}

// plugin_create must leave MPI alone; the first comm_create initialises it; the last
// plugin_destroy finalises it (this plugin initialised it and nothing failed), after which
// MPI cannot come back. Needs a fresh process: a death test re-runs the binary for it.
void lifecycle_in_fresh_process() {
  auto check = [](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "lifecycle: %s\n", what);
      std::exit(1);
    }
  };
  {
    LoadedPlugin p(DLRT_PLUGIN_FILE);
    check(p.create() != nullptr, "plugin_create failed");
    check(ask_mpi("MPI_Initialized") == 0, "plugin_create initialised MPI");
    const dlrt_collective_api& c = *p.api().collectives;
    dlrt_comm* comm = nullptr;
    check(take_status(c.comm_create(nullptr, nullptr, 1, 0, 10000, &comm)).first == DLRT_OK,
          "comm_create failed");
    check(ask_mpi("MPI_Initialized") == 1, "comm_create did not initialise MPI");
    c.comm_destroy(comm);
    check(ask_mpi("MPI_Finalized") == 0, "comm_destroy finalised MPI");
  }  // plugin_destroy
  check(ask_mpi("MPI_Finalized") == 1, "plugin_destroy did not finalise MPI");
  LoadedPlugin q(DLRT_PLUGIN_FILE);
  check(q.create() != nullptr, "second plugin_create failed");
  dlrt_comm* comm = nullptr;
  auto [code, msg] =
      take_status(q.api().collectives->comm_create(nullptr, nullptr, 1, 0, 1000, &comm));
  check(code == DLRT_FAILED_PRECONDITION && msg.find("finalised") != std::string::npos,
        "comm_create after MPI_Finalize is not FAILED_PRECONDITION naming it");
  std::fprintf(stderr, "lifecycle: ok\n");
  std::exit(0);
}

TEST(MpiPluginLifecycle, InitialisesLazilyAndFinalisesOnDestroy) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(lifecycle_in_fresh_process(), ::testing::ExitedWithCode(0), "lifecycle: ok");
}

// An aborted communicator means MPI_Finalize is skipped (a dead peer could make it wait).
void abort_skips_finalize_in_fresh_process() {
  {
    LoadedPlugin p(DLRT_PLUGIN_FILE);
    if (p.create() == nullptr) std::exit(2);
    dlrt_comm* comm = nullptr;
    if (take_status(p.api().collectives->comm_create(nullptr, nullptr, 1, 0, 10000, &comm)).first !=
        DLRT_OK)
      std::exit(3);
    p.api().collectives->comm_abort(comm);
  }
  if (ask_mpi("MPI_Finalized") != 0) std::exit(4);
  std::fprintf(stderr, "abort: ok\n");
  std::exit(0);
}

TEST(MpiPluginLifecycle, AbortSkipsFinalize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(abort_skips_finalize_in_fresh_process(), ::testing::ExitedWithCode(0), "abort: ok");
}

TEST(MpiPlugin, CommIdIsATagAndIsIgnored) {
  uint8_t id[DLRT_COMM_ID_BYTES];
  std::memset(id, 0xff, sizeof id);
  EXPECT_EQ(take_status(coll().comm_id_create(nullptr, id)).first, DLRT_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(id)), "dlrt-mpi:MPI_COMM_WORLD");
  EXPECT_EQ(id[DLRT_COMM_ID_BYTES - 1], 0);
  // comm_create ignores the id: any bytes (the core passes its own tag), or NULL.
  std::memset(id, 0x5a, sizeof id);
  for (const uint8_t* any :
       {static_cast<const uint8_t*>(id), static_cast<const uint8_t*>(nullptr)}) {
    dlrt_comm* comm = nullptr;
    auto [code, msg] = take_status(coll().comm_create(nullptr, any, 1, 0, 1000, &comm));
    EXPECT_EQ(code, DLRT_OK) << msg;
    ASSERT_NE(comm, nullptr);
    coll().comm_destroy(comm);
  }
}

TEST(MpiPlugin, SingleRankAllReduceIsIdentity) {
  Comm comm;
  ASSERT_NE(comm.c, nullptr);
  {
    std::vector<float> x = {1.5f, -2.25f, 0.1f, 3e30f}, y(4, 0.f);
    ASSERT_EQ(take_status(coll().all_reduce(comm.c, x.data(), y.data(), 4, DLRT_F32,
                                            DLRT_REDUCE_SUM, nullptr))
                  .first,
              DLRT_OK);
    EXPECT_EQ(0, std::memcmp(x.data(), y.data(), 4 * sizeof(float)));
  }
  {
    std::vector<double> x = {1.5, -2.25, 0.1}, y(3, 0.0);
    ASSERT_EQ(take_status(coll().all_reduce(comm.c, x.data(), y.data(), 3, DLRT_F64,
                                            DLRT_REDUCE_AVG, nullptr))
                  .first,
              DLRT_OK);
    EXPECT_EQ(x, y);
  }
  {
    std::vector<int32_t> x = {1, -2, INT32_MAX}, y(3, 0);
    ASSERT_EQ(take_status(coll().all_reduce(comm.c, x.data(), y.data(), 3, DLRT_I32,
                                            DLRT_REDUCE_MAX, nullptr))
                  .first,
              DLRT_OK);
    EXPECT_EQ(x, y);
  }
  {
    std::vector<int64_t> x = {int64_t{1} << 50, -7}, y(2, 0);
    ASSERT_EQ(take_status(coll().all_reduce(comm.c, x.data(), y.data(), 2, DLRT_I64,
                                            DLRT_REDUCE_PROD, nullptr))
                  .first,
              DLRT_OK);
    EXPECT_EQ(x, y);
  }
}

TEST(MpiPlugin, InPlaceWorks) {
  Comm comm;
  ASSERT_NE(comm.c, nullptr);
  std::vector<float> x = {1.f, 2.f, 3.f}, want = x;
  ASSERT_EQ(take_status(coll().all_reduce(comm.c, x.data(), x.data(), 3, DLRT_F32, DLRT_REDUCE_SUM,
                                          nullptr))
                .first,
            DLRT_OK);
  EXPECT_EQ(x, want);
  ASSERT_EQ(
      take_status(coll().broadcast(comm.c, x.data(), x.data(), 3, DLRT_F32, 0, nullptr)).first,
      DLRT_OK);
  EXPECT_EQ(x, want);
  ASSERT_EQ(take_status(coll().all_gather(comm.c, x.data(), x.data(), 3, DLRT_F32, nullptr)).first,
            DLRT_OK);
  EXPECT_EQ(x, want);
}

TEST(MpiPlugin, BroadcastAndAllGatherOfAnyDtype) {
  Comm comm;
  ASSERT_NE(comm.c, nullptr);
  std::vector<uint16_t> x = {0x3f80, 0x4000, 0xc040}, y(3, 0);  // BF16 bits: moved, not read
  ASSERT_EQ(
      take_status(coll().broadcast(comm.c, x.data(), y.data(), 3, DLRT_BF16, 0, nullptr)).first,
      DLRT_OK);
  EXPECT_EQ(x, y);
  std::vector<uint8_t> b = {1, 0, 1}, g(3, 9);
  ASSERT_EQ(take_status(coll().all_gather(comm.c, b.data(), g.data(), 3, DLRT_BOOL, nullptr)).first,
            DLRT_OK);
  EXPECT_EQ(b, g);
  // count 0 is a no-op that reads nothing.
  EXPECT_EQ(take_status(
                coll().all_reduce(comm.c, nullptr, nullptr, 0, DLRT_F32, DLRT_REDUCE_SUM, nullptr))
                .first,
            DLRT_OK);
}

TEST(MpiPlugin, DeviceCommunicatorsAreRefused) {
  dlrt_comm* comm = reinterpret_cast<dlrt_comm*>(0x1);
  auto [code, msg] = take_status(
      coll().comm_create(reinterpret_cast<dlrt_device*>(0x1000), nullptr, 1, 0, 1000, &comm));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_EQ(msg, "mpi: communicators over host memory only (device must be NULL)");
  EXPECT_EQ(comm, nullptr);
}

TEST(MpiPlugin, UnsupportedDtypesAndOpsAreRefusedByName) {
  Comm comm;
  ASSERT_NE(comm.c, nullptr);
  uint16_t h[2] = {0, 0};
  auto [code, msg] =
      take_status(coll().all_reduce(comm.c, h, h, 2, DLRT_F16, DLRT_REDUCE_SUM, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg.find("SUM of f16"), std::string::npos) << msg;
  int32_t i[2] = {1, 2};
  std::tie(code, msg) =
      take_status(coll().all_reduce(comm.c, i, i, 2, DLRT_I32, DLRT_REDUCE_AVG, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg.find("AVG of i32"), std::string::npos) << msg;
  std::tie(code, msg) = take_status(coll().all_reduce(comm.c, i, i, 2, DLRT_I32, 9, nullptr));
  EXPECT_EQ(code, DLRT_UNIMPLEMENTED);
  EXPECT_NE(msg.find("reduce_op 9"), std::string::npos) << msg;
  std::tie(code, msg) = take_status(coll().broadcast(comm.c, i, i, 2, 42, 0, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("dtype 42"), std::string::npos) << msg;
  // Refused arguments do not break the communicator.
  EXPECT_EQ(
      take_status(coll().all_reduce(comm.c, i, i, 2, DLRT_I32, DLRT_REDUCE_SUM, nullptr)).first,
      DLRT_OK);
}

TEST(MpiPlugin, BadArgumentsAreRefused) {
  Comm comm;
  ASSERT_NE(comm.c, nullptr);
  float x[1] = {1.f};
  auto [code, msg] = take_status(coll().broadcast(comm.c, x, x, 1, DLRT_F32, 1, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("root 1"), std::string::npos) << msg;
  std::tie(code, msg) = take_status(coll().all_reduce(comm.c, x, x, 1, DLRT_F32, DLRT_REDUCE_SUM,
                                                      reinterpret_cast<dlrt_stream*>(0x1)));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("stream must be NULL"), std::string::npos) << msg;
  std::tie(code, msg) =
      take_status(coll().all_reduce(comm.c, nullptr, x, 1, DLRT_F32, DLRT_REDUCE_SUM, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  std::tie(code, msg) =
      take_status(coll().all_reduce(nullptr, x, x, 1, DLRT_F32, DLRT_REDUCE_SUM, nullptr));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
}

TEST(MpiPlugin, WorldSizeMismatchNamesBothViews) {
  ASSERT_TRUE(plugin().ok());
  dlrt_comm* comm = reinterpret_cast<dlrt_comm*>(0x1);
  auto [code, msg] = take_status(coll().comm_create(nullptr, nullptr, 2, 0, 1000, &comm));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("rank 0 of 2"), std::string::npos) << msg;  // what was asked
  EXPECT_NE(msg.find("rank 0 of 1"), std::string::npos) << msg;  // what MPI says
  EXPECT_EQ(comm, nullptr);
  std::tie(code, msg) = take_status(coll().comm_create(nullptr, nullptr, 1, 1, 1000, &comm));
  EXPECT_EQ(code, DLRT_INVALID_ARGUMENT) << msg;
}

}  // namespace
