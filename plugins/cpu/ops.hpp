// ops.hpp: how a kernel plugs into the cpu plugin. One KernelDef row per op, added by the kernel
// file that runs it with a DLRT_CPU_KERNELS(t) { ... } block (plugins/common/kernel_registry.hpp);
// op_supported, kernel_create and kernel_run consult nothing else.
//
// A cpu kernel is made once and run many times (docs/design.md section 9): `create` builds the
// oneDNN primitive descriptor(s) and primitive(s) for the exact shapes of the descriptor and
// asks for its scratchpad as the workspace; `run` binds the host's buffers as dnnl::memory
// (no copies: device memory is host memory) and executes on the stream. Nothing is allocated
// in run.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <memory>
#include <vector>

#include "cpu.hpp"
#include "kernel_registry.hpp"

namespace dlrt::cpu {

// A prepared op.
class Kernel {
 public:
  virtual ~Kernel() = default;
  // Scratch bytes each run needs (oneDNN's scratchpad, with scratchpad_mode::user).
  virtual size_t workspace_bytes() const { return 0; }
  // Executes on `stream`; args were checked against the descriptor by kernel_run.
  virtual void run(dnnl::stream& stream, const dlrt_kernel_args& args) = 0;
};

struct KernelDef {
  const char* op;  // the op registry's name, e.g. "conv2d_bias_act"
  // Accepts or rejects one instance: throw plugin::Error with UNIMPLEMENTED for "no primitive
  // for this dtype/layout/attribute" and INVALID_ARGUMENT for a malformed descriptor; on
  // success fill `cost` (flops, bytes, estimated_us; zeroed by the caller).
  void (*check)(const plugin::OpView& op, const dlrt_plugin& plugin, dlrt_op_cost* cost);
  // Builds the primitive(s) for exactly this instance (check has passed).
  std::unique_ptr<Kernel> (*create)(const dlrt_plugin& plugin, const plugin::OpView& op);
};

// The kernel table: the rows of every kernel file, ops backed by oneDNN primitives
// (kernels/prim_*.cc) and ops written as vectorisable loops parallelised over the cores
// (kernels/loop_*.cc) alike. A file adds its rows with
//   DLRT_CPU_KERNELS(t) { t.push_back({"op", check, create}); }
// at namespace scope.
using KernelRegistry = plugin::KernelRegistry<KernelDef, &KernelDef::op>;
#define DLRT_CPU_KERNELS(rows) DLRT_KERNEL_ROWS(::dlrt::cpu::KernelRegistry, rows)

}  // namespace dlrt::cpu
