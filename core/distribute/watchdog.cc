// watchdog.cc: see watchdog.hpp.
#include "distribute/watchdog.hpp"

#include <exception>

namespace dlrt::core::distribute {

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Watchdog::run(int64_t timeout_ms, const std::function<void()>& wait,
                   const std::function<void()>& on_expiry) {
  if (timeout_ms <= 0) {
    wait();
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    armed_ = true;
    expired_ = false;
    ++generation_;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    on_expiry_ = &on_expiry;
  }
  cv_.notify_all();

  std::exception_ptr error;
  try {
    wait();
  } catch (...) {
    error = std::current_exception();
  }

  std::unique_lock<std::mutex> lock(mu_);
  armed_ = false;
  on_expiry_ = nullptr;
  cv_.notify_all();
  cv_.wait(lock, [&] { return !firing_; });  // on_expiry must not outlive this call
  const bool expired = expired_;
  lock.unlock();
  if (error && !expired) std::rethrow_exception(error);
  return expired;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_ || expired_) {  // nothing to watch (or this run already fired)
      cv_.wait(lock);
      continue;
    }
    // Watch this run only: a later run (new generation) starts the loop again with its own
    // deadline.
    const uint64_t generation = generation_;
    const auto deadline = deadline_;
    if (cv_.wait_until(lock, deadline,
                       [&] { return stop_ || !armed_ || generation_ != generation; }))
      continue;
    // The deadline passed with the wait still running.
    expired_ = true;
    firing_ = true;
    const std::function<void()>* fire = on_expiry_;
    lock.unlock();
    try {
      (*fire)();
    } catch (...) {  // on_expiry is noexcept in spirit: an abort that fails has nothing to add
    }
    lock.lock();
    firing_ = false;
    cv_.notify_all();
  }
}

}  // namespace dlrt::core::distribute
