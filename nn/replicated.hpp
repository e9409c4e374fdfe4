// replicated.hpp (private to libdlrt_nn): the replicas of a model trained under a distribution strategy
// (distribute.hpp). An implementation part of model.hpp (namespace nn::detail).
//
// One Session per local replica, each pinned to its replica's device (the plan's device
// scopes replaced by it). A training step over a global batch of B rows, with R replicas in
// sync (L local × W workers) and b = B / R rows per replica:
//   1. replica g (= rank × L + local index) takes rows [g·b, (g+1)·b) of the global batch
//      (fewer, or none, in the last partial batch) and runs its grads executable; the local
//      replicas run at the same time, one host thread each;
//   2. the strategy sums every replica's {gradients, loss_sum, metric counts} in place over
//      all replicas of all workers, in one all-reduce;
//   3. every replica runs its apply executable with scale = 1 / (real rows of the batch).
// Every worker computes the same global batches (the same epoch order from the same seed).
#ifndef DLRT_NN_REPLICATED_HPP_
#define DLRT_NN_REPLICATED_HPP_

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/session.hpp"

namespace dlrt::nn::detail {

// Runs fn(r) for r in [0, n): one host thread each when there are several (the replicas'
// devices work at the same time), inline for one. Rethrows the first error after all ended.
template <typename Fn>
void for_each_replica(size_t n, Fn&& fn) {
  if (n == 1) return fn(0);
  std::vector<std::future<void>> done;
  for (size_t r = 1; r < n; ++r)
    done.push_back(std::async(std::launch::async, [&fn, r] { fn(r); }));
  std::exception_ptr first;
  try {
    fn(0);
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : done) try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  if (first) std::rethrow_exception(first);
}

// A local replica's copy of the variables to keep in sync: its graph, its f32 variables (the
// same names, shapes and order on every replica) and the device it lives on.
struct ReplicaVariables {
  Graph* graph;
  std::vector<Value> variables;
  size_t device;
};

// Replica 0 of worker 0's variables into every replica of every worker: one broadcast of a
// flat f32 tensor per local replica holding every variable in order.
void broadcast_from_chief(const Context& ctx, dlrt::Strategy& strategy,
                          const std::vector<ReplicaVariables>& replicas);

class ReplicaSet {
 public:
  // `devices`: the local replicas' device names, in the strategy's order.
  ReplicaSet(const Context& ctx, const std::shared_ptr<const Plan>& plan,
             std::shared_ptr<dlrt::Strategy> strategy, const std::vector<std::string>& devices);

  Session& primary() { return *sessions_.front(); }
  size_t size() const { return sessions_.size(); }
  Session& replica(size_t r) { return *sessions_.at(r); }
  int64_t in_sync() const;

  bool train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs, const ArrayRefs& ys) const;
  // Builds every replica's split step for global batch `batch` (a multiple of in_sync()).
  void build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch);
  void upload(const ArrayRefs& xs, const ArrayRefs& ys);

  // Replica 0 of worker 0's variables into every replica of every worker: one broadcast of
  // a flat f32 tensor per replica holding every state variable in plan order.
  void sync_from_chief();

  // Random layers continue from step `next` (resume: the steps already taken).
  void set_run_count(uint64_t next);

  // One step over the global batch `indices[0, count)`. Returns the plan's results of the
  // whole global batch (every worker gets the same numbers): {mean loss, [each output's mean
  // loss], counts...}.
  std::vector<double> train_step(const int32_t* indices, int64_t count);

 private:
  size_t device_of(Session& s) const;
  template <typename Fn>
  void parallel(Fn&& fn) {
    for_each_replica(sessions_.size(), std::forward<Fn>(fn));
  }

  const Context& ctx_;
  std::shared_ptr<dlrt::Strategy> strategy_;
  std::vector<std::unique_ptr<Session>> sessions_;
};

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_REPLICATED_HPP_
