// core/ops/op_instance.hpp: one checked, shape-inferred op, materialised as the C
// descriptor a plugin receives.
//
// `instantiate` is the registry's front door: it validates the inputs and attributes of an
// op against its OpDef, fills every default, infers the outputs, and builds a dlrt_op_desc
// whose every pointer points into storage the OpInstance owns. That storage sits behind a
// unique_ptr, so the pointers stay valid when the OpInstance is moved (it is move-only).
#pragma once

#include <dlrt/plugin.h>

#include <memory>
#include <string_view>
#include <vector>

#include "op_def.hpp"

namespace dlrt::ops {

class OpInstance {
 public:
  OpInstance(OpInstance&&) noexcept;
  OpInstance& operator=(OpInstance&&) noexcept;
  OpInstance(const OpInstance&) = delete;
  OpInstance& operator=(const OpInstance&) = delete;
  ~OpInstance();

  const OpDef& def() const;
  const std::string& name() const { return def().name; }
  const std::vector<TensorType>& inputs() const;
  const std::vector<TensorType>& outputs() const;
  const TensorType& output(int i) const { return outputs()[i]; }
  // Complete: every attribute of the OpDef, defaults filled in.
  const AttrMap& attrs() const;

  // The descriptor for op_supported / kernel_create: struct_size set on it and on every
  // tensor desc and attr, attributes sorted by name, layouts DLRT_LAYOUT_DENSE (or the ones
  // given to instantiate_desc). Valid as long as this OpInstance.
  const dlrt_op_desc& desc() const;

  struct Storage;  // opaque; defined in op_instance.cc

 private:
  explicit OpInstance(std::unique_ptr<Storage> storage);
  friend Result<OpInstance> instantiate(std::string_view, const std::vector<TensorType>&,
                                        const AttrMap&);
  friend Result<OpInstance> instantiate_desc(const dlrt_op_desc&);
  std::unique_ptr<Storage> s_;
};

// Checks, in this order, and reports the first problem as INVALID_ARGUMENT (NOT_FOUND for an
// unknown op) with a message that starts with the op name:
//   input count; each input's rank (<= DLRT_MAX_RANK), dims (>= 1) and dtype; inputs that
//   must share a dtype; attributes (unknown names, types, required, allowed values); then
//   the op's own shape rules, which infer the outputs.
Result<OpInstance> instantiate(std::string_view op, const std::vector<TensorType>& inputs,
                               const AttrMap& attrs);

// Re-checks a descriptor someone else built (the core, before handing it on): reads the
// op name, inputs and attributes through the ABI rules (nothing past a struct_size), runs
// instantiate, and requires the given outputs to equal the inferred ones. Attributes the
// descriptor leaves out get their defaults in the result.
Result<OpInstance> instantiate_desc(const dlrt_op_desc& desc);

// A TensorType read from a dlrt_tensor_desc (rank and dtype checked).
Result<TensorType> tensor_type_from_c(std::string_view op, std::string_view what,
                                      const dlrt_tensor_desc& desc);

}  // namespace dlrt::ops
