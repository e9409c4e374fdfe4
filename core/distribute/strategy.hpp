// strategy.hpp: what a dlrt_strategy is inside — this process's share of a data-parallel
// group (dlrt.h, "Distribution"; docs/design.md section 7).
//
//   replicas   one per local device (replica_devices.hpp), in the order given
//   workers    this process's rank among the job's processes (worker_env.hpp) and, when there
//              are several, the MPI communicator between them (worker_group.hpp)
//   path       how the sums travel, chosen once at creation:
//                device path (device_path.hpp) when every replica's plugin offers collectives,
//                  all on one plugin and each on its own physical device (CUDA/NCCL; REF);
//                host path (host_path.hpp) otherwise, mixed devices included: a communicator
//                  cannot span two plugins, and mixing NCCL for some replicas with host sums
//                  for others would cost more copies than packing everything on the host.
//              Every worker must take the same path with the same number of local replicas;
//              that is checked when they join (INVALID_ARGUMENT on every worker otherwise).
//
// A call (all_reduce, broadcast):
//   1. the layout is checked (layout.hpp): INVALID_ARGUMENT, nothing sent, strategy healthy;
//   2. multi-worker only, once per distinct layout: the workers check that they all call with
//      the same one (INVALID_ARGUMENT on every worker when not; strategy healthy);
//   3. the path runs the collective. Any error from here on breaks the strategy: every
//      communicator is aborted (never waited for: a dead peer would never answer) and every
//      later call is FAILED_PRECONDITION repeating the first error. A half-done collective
//      cannot be resumed (the workers no longer agree on which message is which), so a new
//      strategy, on every worker, is the only way on; this is NCCL's and PyTorch's rule too.
//
// Timeout: config.timeout_ms, else the context's DLRT_COLLECTIVE_TIMEOUT (default 300 s); it
// bounds joining and every collective (the plugins' own waits, and the watchdog over the
// device streams).
//
// Threads: calls are serialised by a mutex, so one thread at a time runs a collective of a
// strategy (a second one waits for it). Running collectives of one strategy from several
// threads in different orders would deadlock the workers anyway: keep to one thread.
//
// Lifetime: destroy the strategy before its context and before the tensors' context goes
// (its streams and flat buffers live on the context's devices). A healthy strategy releases
// its communicators (comm_destroy, which may wait for the peers within the timeout); a broken
// one already aborted them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <dlrt/dlrt.h>

#include "distribute/layout.hpp"
#include "distribute/worker_env.hpp"
#include "settings.hpp"

namespace dlrt::core {
class Context;
}

namespace dlrt::core::distribute {

class DevicePath;
class HostPath;
class WorkerGroup;

struct StrategyConfig {
  std::vector<std::string> devices;  // device specs; empty: the default (replica_devices.hpp)
  bool multi_worker = false;         // false: this process only, worker 0 of 1
  int64_t timeout_ms = 0;            // > 0; 0: DLRT_COLLECTIVE_TIMEOUT (< 0 is an error)
};

enum class Path { kHost, kDevice };

class Strategy {
 public:
  // Resolves the devices, reads the worker environment through `env` (NULL: getenv; only
  // when config.multi_worker), joins the other workers and makes the communicators. Throws
  // Error as dlrt_strategy_create documents.
  Strategy(Context& ctx, const StrategyConfig& config, const EnvLookup& env = nullptr);
  ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  Context& context() const { return ctx_; }
  size_t num_replicas() const { return devices_.size(); }
  // Registry index of replica `replica`; OUT_OF_RANGE past num_replicas().
  size_t replica_device(size_t replica) const;
  const WorkerEnv& worker() const { return worker_; }
  int64_t timeout_ms() const { return timeout_ms_; }
  Path path() const { return path_; }
  // Why this path: "every replica's plugin 'cuda' offers collectives", or why not.
  const std::string& path_reason() const { return path_reason_; }

  // `tensors`: num_replicas() * per_replica tensors, replica-major (layout.hpp).
  void all_reduce(dlrt_tensor* const* tensors, size_t per_replica);
  void broadcast(dlrt_tensor* const* tensors, size_t per_replica);

  // For tests and diagnostics.
  bool broken() const;
  size_t communicators_aborted() const;

 private:
  void run(Collective c, dlrt_tensor* const* tensors, size_t per_replica);
  void check_healthy(const char* call) const;
  void agree_on_layout(Collective c, const Layout& layout);
  // Runs fn; an exception from it breaks the strategy (break_with) and is rethrown.
  template <typename Fn>
  void communicate(Fn&& fn);
  [[noreturn]] void break_with(dlrt_code code, const std::string& message);

  Context& ctx_;
  std::vector<size_t> devices_;
  WorkerEnv worker_;
  int64_t timeout_ms_ = 0;
  Path path_ = Path::kHost;
  std::string path_reason_;
  std::unique_ptr<WorkerGroup> workers_;  // NULL for a single worker
  std::unique_ptr<DevicePath> device_path_;
  std::unique_ptr<HostPath> host_path_;
  std::set<std::vector<int64_t>> agreed_layouts_;  // signatures every worker confirmed

  mutable std::mutex mu_;  // held through every collective call, and for the state below
  bool broken_ = false;
  dlrt_code first_code_ = DLRT_OK;
  std::string first_message_;
  size_t aborted_ = 0;  // the workers' communicator (the device path counts its own)
};

}  // namespace dlrt::core::distribute

// The opaque handle of dlrt.h is the Strategy itself.
struct dlrt_strategy : dlrt::core::distribute::Strategy {
  using dlrt::core::distribute::Strategy::Strategy;
};
