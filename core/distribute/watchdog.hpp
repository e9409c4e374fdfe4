// watchdog.hpp: a deadline for a wait that cannot time out by itself.
//
// Why: NCCL collectives are enqueued on a stream and complete asynchronously. If a peer dies
// after the enqueue, the kernel never finishes and stream_synchronize blocks for ever; the
// only way out is ncclCommAbort from another thread, which makes the stuck kernel return
// (plugins/cuda/collectives.cc: "a hang of stream_synchronize, which the host bounds itself
// and answers with comm_abort"). This is that other thread, as NCCL's own examples and
// PyTorch's ProcessGroupNCCL watchdog do it.
//
//   bool expired = watchdog.run(timeout_ms, [&] { sync every stream; },
//                               [&] { abort every communicator; });
//
// run() calls `wait` on the calling thread. If `wait` has not returned after timeout_ms, the
// watchdog thread calls `on_expiry` (once), and run() returns true once `wait` came back
// (an exception from `wait` after an expiry is the expected consequence of the abort and is
// swallowed; without one it is rethrown). run() never returns while `on_expiry` is running.
// Timeout <= 0: no deadline, `wait` is just called.
//
// One thread, started at the first run() and joined by the destructor. run() is for one
// caller at a time (the Strategy's mutex).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace dlrt::core::distribute {

class Watchdog {
 public:
  Watchdog() = default;
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool run(int64_t timeout_ms, const std::function<void()>& wait,
           const std::function<void()>& on_expiry);

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false;
  bool armed_ = false;       // a run() is waiting
  bool firing_ = false;      // on_expiry is running
  bool expired_ = false;     // on_expiry ran for the current run()
  uint64_t generation_ = 0;  // counts run()s
  std::chrono::steady_clock::time_point deadline_;
  const std::function<void()>* on_expiry_ = nullptr;
};

}  // namespace dlrt::core::distribute
