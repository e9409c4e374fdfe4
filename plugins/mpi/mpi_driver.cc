// mpi_driver.cc: the mpi plugin across processes, run by CTest under `mpirun -np 2` (see
// CMakeLists.txt and README.md). It loads the plugin through the fake host, as libdlrt
// would, and does not link MPI: rank and size come from mpirun's environment.
//
//   mpi_driver collectives  all_reduce (SUM of F32, F64, I32, I64 with exactly known results,
//                           identical bits on every rank; other ops; in place; a 16 MiB
//                           buffer), broadcast, all_gather, then a clean MPI_Finalize.
//   mpi_driver timeout      rank 1 arrives late (after rank 0's 2 s timeout) to an all_reduce:
//                           rank 0 gets DEADLINE_EXCEEDED naming rank 1 in about 2 s and
//                           FAILED_PRECONDITION afterwards; late rank 1 then times out
//                           naming rank 0. Run with --enable-recovery (README.md).
//   mpi_driver dead_peer    rank 1 kills itself (SIGKILL) before an all_reduce: rank 0 gets an
//                           error naming rank 1 within the timeout, says so, and exits.
//   mpi_driver dead_at_start  rank 1 kills itself before comm_create: rank 0's comm_create
//                           (MPI_Init waits for every rank) gives DEADLINE_EXCEEDED in time.
//   mpi_driver exit_after_last  rank 1 goes silent after the last collective and exits later
//                           (no comm_destroy, no MPI_Finalize); rank 0 destroys its
//                           communicator and the plugin, whose shutdown must end after the 2 s
//                           timeout (a final barrier, then no MPI_Finalize, which would wait
//                           for rank 1) with a warning that rank 1 did not answer.
//
// Every rank prints "DRIVER_OK rank R MODE" when all its checks passed, "DRIVER_FAIL ..." at
// the first that did not (and exits 1); rank errors it was meant to get are printed as
// "RANK<r>_ERROR: <CODE>: <message>". mpirun_expect.sh reads those lines.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "testing/fake_host.hpp"

namespace {

using dlrt::testing::LoadedPlugin;
using dlrt::testing::take_status;
using Clock = std::chrono::steady_clock;

int g_rank = -1;
const char* g_mode = "?";

const char* code_name(dlrt_code c) {
  switch (c) {
    case DLRT_OK:
      return "OK";
    case DLRT_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case DLRT_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case DLRT_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case DLRT_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case DLRT_INTERNAL:
      return "INTERNAL";
    case DLRT_UNAVAILABLE:
      return "UNAVAILABLE";
    case DLRT_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    default:
      return "OTHER";
  }
}

[[noreturn]] void die(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("DRIVER_FAIL rank %d %s: %s\n", g_rank, g_mode, buf);
  std::fflush(stdout);
  std::_Exit(1);  // no plugin_destroy: MPI_Finalize could wait for a peer
}

// A status that must be OK.
void ok(dlrt_status* s, const char* what) {
  auto [code, msg] = take_status(s);
  if (code != DLRT_OK) die("%s: %s: %s", what, code_name(code), msg.c_str());
}

int env_int(const char* a, const char* b) {
  const char* v = std::getenv(a);
  if (v == nullptr) v = std::getenv(b);
  return v == nullptr ? -1 : std::atoi(v);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---- collectives -------------------------------------------------------------------------

// Rank r's input element i: values whose sums round, so the order of the sum shows in the
// bits (floats), and integers that need all their bits.
template <typename T>
T input(int r, size_t i) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(0.1) * static_cast<T>(i % 97 + 1) * static_cast<T>(r + 1) +
           static_cast<T>(1e-3) / static_cast<T>(i + 1) + (r % 2 ? static_cast<T>(1e7) : T(0));
  else
    return static_cast<T>((static_cast<int64_t>(r + 1) << (sizeof(T) * 8 - 4)) / 3 +
                          static_cast<int64_t>(i) * (r + 1));
}

// The documented result: rank 0's buffer, then + rank 1's, + rank 2's ..., in T.
template <typename T>
std::vector<T> expected_sum(int nranks, size_t n) {
  std::vector<T> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = input<T>(0, i);
  for (int r = 1; r < nranks; ++r)
    for (size_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<T>) {  // wraps, as the plugin's does
        using U = std::make_unsigned_t<T>;
        acc[i] = static_cast<T>(static_cast<U>(acc[i]) + static_cast<U>(input<T>(r, i)));
      } else {
        acc[i] = acc[i] + input<T>(r, i);
      }
    }
  return acc;
}

// Every rank's `bytes` at `data` are the same (all_gather them as U8 and compare).
void check_identical_everywhere(const dlrt_collective_api& c, dlrt_comm* comm, int nranks,
                                const void* data, size_t bytes, const char* what) {
  std::vector<uint8_t> all(bytes * static_cast<size_t>(nranks));
  ok(c.all_gather(comm, data, all.data(), bytes, DLRT_U8, nullptr), "all_gather of results");
  for (int r = 0; r < nranks; ++r)
    if (std::memcmp(all.data() + static_cast<size_t>(r) * bytes, data, bytes) != 0)
      die("%s: rank %d's result differs from mine", what, r);
}

template <typename T>
void check_sum(const dlrt_collective_api& c, dlrt_comm* comm, int nranks, int32_t dtype, size_t n,
               const char* what, bool in_place) {
  std::vector<T> send(n), recv(n);
  for (size_t i = 0; i < n; ++i) send[i] = input<T>(g_rank, i);
  T* out = in_place ? send.data() : recv.data();
  ok(c.all_reduce(comm, send.data(), out, n, dtype, DLRT_REDUCE_SUM, nullptr), what);
  std::vector<T> want = expected_sum<T>(nranks, n);
  if (std::memcmp(out, want.data(), n * sizeof(T)) != 0) {
    size_t i = 0;
    while (std::memcmp(&out[i], &want[i], sizeof(T)) == 0) ++i;
    die("%s: element %zu is %.17g, expected %.17g", what, i, static_cast<double>(out[i]),
        static_cast<double>(want[i]));
  }
  check_identical_everywhere(c, comm, nranks, out, n * sizeof(T), what);
}

void run_collectives(const dlrt_collective_api& c, dlrt_comm* comm, int nranks) {
  check_sum<float>(c, comm, nranks, DLRT_F32, 1000, "all_reduce SUM F32", false);
  check_sum<double>(c, comm, nranks, DLRT_F64, 1000, "all_reduce SUM F64", false);
  check_sum<int32_t>(c, comm, nranks, DLRT_I32, 1000, "all_reduce SUM I32", false);
  check_sum<int64_t>(c, comm, nranks, DLRT_I64, 1000, "all_reduce SUM I64", false);
  check_sum<float>(c, comm, nranks, DLRT_F32, 1000, "all_reduce SUM F32 in place", true);
  // 16 MiB: past Open MPI's eager limit, so the messages go by rendezvous.
  check_sum<float>(c, comm, nranks, DLRT_F32, size_t{4} << 20, "all_reduce SUM F32 16 MiB", false);

  {  // MAX, MIN, PROD, AVG
    int32_t v = g_rank + 2, out = 0;
    int32_t max = nranks + 1, min = 2, prod = 1;
    for (int r = 0; r < nranks; ++r) prod *= r + 2;
    ok(c.all_reduce(comm, &v, &out, 1, DLRT_I32, DLRT_REDUCE_MAX, nullptr), "MAX");
    if (out != max) die("MAX is %d, expected %d", out, max);
    ok(c.all_reduce(comm, &v, &out, 1, DLRT_I32, DLRT_REDUCE_MIN, nullptr), "MIN");
    if (out != min) die("MIN is %d, expected %d", out, min);
    ok(c.all_reduce(comm, &v, &out, 1, DLRT_I32, DLRT_REDUCE_PROD, nullptr), "PROD");
    if (out != prod) die("PROD is %d, expected %d", out, prod);
    double d = g_rank + 1.0, avg = 0, want = 0;
    for (int r = 0; r < nranks; ++r) want += r + 1.0;
    want /= nranks;
    ok(c.all_reduce(comm, &d, &avg, 1, DLRT_F64, DLRT_REDUCE_AVG, nullptr), "AVG");
    if (avg != want) die("AVG is %.17g, expected %.17g", avg, want);
  }

  {  // broadcast from the last rank, then from rank 0 in place
    const int root = nranks - 1;
    std::vector<uint16_t> buf(333);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint16_t>(g_rank * 1000 + i);
    std::vector<uint16_t> out(buf.size(), 0);
    ok(c.broadcast(comm, buf.data(), out.data(), buf.size(), DLRT_BF16, root, nullptr),
       "broadcast");
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i] != static_cast<uint16_t>(root * 1000 + i))
        die("broadcast: element %zu is %u", i, out[i]);
    std::vector<double> d(77, g_rank == 0 ? 3.25 : -1.0);
    ok(c.broadcast(comm, d.data(), d.data(), d.size(), DLRT_F64, 0, nullptr), "broadcast in place");
    for (double v : d)
      if (v != 3.25) die("broadcast in place: got %g", v);
  }

  {  // all_gather, then in place (send is this rank's block of recv)
    const size_t n = 50;
    std::vector<int64_t> mine(n), all(n * static_cast<size_t>(nranks), -1);
    for (size_t i = 0; i < n; ++i) mine[i] = g_rank * 100000 + static_cast<int64_t>(i);
    ok(c.all_gather(comm, mine.data(), all.data(), n, DLRT_I64, nullptr), "all_gather");
    for (int r = 0; r < nranks; ++r)
      for (size_t i = 0; i < n; ++i)
        if (all[static_cast<size_t>(r) * n + i] != r * 100000 + static_cast<int64_t>(i))
          die("all_gather: block %d element %zu", r, i);
    std::vector<int64_t> inplace(n * static_cast<size_t>(nranks), -1);
    int64_t* my_block = inplace.data() + static_cast<size_t>(g_rank) * n;
    std::memcpy(my_block, mine.data(), n * sizeof(int64_t));
    ok(c.all_gather(comm, my_block, inplace.data(), n, DLRT_I64, nullptr), "all_gather in place");
    if (inplace != all) die("all_gather in place differs");
  }
}

// ---- failures ----------------------------------------------------------------------------

// An all_reduce expected to fail naming `peer`; prints the RANK<r>_ERROR line and returns
// (code, message).
std::pair<dlrt_code, std::string> failing_all_reduce(const dlrt_collective_api& c, dlrt_comm* comm,
                                                     int peer, int nranks, int64_t timeout_ms,
                                                     bool unavailable_ok) {
  float x[4] = {1, 2, 3, 4};
  const auto t0 = Clock::now();
  auto [code, msg] = take_status(c.all_reduce(comm, x, x, 4, DLRT_F32, DLRT_REDUCE_SUM, nullptr));
  const double took = seconds_since(t0);
  std::printf("RANK%d_ERROR: %s: %s (after %.2f s)\n", g_rank, code_name(code), msg.c_str(), took);
  std::fflush(stdout);
  bool code_ok = code == DLRT_DEADLINE_EXCEEDED || (unavailable_ok && code == DLRT_UNAVAILABLE);
  if (!code_ok)
    die("expected DEADLINE_EXCEEDED%s, got %s", unavailable_ok ? " or UNAVAILABLE" : "",
        code_name(code));
  const std::string who = "rank " + std::to_string(peer) + " of " + std::to_string(nranks);
  if (msg.find(who) == std::string::npos) die("the error does not name %s", who.c_str());
  const double limit = 4.0 * static_cast<double>(timeout_ms) / 1000.0;
  if (took > limit) die("the error took %.2f s, more than 4x the timeout (%.2f s)", took, limit);
  if (code == DLRT_DEADLINE_EXCEEDED && took < 0.9 * static_cast<double>(timeout_ms) / 1000.0)
    die("DEADLINE_EXCEEDED after %.2f s, before the timeout", took);
  return {code, msg};
}

void run_timeout(const dlrt_collective_api& c, dlrt_comm* comm, int nranks, int64_t timeout_ms) {
  if (nranks != 2) die("run with 2 ranks");
  if (g_rank == 0) {
    auto [code, first] = failing_all_reduce(c, comm, 1, nranks, timeout_ms, false);
    // The communicator is now broken: every call repeats the first error.
    float x = 1;
    auto [code2, msg2] =
        take_status(c.all_reduce(comm, &x, &x, 1, DLRT_F32, DLRT_REDUCE_SUM, nullptr));
    if (code2 != DLRT_FAILED_PRECONDITION || msg2.find(first) == std::string::npos)
      die("after the timeout: %s: %s (expected FAILED_PRECONDITION repeating the first error)",
          code_name(code2), msg2.c_str());
    auto [code3, msg3] = take_status(c.broadcast(comm, &x, &x, 1, DLRT_F32, 0, nullptr));
    if (code3 != DLRT_FAILED_PRECONDITION) die("broadcast after the timeout: %s", code_name(code3));
  } else {
    // Skip rank 0's all_reduce: arrive only after its deadline has passed. By then rank 0 has
    // given up, so this late call times out in turn, naming rank 0.
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms + 1500));
    failing_all_reduce(c, comm, 0, nranks, timeout_ms, false);
  }
  c.comm_abort(comm);
}

void run_dead_peer(const dlrt_collective_api& c, dlrt_comm* comm, int nranks, int64_t timeout_ms) {
  if (nranks != 2) die("run with 2 ranks");
  if (g_rank == 1) {
    std::printf("rank 1: killing itself (SIGKILL) before the all_reduce\n");
    std::fflush(stdout);
    std::raise(SIGKILL);
  }
  failing_all_reduce(c, comm, 1, nranks, timeout_ms, true);
  c.comm_abort(comm);
  std::printf("rank 0: a peer is gone; giving up (exit)\n");
}

void run_dead_at_start(const dlrt_collective_api& c, const uint8_t* id, int nranks,
                       int64_t timeout_ms) {
  if (nranks != 2) die("run with 2 ranks");
  if (g_rank == 1) {
    std::printf("rank 1: killing itself (SIGKILL) before comm_create\n");
    std::fflush(stdout);
    std::raise(SIGKILL);
  }
  dlrt_comm* comm = nullptr;
  const auto t0 = Clock::now();
  auto [code, msg] = take_status(c.comm_create(nullptr, id, nranks, g_rank, timeout_ms, &comm));
  const double took = seconds_since(t0);
  std::printf("RANK0_ERROR: %s: %s (after %.2f s)\n", code_name(code), msg.c_str(), took);
  if (code != DLRT_DEADLINE_EXCEEDED && code != DLRT_UNAVAILABLE)
    die("comm_create: expected DEADLINE_EXCEEDED or UNAVAILABLE, got %s", code_name(code));
  if (comm != nullptr) die("comm_create failed but set its out-parameter");
  if (took > 4.0 * static_cast<double>(timeout_ms) / 1000.0) die("the error took %.2f s", took);
}

// The file rank 0 creates when its shutdown has returned, for rank 1 to see: both ranks are
// children of the same mpirun on this host, so its pid names the job.
std::string shutdown_marker() {
  return "/tmp/dlrt-mpi-exit-after-last-" + std::to_string(getppid());
}

// Rank 1 goes silent right after the last collective and later exits without MPI_Finalize,
// as a worker that hangs or dies slowly after training. (One already dead when rank 0 shuts
// down is noticed by Open MPI 4.1's MPI_Finalize under --enable-recovery; a silent one is
// not: MPI_Finalize waited for it as long as it lived, for ever if it never exits.) Rank 1
// stays silent until rank 0's shutdown has returned (the marker file) or 15 s have passed.
// Rank 0 shuts down (comm_destroy, plugin_destroy), timed: with the final barrier it returns
// after the 2 s timeout naming rank 1; without it, it would wait for rank 1's exit.
void run_exit_after_last(const dlrt_collective_api& c, dlrt_comm* comm, int nranks,
                         int64_t timeout_ms, LoadedPlugin& plugin) {
  if (nranks != 2) die("run with 2 ranks");
  const std::string marker = shutdown_marker();
  if (g_rank == 1) {
    std::printf("rank 1: silent after the last collective, then exiting without MPI_Finalize\n");
    std::fflush(stdout);
    const auto give_up = Clock::now() + std::chrono::seconds(15);
    while (access(marker.c_str(), F_OK) != 0 && Clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    unlink(marker.c_str());
    std::_Exit(0);
  }
  c.comm_destroy(comm);
  const auto t0 = Clock::now();
  plugin.destroy();  // the last plugin_destroy: final barrier, then MPI_Finalize or not
  const double took = seconds_since(t0);
  if (FILE* f = std::fopen(marker.c_str(), "w")) std::fclose(f);
  std::printf("rank 0: plugin_destroy returned after %.2f s\n", took);
  const double timeout_s = static_cast<double>(timeout_ms) / 1000.0;
  if (took > 3.0 * timeout_s) die("shutdown took %.2f s, more than 3x the timeout", took);
  if (took < 0.9 * timeout_s) die("shutdown took %.2f s: it cannot have waited for rank 1", took);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  g_mode = argc > 1 ? argv[1] : "?";
  const std::string mode = g_mode;
  g_rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK");
  const int nranks = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
  if (g_rank < 0 || nranks < 1) die("no rank in the environment: run me under mpirun");
  if (mode != "collectives" && mode != "timeout" && mode != "dead_peer" &&
      mode != "dead_at_start" && mode != "exit_after_last")
    die("usage: mpi_driver collectives|timeout|dead_peer|dead_at_start|exit_after_last");
  const int64_t timeout_ms = mode == "collectives" ? 30000 : 2000;
  {
    LoadedPlugin plugin(DLRT_PLUGIN_FILE);
    if (!plugin.ok()) die("load: %s", plugin.error().c_str());
    if (plugin.create() == nullptr) die("%s", plugin.error().c_str());
    const dlrt_collective_api& c = *plugin.api().collectives;
    uint8_t id[DLRT_COMM_ID_BYTES];
    ok(c.comm_id_create(nullptr, id), "comm_id_create");
    dlrt_comm* comm = nullptr;
    if (mode == "dead_at_start") {
      run_dead_at_start(c, id, nranks, timeout_ms);
      std::printf("DRIVER_OK rank %d %s\n", g_rank, g_mode);
      std::fflush(stdout);
      return 0;  // plugin_destroy: no MPI_Finalize (MPI never finished initialising)
    }
    ok(c.comm_create(nullptr, id, nranks, g_rank, timeout_ms, &comm), "comm_create");
    // A first all_reduce that must work, so the failures below happen mid-job.
    check_sum<float>(c, comm, nranks, DLRT_F32, 10, "warm-up all_reduce", false);

    if (mode == "collectives") {
      run_collectives(c, comm, nranks);
      c.comm_destroy(comm);
    } else if (mode == "exit_after_last") {
      run_exit_after_last(c, comm, nranks, timeout_ms, plugin);
    } else if (mode == "timeout") {
      run_timeout(c, comm, nranks, timeout_ms);
    } else {
      run_dead_peer(c, comm, nranks, timeout_ms);
    }
    std::printf("DRIVER_OK rank %d %s\n", g_rank, g_mode);
  }  // plugin_destroy: MPI_Finalize after a clean run, none after an abort
  return 0;
}
