// kernels.cc: the public entry points of reference_kernels.hpp over the kernel table (every
// family file adds its rows, kernel_util.hpp): lookup, support check, and run() with its
// aliasing rule.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernel_util.hpp"

namespace dlrt::reference {
namespace {

using detail::KernelDef;
using detail::Registry;

const KernelDef* find_def(std::string_view op) { return Registry::find(op); }

bool overlaps(const void* a, size_t na, const void* b, size_t nb) {
  if (na == 0 || nb == 0 || a == nullptr || b == nullptr) return false;
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + nb && pb < pa + na;
}

}  // namespace

KernelFn find_kernel(std::string_view op) {
  const KernelDef* d = find_def(op);
  return d == nullptr ? nullptr : d->run;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const KernelDef& d : Registry::rows()) names.push_back(d.name);
  return names;  // the registry keeps them sorted
}

std::string duplicate_kernel() { return Registry::duplicate(); }

void check_supported(const OpView& op) {
  const KernelDef* d = find_def(op.name());
  if (d == nullptr)
    plugin::fail(DLRT_UNIMPLEMENTED, "reference: no kernel for op '" + op.name() + "'");
  for (const auto* list : {&op.inputs(), &op.outputs()})
    for (const plugin::TensorView& t : *list)
      if (!t.dense()) op.unimplemented("layout " + std::to_string(t.layout) + " is not dense");
  if (d->check != nullptr) d->check(op);
}

void run(const OpView& op, const void* const* inputs, void* const* outputs, uint64_t rng_offset) {
  const KernelDef* d = find_def(op.name());
  if (d == nullptr)
    plugin::fail(DLRT_UNIMPLEMENTED, "reference: no kernel for op '" + op.name() + "'");
  bool alias = false;
  for (size_t o = 0; o < op.num_outputs() && !alias; ++o)
    for (size_t i = 0; i < op.num_inputs() && !alias; ++i)
      alias = overlaps(outputs[o], op.output(o).bytes, inputs[i], op.input(i).bytes);
  if (!alias) {
    d->run(op, inputs, outputs, rng_offset);
    return;
  }
  // Compute into scratch (8-byte aligned), then copy over the real outputs.
  std::vector<std::vector<uint64_t>> scratch(op.num_outputs());
  std::vector<void*> tmp(op.num_outputs());
  for (size_t o = 0; o < op.num_outputs(); ++o) {
    scratch[o].resize((op.output(o).bytes + 7) / 8 + 1);
    tmp[o] = scratch[o].data();
  }
  d->run(op, inputs, tmp.data(), rng_offset);
  for (size_t o = 0; o < op.num_outputs(); ++o) std::memcpy(outputs[o], tmp[o], op.output(o).bytes);
}

}  // namespace dlrt::reference
