// dlrt/nn/distribute.hpp: tf.distribute's MirroredStrategy and MultiWorkerMirroredStrategy
// for nn models (docs/design.md section 7).
//
//   nn::MirroredStrategy strategy(ctx);              // every GPU, else every CPU device
//   {
//     nn::StrategyScope scope(strategy);             // Keras: `with strategy.scope():`
//     model.compile(nn::Adam(1e-3), loss, {"accuracy"});
//   }
//   model.fit(x, y, options);                        // batch_size is the global batch
//
// The model code is unchanged except for the scope: a model compiled while a StrategyScope
// lives trains data-parallel. Each replica (one per local device, and per worker in a job
// that mpirun started) holds a copy of every variable on its device and runs the step on its
// contiguous slice of each global batch; the gradients are summed over every replica
// (dlrt_strategy_all_reduce: NCCL on CUDA devices, an in-process sum on CPU devices, MPI
// between workers) and every replica applies the same update, so the weights stay identical.
//
// Rules users can rely on:
// - The global batch (FitOptions::batch_size) must split evenly over the replicas in sync
//   (local replicas × workers): anything else is INVALID_ARGUMENT saying which multiple to
//   use. The last, partial batch of an epoch is split the same way; replicas whose slice is
//   short (or empty) are padded and masked, so the update is the mean over the real rows.
// - The result after N steps equals single-device training with the same global batch within
//   float tolerance (summation order differs); with Dropout, replica 0 draws the single-device
//   masks and the others their own.
// - Replica 0's weights are broadcast to every replica before training (also after
//   load_weights), so every replica starts from the same state.
// - evaluate / predict run on replica 0 of each worker (all replicas hold the same weights);
//   state(), save_weights and checkpoints read replica 0.
// - Multi-worker: only rank 0 prints progress and runs chief-only callbacks (ModelCheckpoint,
//   CSVLogger); the other ranks are quiet unless FitOptions::progress says otherwise through
//   `all_ranks_progress`. Every worker must run the same fit with the same data and seed.
// - Device scopes are ignored for a model compiled under a strategy: the replicas' devices
//   are the strategy's.
#ifndef DLRT_NN_DISTRIBUTE_HPP_
#define DLRT_NN_DISTRIBUTE_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"

namespace dlrt::nn {

class DistributionStrategy {
 public:
  virtual ~DistributionStrategy() = default;
  // Replicas that sum their gradients each step: local replicas × workers.
  int64_t num_replicas_in_sync() const {
    return static_cast<int64_t>(impl_->num_replicas()) * impl_->num_workers();
  }
  size_t num_local_replicas() const { return impl_->num_replicas(); }
  int32_t rank() const { return impl_->rank(); }
  int32_t num_workers() const { return impl_->num_workers(); }
  bool is_chief() const { return impl_->rank() == 0; }
  // The devices of the local replicas, as full names ("/device:CPU:1").
  std::vector<std::string> devices() const;
  const std::shared_ptr<dlrt::Strategy>& impl() const { return impl_; }
  const Context& context() const { return *ctx_; }

 protected:
  DistributionStrategy(const Context& ctx, dlrt::StrategyOptions options);

 private:
  // TensorFlow's default: every GPU; else every logical device of the CPU backend (type
  // "CPU": the reference plugin's devices are CPU-class too, but they are the slow oracle).
  static std::vector<std::string> default_devices(const Context& ctx);

  const Context* ctx_;
  std::shared_ptr<dlrt::Strategy> impl_;
};

// One process, several devices. `devices` empty: every GPU, else every CPU logical device.
class MirroredStrategy : public DistributionStrategy {
 public:
  explicit MirroredStrategy(const Context& ctx, std::vector<std::string> devices = {},
                            int64_t timeout_ms = 0)
      : DistributionStrategy(ctx, dlrt::StrategyOptions{std::move(devices), false, timeout_ms}) {}
};

// Every process of an mpirun job (rank and size from its environment), each mirrored over its
// local devices (default as MirroredStrategy). Joining blocks until every worker has made
// its strategy, or the collective timeout (DLRT_COLLECTIVE_TIMEOUT) passes.
class MultiWorkerMirroredStrategy : public DistributionStrategy {
 public:
  explicit MultiWorkerMirroredStrategy(const Context& ctx,
                                       std::vector<std::string> local_devices = {},
                                       int64_t timeout_ms = 0)
      : DistributionStrategy(ctx,
                             dlrt::StrategyOptions{std::move(local_devices), true, timeout_ms}) {}
};

namespace detail {
// The strategy of the innermost live StrategyScope of this thread (Keras keeps one per thread;
// held in libdlrt_nn, once per process).
const DistributionStrategy*& current_strategy();
}  // namespace detail

// `with strategy.scope():` — models compiled while it lives train under `strategy`.
class StrategyScope {
 public:
  explicit StrategyScope(const DistributionStrategy& strategy)
      : previous_(detail::current_strategy()) {
    detail::current_strategy() = &strategy;
  }
  ~StrategyScope() { detail::current_strategy() = previous_; }
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;

 private:
  const DistributionStrategy* previous_;
};

}  // namespace dlrt::nn

#endif  // DLRT_NN_DISTRIBUTE_HPP_
