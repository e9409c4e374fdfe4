// replicated.cc: a model's replicas under a distribution strategy and their data-parallel step
// (replicated.hpp).
#include "replicated.hpp"

#include <algorithm>

namespace dlrt::nn::detail {

void broadcast_from_chief(const Context& ctx, dlrt::Strategy& strategy,
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

ReplicaSet::ReplicaSet(const Context& ctx, const std::shared_ptr<const Plan>& plan,
                       std::shared_ptr<dlrt::Strategy> strategy,
                       const std::vector<std::string>& devices)
    : ctx_(ctx), strategy_(std::move(strategy)) {
  const uint64_t first = static_cast<uint64_t>(strategy_->rank()) * devices.size();
  for (size_t r = 0; r < devices.size(); ++r) {
    auto pinned = std::make_shared<Plan>(*plan);
    pinned->device_scopes = {devices[r]};
    sessions_.push_back(std::make_unique<Session>(ctx, pinned, first + r));
  }
}

int64_t ReplicaSet::in_sync() const {
  return static_cast<int64_t>(sessions_.size()) * strategy_->num_workers();
}

bool ReplicaSet::train_fits(int64_t rows, int64_t batch, const ArrayRefs& xs,
                            const ArrayRefs& ys) const {
  return sessions_.front()->has_split() &&
         sessions_.front()->train_fits(rows, batch / in_sync(), xs, ys);
}

void ReplicaSet::build_train(const ArrayRefs& xs, const ArrayRefs& ys, int64_t batch) {
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

void ReplicaSet::upload(const ArrayRefs& xs, const ArrayRefs& ys) {
  for (auto& s : sessions_) s->upload(xs, ys);
}

void ReplicaSet::sync_from_chief() {
  std::vector<ReplicaVariables> replicas;
  for (auto& s : sessions_) replicas.push_back({&s->graph(), s->vars(), device_of(*s)});
  broadcast_from_chief(ctx_, *strategy_, replicas);
}

void ReplicaSet::set_run_count(uint64_t next) {
  for (auto& s : sessions_) s->grads_executable().set_run_count(next);
}

std::vector<double> ReplicaSet::train_step(const int32_t* indices, int64_t count) {
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

size_t ReplicaSet::device_of(Session& s) const {
  return ctx_.find_device(s.plan().device_scopes.front());
}

}  // namespace dlrt::nn::detail
