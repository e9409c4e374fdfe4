// host_path.hpp: all_reduce and broadcast through host memory — for devices whose plugin has
// no collectives (CPU logical devices, REF), and for any mix of devices.
//
// all_reduce, for a layout of R replicas of N f32 elements each (packed, layout.hpp):
//   sum   = replica 0's tensors read into one host buffer (N floats)
//   sum  += replica r's, for r = 1 .. R-1, element by element in f32, in replica order
//   (multi-worker) sum = the workers' sum of `sum` over MPI (WorkerGroup, in rank order)
//   every replica's tensors = sum
// Replica order and f32 make the result deterministic: the same inputs give the same bits
// on every run, and every replica gets the very same bits (one buffer is written to all).
//
// broadcast: replica 0's bytes read once, (multi-worker) worker 0's sent to every worker,
// written to every other replica (on worker 0 replica 0 is the source and is left alone).
//
// Costs: two reads/writes of every byte through the host per replica; fine for CPU devices
// (a memcpy each), and the reason device collectives exist for GPUs. The host buffers are
// kept between calls (no allocation per step once the largest layout has been seen).
//
// Reads and writes are the tensors' synchronous copies, so the tensors must be ready (every
// call that produced them has returned, as every dlrt run does).
#pragma once

#include <cstddef>
#include <vector>

#include "distribute/layout.hpp"

namespace dlrt::core::distribute {

class WorkerGroup;

class HostPath {
 public:
  // `workers` NULL: this process only. Not owned; outlives this object.
  explicit HostPath(WorkerGroup* workers) : workers_(workers) {}

  void all_reduce(const Layout& layout);
  void broadcast(const Layout& layout);

 private:
  WorkerGroup* workers_;
  std::vector<float> sum_, scratch_;
  std::vector<unsigned char> bytes_;
};

}  // namespace dlrt::core::distribute
