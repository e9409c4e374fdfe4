// watchdog_test.cc: a wait that returns in time is left alone; one that does not is ended by
// on_expiry (as comm_abort ends a stuck NCCL sync), and the run reports the expiry; errors of
// an unexpired wait pass through.
#include "distribute/watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

namespace dlrt::core::distribute {
namespace {

TEST(Watchdog, AWaitInTimeIsNotDisturbed) {
  Watchdog w;
  int expiries = 0;
  for (int i = 0; i < 100; ++i)
    EXPECT_FALSE(w.run(
        10000, [] {}, [&] { ++expiries; }));
  EXPECT_EQ(expiries, 0);
  EXPECT_FALSE(w.run(
      0, [] {}, [&] { ++expiries; }))
      << "no timeout: no watchdog";
}

TEST(Watchdog, AStuckWaitIsEndedByOnExpiry) {
  Watchdog w;
  for (int round = 0; round < 3; ++round) {  // the same watchdog serves later runs
    std::mutex mu;
    std::condition_variable cv;
    bool aborted = false;
    const auto start = std::chrono::steady_clock::now();
    const bool expired = w.run(
        30,
        [&] {  // stuck until "aborted", then fails as an aborted sync would
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return aborted; });
          throw std::runtime_error("stream_synchronize: communicator aborted");
        },
        [&] {
          std::lock_guard<std::mutex> lock(mu);
          aborted = true;
          cv.notify_all();
        });
    EXPECT_TRUE(expired);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  }
  EXPECT_FALSE(w.run(
      10000, [] {}, [] {}))
      << "and a later quick one is fine";
}

TEST(Watchdog, ErrorsOfAWaitInTimePassThrough) {
  Watchdog w;
  EXPECT_THROW(w.run(
                   10000, [] { throw std::runtime_error("sync failed"); }, [] {}),
               std::runtime_error);
}

}  // namespace
}  // namespace dlrt::core::distribute
