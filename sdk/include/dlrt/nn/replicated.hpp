// dlrt/nn/replicated.hpp: the replicas of a model trained under a distribution strategy
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

#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/session.hpp"

namespace dlrt::nn::detail {

// Runs fn(r) for r in [0, n): one host thread each when there are several (the replicas'
// devices work at the same time), inline for one. Rethrows the first error after all ended.
template <typename Fn>
void for_each_replica(size_t n, Fn&& fn) {
  if (n == 1) return fn(0);
  std::vector<std::future<void>> done;
  for (size_t r = 1; r < n; ++r) done.push_back(std::async(std::launch::async, [&fn, r] { fn(r); }));
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
inline void broadcast_from_chief(const Context& ctx, dlrt::Strategy& strategy,
                                 const std::vector<ReplicaVariables>& replicas) {
  std::vector<Tensor> flat;
  std::vector<Tensor*> ptrs;
  for (const ReplicaVariables& r : replicas) {
    std::vector<float> values;
    for (const Value& v : r.variables) {
      std::vector<float> part = r.graph->read_variable<float>(v);
      values.insert(values.end(), part.begin(), part.end());
    }
    flat.push_back(Tensor::create(ctx, r.device, DLRT_F32, {static_cast<int64_t>(values.size())}));
    flat.back().write(values);
  }
  for (Tensor& t : flat) ptrs.push_back(&t);
  strategy.broadcast(ptrs, 1);
  for (size_t k = 0; k < replicas.size(); ++k) {
    const std::vector<float> values = flat[k].read<float>();
    size_t at = 0;
    for (const Value& v : replicas[k].variables) {
      const size_t n = static_cast<size_t>(element_count(v.dims()));
      replicas[k].graph->write_variable(
          v, std::vector<float>(values.begin() + static_cast<long>(at),
                                values.begin() + static_cast<long>(at + n)));
      at += n;
    }
  }
}

class ReplicaSet {
 public:
  // `devices`: the local replicas' device names, in the strategy's order.
  ReplicaSet(const Context& ctx, const std::shared_ptr<const Plan>& plan,
             std::shared_ptr<dlrt::Strategy> strategy, const std::vector<std::string>& devices)
      : ctx_(ctx), strategy_(std::move(strategy)) {
    const uint64_t first = static_cast<uint64_t>(strategy_->rank()) * devices.size();
    for (size_t r = 0; r < devices.size(); ++r) {
      auto pinned = std::make_shared<Plan>(*plan);
      pinned->device_scopes = {devices[r]};
      sessions_.push_back(std::make_unique<Session>(ctx, pinned, first + r));
    }
  }

  Session& primary() { return *sessions_.front(); }
  size_t size() const { return sessions_.size(); }
  Session& replica(size_t r) { return *sessions_.at(r); }
  int64_t in_sync() const {
    return static_cast<int64_t>(sessions_.size()) * strategy_->num_workers();
  }

  bool train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs, const ArrayRefs& ys) const {
    return sessions_.front()->has_split() &&
           sessions_.front()->train_fits(rows, batch / in_sync(), xs, ys);
  }
  // Builds every replica's split step for global batch `batch` (a multiple of in_sync()).
  void build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
    if (batch % in_sync() != 0)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "fit: the global batch_size " + std::to_string(batch) +
                      " does not split "
                      "evenly over " +
                      std::to_string(in_sync()) + " replicas (" + std::to_string(sessions_.size()) +
                      " local × " + std::to_string(strategy_->num_workers()) +
                      " workers); use a multiple of " + std::to_string(in_sync()));
    for (auto& s : sessions_) s->build_split(xs, ys, batch / in_sync());
  }
  void upload(const ArrayRefs& xs, const ArrayRefs& ys) {
    for (auto& s : sessions_) s->upload(xs, ys);
  }

  // Replica 0 of worker 0's variables into every replica of every worker: one broadcast of
  // a flat f32 tensor per replica holding every state variable in plan order.
  void sync_from_chief() {
    std::vector<ReplicaVariables> replicas;
    for (auto& s : sessions_) replicas.push_back({&s->graph(), s->vars(), device_of(*s)});
    broadcast_from_chief(ctx_, *strategy_, replicas);
  }

  // Random layers continue from step `next` (resume: the steps already taken).
  void set_run_count(uint64_t next) {
    for (auto& s : sessions_) s->grads_executable().set_run_count(next);
  }

  // One step over the global batch `indices[0, count)`. Returns the plan's results of the
  // whole global batch (every worker gets the same numbers): {mean loss, [each output's mean
  // loss], counts...}.
  std::vector<double> train_step(const int32_t* indices, int64_t count) {
    const int64_t b = primary().batch();
    const int64_t first_replica =
        static_cast<int64_t>(strategy_->rank()) * static_cast<int64_t>(sessions_.size());
    auto rows = [&](size_t r) {
      const int64_t begin = std::min(count, (first_replica + static_cast<int64_t>(r)) * b);
      return std::pair<int64_t, int64_t>(begin, std::min(count, begin + b) - begin);
    };
    parallel([&](size_t r) {
      auto [begin, n] = rows(r);
      sessions_[r]->split_grads(indices + begin, n);
    });
    std::vector<Tensor*> sums;
    for (auto& s : sessions_)
      for (Tensor& t : s->split_sums()) sums.push_back(&t);
    strategy_->all_reduce(sums, sessions_.front()->split_sums().size());

    const float scale = 1.f / static_cast<float>(count);
    parallel([&](size_t r) { sessions_[r]->split_apply(scale); });

    std::vector<Tensor>& mine = primary().split_sums();
    const Plan& plan = primary().plan();
    const size_t grads = mine.size() - plan.results(), losses = grads + plan.loss_results();
    std::vector<double> out;
    for (size_t k = grads; k < losses; ++k)  // sums over the real rows: their means
      out.push_back(mine[k].read<float>().at(0) / static_cast<double>(count));
    for (size_t m = losses; m < mine.size(); ++m) out.push_back(mine[m].read<float>().at(0));
    return out;
  }

 private:
  size_t device_of(Session& s) const { return ctx_.find_device(s.plan().device_scopes.front()); }
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
