// device_path.hpp: all_reduce and broadcast with the devices' own collectives (NCCL on CUDA;
// the reference plugin's in-process double in tests), data never leaving the devices.
//
// Communicators: one per local replica, all in one communicator group spanning every replica
// of every worker: nranks = workers × local replicas, rank = worker rank × local replicas +
// replica (so global rank 0 is worker 0's replica 0, the broadcast root). Worker 0 makes the
// id (comm_id_create) and sends it to the others over the WorkerGroup (MPI); the creates are
// bracketed by group_begin/group_end when the plugin has them (NCCL requires that when one
// thread creates several ranks).
//
// One call (all_reduce; broadcast alike with root 0 and bytes as U8):
//   per replica, on its own stream: pack its tensors into its flat buffer (memcpy_d2d)
//   group_begin; all_reduce(flat, flat, SUM) per replica; group_end
//   per replica: unpack the flat buffer into its tensors (memcpy_d2d)
//   synchronise every stream, under the watchdog (watchdog.hpp)
// With one tensor per replica the tensor itself is reduced in place: no packing.
// The flat buffer of each replica comes from its device's arena at first use and is kept,
// re-made only when a larger layout comes (so a training loop allocates nothing per step).
//
// Which devices qualify (unusable_reason): every replica's plugin has a collectives table
// with the entries used here, all replicas are on one plugin (a communicator cannot span two
// libraries), and no two replicas share a physical device (NCCL takes each GPU once per
// communicator; logical splits of one GPU go through the host path instead).
//
// Ownership: owns its streams, communicators and buffers. The destructor releases healthy
// communicators (comm_destroy); abort() tears them down without waiting (comm_abort), from
// any thread (the watchdog calls it while a sync is stuck).
#pragma once

#include <dlrt/plugin.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "distribute/layout.hpp"
#include "distribute/watchdog.hpp"
#include "memory/arena.hpp"

namespace dlrt::core {
class Context;
class Plugin;
}  // namespace dlrt::core

namespace dlrt::core::distribute {

class WorkerGroup;

class DevicePath {
 public:
  // "" when `devices` (registry indices) can share one device communicator; else why not,
  // e.g. "/device:CPU:0's plugin 'cpu' offers no collectives".
  static std::string unusable_reason(const Context& ctx, const std::vector<size_t>& devices);

  // Opens a stream per replica and joins the communicator group (blocking until every rank
  // joined, or the timeout). `workers` NULL: this process only; else not owned, outlives
  // this object. A failure releases whatever was made (communicators aborted).
  DevicePath(Context& ctx, const std::vector<size_t>& devices, WorkerGroup* workers,
             int64_t timeout_ms);
  ~DevicePath();
  DevicePath(const DevicePath&) = delete;
  DevicePath& operator=(const DevicePath&) = delete;

  void all_reduce(const Layout& layout);
  void broadcast(const Layout& layout);

  // comm_abort every live communicator; returns how many it aborted. Thread-safe.
  size_t abort() noexcept;
  // Communicators aborted so far, by abort() from any thread (the watchdog's included).
  size_t aborted_count() const;

 private:
  struct Replica {
    size_t device = 0;  // registry index
    dlrt_device* handle = nullptr;
    dlrt_stream* stream = nullptr;  // owned
    dlrt_comm* comm = nullptr;      // owned; NULL once aborted
    Buffer flat;                    // the packed tensors; empty until needed
  };

  const dlrt_collective_api& coll() const { return *api_->collectives; }
  int32_t global_rank(size_t replica) const;
  // Calls fn(r) for every replica inside group_begin/group_end (when the plugin has them);
  // the group is closed even when a call failed, and the first error is thrown.
  void grouped(const std::function<void(size_t)>& fn);
  void ensure_flat(size_t bytes);
  void pack(const Layout& layout, size_t r);
  void unpack(const Layout& layout, size_t r);
  // Synchronises every stream; DEADLINE_EXCEEDED (communicators aborted) if that takes longer
  // than the timeout.
  void synchronize(const char* what);
  void release(bool abort_comms) noexcept;

  Context& ctx_;
  const Plugin* plugin_ = nullptr;
  const dlrt_plugin_api* api_ = nullptr;
  WorkerGroup* workers_;
  int64_t timeout_ms_;
  std::vector<Replica> replicas_;
  mutable std::mutex comms_mu_;  // guards Replica::comm and aborted_ against the watchdog
  size_t aborted_ = 0;
  Watchdog watchdog_;
};

}  // namespace dlrt::core::distribute
