// worker_group.hpp: the workers of a multi-worker job talking to each other through host
// memory, over the first loaded plugin whose collectives table says it works on host memory
// (plugin.h, DLRT_COLLECTIVES_HOST_MEMORY; today plugins/mpi, libdlrt-mpi.so). Found by
// that capability, never by a plugin's name.
//
// One host-memory communicator (plugin.h, "Host-memory communicators": comm_create with
// device NULL, every call with stream NULL and complete when it returns) of `size` ranks,
// this process being `rank`. It carries three things:
//   - the host path's sums between workers (all_reduce_sum, F32);
//   - broadcasts from worker 0 (initial weights; the NCCL unique id of the device path);
//   - agreement checks (agree): that every worker runs the same path with the same number of
//     local replicas, and calls with the same layout, so a mismatch is an error on every
//     worker instead of a collective that never matches up.
// Every call honours the timeout given at join (the plugin's rule: DEADLINE_EXCEEDED naming
// the ranks awaited, UNAVAILABLE naming a failed peer).
//
// Ownership: owns its communicator. The destructor releases a healthy one (comm_destroy);
// abort() tears it down without waiting for peers (comm_abort) and makes later calls fail.
// Threads: one thread at a time (the Strategy's mutex).
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distribute/worker_env.hpp"

namespace dlrt::core {
class Context;
class Plugin;
}  // namespace dlrt::core

namespace dlrt::core::distribute {

// The first loaded plugin whose collectives work on host memory (flag set and the entries a
// worker group calls present). Throws FAILED_PRECONDITION saying "multi-worker needs a plugin
// whose collectives work on host memory, such as the mpi plugin (libdlrt-mpi.so)", what the
// loader recorded about each plugin that did not load, and that dlprobe shows why. `worker`
// is for the message.
const Plugin& find_host_transport(const Context& ctx, const WorkerEnv& worker);

class WorkerGroup {
 public:
  // Joins: blocks until every worker has joined or `timeout_ms` passed (the plugin's error).
  WorkerGroup(const Context& ctx, const WorkerEnv& worker, int64_t timeout_ms);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  int32_t rank() const { return worker_.rank; }
  int32_t size() const { return worker_.size; }

  // Sum `count` floats over the workers, in place.
  void all_reduce_sum(float* data, size_t count);
  // Worker 0's `bytes` bytes into every worker's `data`.
  void broadcast(void* data, size_t bytes);

  // Every worker passes its `mine`; all learn worker 0's values and how many workers' values
  // differ from them. Three small collectives (the length, the values, a count).
  struct Agreement {
    std::vector<int64_t> worker0;
    int32_t disagreeing = 0;  // workers whose values differ from worker 0's
  };
  Agreement agree(const std::vector<int64_t>& mine);

  // comm_abort, once; later calls fail FAILED_PRECONDITION. Returns whether it aborted now.
  bool abort() noexcept;

 private:
  const dlrt_collective_api& coll() const;

  const Plugin& plugin_;
  WorkerEnv worker_;
  dlrt_comm* comm_ = nullptr;  // owned; NULL after abort
};

}  // namespace dlrt::core::distribute
