// c_api_distribute.cc: the strategy functions of dlrt.h ("Distribution"): thin shells over
// core/distribute/strategy.hpp, in the style of c_api_exec.cc — NULL checks, the caller's
// options read only as far as their struct_size reaches, out-parameters reset on entry,
// exceptions turned into statuses (nothing throws across the C boundary).
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>

#include "c_api_util.hpp"
#include "context.hpp"
#include "distribute/strategy.hpp"
#include "distribute/worker_env.hpp"
#include "status.hpp"

using dlrt::core::fail;
using dlrt::core::guarded;
using dlrt::core::require;
using dlrt::core::write_out;

namespace {

// The caller's options over the defaults, checked.
dlrt::core::distribute::StrategyConfig config_from_c(const dlrt_strategy_options* c) {
  dlrt_strategy_options o;
  dlrt_strategy_options_init(&o);
  if (c != nullptr) {
    if (c->struct_size < sizeof(size_t))
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_strategy_create: options->struct_size is {}; initialise the "
                       "options with dlrt_strategy_options_init",
                       c->struct_size));
    const size_t n = c->struct_size < sizeof o ? c->struct_size : sizeof o;
    std::memcpy(reinterpret_cast<char*>(&o) + sizeof(size_t),
                reinterpret_cast<const char*>(c) + sizeof(size_t), n - sizeof(size_t));
  }
  if (o.num_devices > 0 && o.devices == nullptr)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("dlrt_strategy_create: options->num_devices is {} "
                                            "but options->devices is NULL",
                                            o.num_devices));
  if (o.multi_worker != 0 && o.multi_worker != 1)
    fail(DLRT_INVALID_ARGUMENT, fmt::format("dlrt_strategy_create: options->multi_worker is {}; "
                                            "expected 0 (this process) or 1 (every worker)",
                                            o.multi_worker));
  dlrt::core::distribute::StrategyConfig config;
  for (size_t i = 0; i < o.num_devices; ++i) {
    if (o.devices[i] == nullptr)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_strategy_create: options->devices[{}] is NULL; expected a device "
                       "spec such as GPU:0",
                       i));
    config.devices.emplace_back(o.devices[i]);
  }
  config.multi_worker = o.multi_worker == 1;
  config.timeout_ms = o.timeout_ms;
  return config;
}

}  // namespace

extern "C" {

DLRT_API void dlrt_strategy_options_init(dlrt_strategy_options* options) {
  if (options == nullptr) return;
  *options = dlrt_strategy_options{};
  options->struct_size = sizeof(dlrt_strategy_options);
}

DLRT_API dlrt_status* dlrt_worker_info_get(dlrt_worker_info* out) {
  return guarded([&] {
    require(out, "dlrt_worker_info_get: out");
    const dlrt::core::distribute::WorkerEnv w = dlrt::core::distribute::read_worker_env(nullptr);
    // The sources are a fixed set of literals: hand out a static copy of this one.
    static const char* const kSources[] = {"", "OMPI_COMM_WORLD_*", "RANK/WORLD_SIZE",
                                           "SLURM_PROCID/NTASKS", "TF_CONFIG"};
    const char* source = kSources[0];
    for (const char* s : kSources)
      if (w.source == s) source = s;
    dlrt_worker_info full{};
    full.struct_size = sizeof(full);
    full.rank = w.rank;
    full.size = w.size;
    full.local_rank = w.local_rank;
    full.source = source;
    write_out(out, full, "dlrt_worker_info_get: out");
  });
}

DLRT_API dlrt_status* dlrt_strategy_create(dlrt_context* context,
                                           const dlrt_strategy_options* options,
                                           dlrt_strategy** out_strategy) {
  if (out_strategy != nullptr) *out_strategy = nullptr;
  return guarded([&] {
    require(out_strategy, "dlrt_strategy_create: out_strategy");
    require(context, "dlrt_strategy_create: context");
    // The worker environment is the process's own (getenv); tests of the core inject theirs.
    auto s = std::make_unique<dlrt_strategy>(*context, config_from_c(options));
    *out_strategy = s.release();
  });
}

DLRT_API void dlrt_strategy_destroy(dlrt_strategy* strategy) { delete strategy; }

DLRT_API size_t dlrt_strategy_num_replicas(const dlrt_strategy* strategy) {
  return strategy == nullptr ? 0 : strategy->num_replicas();
}

DLRT_API dlrt_status* dlrt_strategy_replica_device(const dlrt_strategy* strategy, size_t replica,
                                                   size_t* out_device_index) {
  if (out_device_index != nullptr) *out_device_index = 0;
  return guarded([&] {
    require(strategy, "dlrt_strategy_replica_device: strategy");
    require(out_device_index, "dlrt_strategy_replica_device: out_device_index");
    *out_device_index = strategy->replica_device(replica);
  });
}

DLRT_API int32_t dlrt_strategy_rank(const dlrt_strategy* strategy) {
  return strategy == nullptr ? 0 : strategy->worker().rank;
}

DLRT_API int32_t dlrt_strategy_num_workers(const dlrt_strategy* strategy) {
  return strategy == nullptr ? 0 : strategy->worker().size;
}

DLRT_API int32_t dlrt_strategy_local_rank(const dlrt_strategy* strategy) {
  return strategy == nullptr ? 0 : strategy->worker().local_rank;
}

DLRT_API dlrt_status* dlrt_strategy_all_reduce(dlrt_strategy* strategy, dlrt_tensor* const* tensors,
                                               size_t per_replica) {
  return guarded([&] {
    require(strategy, "dlrt_strategy_all_reduce: strategy");
    strategy->all_reduce(tensors, per_replica);
  });
}

DLRT_API dlrt_status* dlrt_strategy_broadcast(dlrt_strategy* strategy, dlrt_tensor* const* tensors,
                                              size_t per_replica) {
  return guarded([&] {
    require(strategy, "dlrt_strategy_broadcast: strategy");
    strategy->broadcast(tensors, per_replica);
  });
}

}  // extern "C"
