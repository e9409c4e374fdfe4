// dlrt/strategy.hpp: Strategy, data parallelism over several devices and processes
// (dlrt_strategy; dlrt.h "Distribution").
//
//   dlrt::Strategy strategy(ctx);                 // every GPU, else every CPU logical device
//   // one step's gradients, replica-major: grads[r * n + k] is gradient k of replica r,
//   // on device strategy.replica_device(r)
//   strategy.all_reduce(grads, n);                // now every replica holds the sums
//
// With StrategyOptions::multi_worker the group spans every process of an mpirun (or torchrun)
// job; rank() says which one this is.
#ifndef DLRT_STRATEGY_HPP_
#define DLRT_STRATEGY_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/context.hpp"
#include "dlrt/error.hpp"
#include "dlrt/tensor.hpp"

namespace dlrt {

// What a Strategy is made with (dlrt_strategy_options).
struct StrategyOptions {
  std::vector<std::string> devices;  // one replica per device spec; empty: the default
  bool multi_worker = false;         // true: every worker of the job (MultiWorkerMirrored)
  int64_t timeout_ms = 0;            // > 0; 0: DLRT_COLLECTIVE_TIMEOUT, else 300 s
};

// This process's share of a data-parallel group (dlrt_strategy). Move-only; destroy it before
// its Context. After a collective failed (a dead worker, a timeout) every later call throws
// Error(DLRT_FAILED_PRECONDITION) repeating the first error: make a new one. One thread at a
// time.
class Strategy {
 public:
  // Resolves the devices and, with multi_worker, joins the other workers (blocking until all
  // have joined, or the timeout).
  explicit Strategy(const Context& ctx, const StrategyOptions& options = {}) {
    std::vector<const char*> specs;
    for (const std::string& d : options.devices) specs.push_back(d.c_str());
    dlrt_strategy_options o;
    dlrt_strategy_options_init(&o);
    o.devices = specs.empty() ? nullptr : specs.data();
    o.num_devices = specs.size();
    o.multi_worker = options.multi_worker ? 1 : 0;
    o.timeout_ms = options.timeout_ms;
    dlrt_strategy* raw = nullptr;
    check(dlrt_strategy_create(ctx.get(), &o, &raw));
    handle_.reset(raw);
  }
  // Adopts a strategy made through the C API; it is destroyed with this object.
  explicit Strategy(dlrt_strategy* adopted) noexcept : handle_(adopted) {}

  Strategy(Strategy&&) noexcept = default;
  Strategy& operator=(Strategy&&) noexcept = default;
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  dlrt_strategy* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Local replicas, and the registry index (Context::device) of each.
  size_t num_replicas() const { return dlrt_strategy_num_replicas(get()); }
  size_t replica_device(size_t replica) const {
    size_t index = 0;
    check(dlrt_strategy_replica_device(get(), replica, &index));
    return index;
  }
  // This worker's rank, the number of workers, the rank among this host's workers.
  int32_t rank() const { return dlrt_strategy_rank(get()); }
  int32_t num_workers() const { return dlrt_strategy_num_workers(get()); }
  int32_t local_rank() const { return dlrt_strategy_local_rank(get()); }

  // `tensors`: num_replicas() groups of `per_replica` f32 tensors, replica-major; each is
  // replaced by the sum over every replica of every worker.
  void all_reduce(const std::vector<Tensor*>& tensors, size_t per_replica) {
    const std::vector<dlrt_tensor*> c = c_tensors(tensors, per_replica, "all_reduce");
    check(dlrt_strategy_all_reduce(get(), c.data(), per_replica));
  }
  // The same layout, any dtype: replica 0 of worker 0's tensors copied into every other's.
  void broadcast(const std::vector<Tensor*>& tensors, size_t per_replica) {
    const std::vector<dlrt_tensor*> c = c_tensors(tensors, per_replica, "broadcast");
    check(dlrt_strategy_broadcast(get(), c.data(), per_replica));
  }

 private:
  // The C handles. The one check C cannot make (it sees a pointer, not a count): there are
  // exactly num_replicas() * per_replica of them.
  std::vector<dlrt_tensor*> c_tensors(const std::vector<Tensor*>& tensors, size_t per_replica,
                                      const char* method) const {
    const size_t replicas = num_replicas();
    if (per_replica != 0 && tensors.size() != replicas * per_replica)
      throw Error(DLRT_INVALID_ARGUMENT,
                  std::string("Strategy::") + method + ": " + std::to_string(tensors.size()) +
                      " tensors, expected " + std::to_string(replicas) + " replicas x " +
                      std::to_string(per_replica) + " per replica = " +
                      std::to_string(replicas * per_replica) + " (replica-major)");
    std::vector<dlrt_tensor*> c;
    c.reserve(tensors.size());
    for (Tensor* t : tensors) c.push_back(t != nullptr ? t->get() : nullptr);
    return c;
  }

  detail::Owner<dlrt_strategy> handle_;
};

}  // namespace dlrt

#endif  // DLRT_STRATEGY_HPP_
