// deadline.hpp: the one clock every wait of the mpi plugin polls against.
//
// A call's deadline starts when the call starts and lasts the communicator's timeout_ms
// (<= 0: none), so every phase of one call (comm_create: MPI_Init, MPI_Comm_idup, the
// start-up barrier) shares it, and the call as a whole never exceeds it by more than one
// poll.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

namespace dlrt::mpi {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(int64_t timeout_ms)
      : start_(Clock::now()),
        timeout_ms_(timeout_ms),
        // Clamped so that start + timeout cannot overflow the clock (1e12 ms is 31 years).
        at_(start_ + std::chrono::milliseconds(std::min<int64_t>(timeout_ms, 1000000000000))) {}

  bool none() const { return timeout_ms_ <= 0; }
  bool passed() const { return !none() && Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }

  // The timeout as people read it: "2.0 s".
  std::string text() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(timeout_ms_) / 1000.0);
    return buf;
  }

  // Between two polls: yield for the first 2 ms of a wait (small collectives finish in
  // microseconds), then sleep 200 us (a long wait costs no CPU; latency grows by at most
  // that much).
  void pause() const {
    if (Clock::now() - start_ < std::chrono::milliseconds(2)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

 private:
  Clock::time_point start_;
  int64_t timeout_ms_;
  Clock::time_point at_;
};

}  // namespace dlrt::mpi
