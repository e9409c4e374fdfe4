// reference_kernels.hpp: the reference kernels, the executable form of docs/ops.md and the
// numerical oracle of the conformance suite. Every op of the spec is a plain loop over host
// memory accumulating in double; nothing here is fast, everything here is meant to be obvious.
//
//   dlrt::plugin::OpView op(desc);
//   dlrt::reference::check_supported(op);   // throws Error(UNIMPLEMENTED|INVALID_ARGUMENT)
//   dlrt::reference::run(op, inputs, outputs, rng_offset);
//
// What it is not: the reference *plugin* (devices, memory, streams live in plugins/reference/);
// this is a static library of kernels over host buffers that the plugin links.
//
// dtypes: every float op takes f32 and f64; labels/indices i32|i64; cast and fill take
// f32/f64/i32/i64/u8/i8/bool; shape ops (reshape, flatten, transpose, broadcast_to, copy,
// gather_rows' params, concat, split, slice) move any of those bytes unchanged. f16/bf16:
// UNIMPLEMENTED.
// Layouts: DLRT_LAYOUT_DENSE only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "op_view.hpp"

namespace dlrt::reference {

using plugin::OpView;

// Runs one op over host buffers given in the order of the op descriptor. Assumes the op passed
// check_supported; a kernel may throw Error for what only shows at run time (none do today).
// Element-wise kernels and the optimizer updates are safe when an output aliases an input;
// use run() for the general case.
using KernelFn = void (*)(const OpView& op, const void* const* inputs, void* const* outputs,
                          uint64_t rng_offset);

// The kernel for `op`, or nullptr if the reference kernels have none.
KernelFn find_kernel(std::string_view op);

// Every op name with a kernel, sorted (a name twice if two files register it).
std::vector<std::string> kernel_names();

// The first op name two kernel files both register (a bug), or "" (kernel_registry.hpp).
std::string duplicate_kernel();

// Throws Error(UNIMPLEMENTED, reason) for an unknown op or an unhandled dtype/layout, and
// Error(INVALID_ARGUMENT, reason) for operands or attributes that contradict docs/ops.md
// (wrong operand count, shapes that do not match what the op computes, bad attribute values).
// Returns normally when run() will compute the op.
void check_supported(const OpView& op);

// find_kernel(op.name()) and runs it. If any output's bytes overlap any input's (in-place
// updates, or an executor reusing a buffer), the outputs are computed into scratch memory and
// copied over afterwards, so every op is correct under aliasing. Throws UNIMPLEMENTED for an
// unknown op; does not repeat check_supported.
void run(const OpView& op, const void* const* inputs, void* const* outputs, uint64_t rng_offset);

}  // namespace dlrt::reference
