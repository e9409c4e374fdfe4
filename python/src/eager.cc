// eager.cc: _dlrt.run_op, one op of the schema run now, as TensorFlow's eager mode runs it.
//
// Where it runs (docs/python.md, "Devices"):
//   - inside `with dlrt.device(spec)`: that device; a spec this process does not have runs on
//     the default device instead under soft placement (TensorFlow's default), and the
//     placement log says why (fallback:device-missing);
//   - else the device of its first tensor input (follows-input);
//   - else the default device: the first GPU, else the CPU (default-priority).
// A device that answers "unsupported" for the op hands it, under soft placement, to the
// first other device that supports it (fallback:no-kernel), in the default order.
// Inputs on another device are copied there, as TensorFlow copies them.
//
// Inputs that are not tensors (NumPy arrays, Python numbers, lists) become tensors on that
// device; a Python number takes the dtype of the tensor input it shares a type variable with
// (so `x * 2` stays x's dtype), else TensorFlow's default (float32, int32).
//
// The GIL is released while the kernel runs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

namespace {

// A Python value as an attribute of type `type` (from the schema; NONE for a name the op does
// not have, whose type is guessed so that the core's message lists the names it accepts).
dlrt::OpAttr to_attr(const std::string& name, dlrt_attr_type type, nb::handle v) {
  auto ints = [&](nb::handle x) {
    std::vector<int64_t> out;
    if (PyLong_Check(x.ptr()) || PyIndex_Check(x.ptr())) {
      out.push_back(nb::cast<int64_t>(x));
    } else {
      for (nb::handle e : x) out.push_back(nb::cast<int64_t>(e));
    }
    return out;
  };
  auto floats = [&](nb::handle x) {
    std::vector<double> out;
    if (PyFloat_Check(x.ptr()) || PyLong_Check(x.ptr())) {
      out.push_back(nb::cast<double>(x));
    } else {
      for (nb::handle e : x) out.push_back(nb::cast<double>(e));
    }
    return out;
  };
  try {
    switch (type) {
      case DLRT_ATTR_INT:
        return dlrt::OpAttr(name, nb::cast<int64_t>(v));
      case DLRT_ATTR_FLOAT:
        return dlrt::OpAttr(name, nb::cast<double>(v));
      case DLRT_ATTR_STRING:
        return dlrt::OpAttr(name, nb::cast<std::string>(v));
      case DLRT_ATTR_BOOL:
        return dlrt::OpAttr(name, nb::cast<bool>(v));
      case DLRT_ATTR_DTYPE:
        return dlrt::OpAttr(name, static_cast<dlrt_dtype>(nb::cast<int>(v)));
      case DLRT_ATTR_INTS:
        return dlrt::OpAttr(name, ints(v));
      case DLRT_ATTR_FLOATS:
        return dlrt::OpAttr(name, floats(v));
      default:
        break;
    }
    if (PyBool_Check(v.ptr())) return dlrt::OpAttr(name, nb::cast<bool>(v));
    if (PyLong_Check(v.ptr())) return dlrt::OpAttr(name, nb::cast<int64_t>(v));
    if (PyFloat_Check(v.ptr())) return dlrt::OpAttr(name, nb::cast<double>(v));
    if (PyUnicode_Check(v.ptr())) return dlrt::OpAttr(name, nb::cast<std::string>(v));
    return dlrt::OpAttr(name, ints(v));
  } catch (const nb::cast_error&) {
    throw nb::type_error(("attribute '" + name + "': cannot use " +
                          nb::cast<std::string>(nb::repr(v)) + " as " +
                          (type == DLRT_ATTR_NONE ? std::string("an attribute value")
                                                  : std::string("a value of type ") +
                                                        attr_type_name(type)))
                             .c_str());
  }
}

}  // namespace

dlrt::OpAttrs to_attrs(const OpSig& sig, nb::handle attrs_in) {
  dlrt::OpAttrs attrs;
  if (!attrs_in.is_valid() || attrs_in.is_none()) return attrs;
  for (auto [key, value] : nb::cast<nb::dict>(attrs_in)) {
    if (value.is_none()) continue;  // the default
    const std::string name = nb::cast<std::string>(key);
    dlrt_attr_type type = DLRT_ATTR_NONE;
    for (const OpSig::AttrInfo& a : sig.attrs)
      if (a.name == name) type = a.type;
    attrs.push_back(to_attr(name, type, value));
  }
  return attrs;
}

namespace {

bool is_tensor(nb::handle v) { return nb::isinstance<TensorHandle>(v); }

std::string fallback_reason(const char* kind, const std::string& detail) {
  return std::string(kind) + ": " + detail;
}

// The devices in the order an op looks for another one: GPUs, then CPU-typed, then the rest.
std::vector<size_t> device_order(const std::vector<dlrt::DeviceInfo>& devices) {
  std::vector<size_t> order;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].device_class == DLRT_DEVICE_CLASS_GPU) order.push_back(i);
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].device_class != DLRT_DEVICE_CLASS_GPU && devices[i].type == "CPU")
      order.push_back(i);
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].device_class != DLRT_DEVICE_CLASS_GPU && devices[i].type != "CPU")
      order.push_back(i);
  return order;
}

nb::object run_op(const std::string& op, nb::handle inputs_in, nb::handle attrs_in,
                  std::optional<std::string> device_spec, bool record) {
  Runtime& rt = Runtime::instance();
  const std::shared_ptr<dlrt::Context>& ctx = rt.context();
  const std::vector<dlrt::DeviceInfo>& devices = rt.devices();
  const OpSig& sig = op_signature(op);

  std::vector<nb::handle> inputs;
  for (nb::handle v : inputs_in) inputs.push_back(v);

  // 1. The device.
  size_t device = rt.default_device();
  std::string reason = "default-priority";
  if (device_spec && !device_spec->empty()) {
    size_t index = 0;
    dlrt_status* s = dlrt_context_find_device(ctx->get(), device_spec->c_str(), &index);
    if (s == nullptr) {
      device = index;
      reason = "explicit";
    } else if (dlrt_status_code(s) == DLRT_NOT_FOUND && rt.config().soft_placement) {
      reason = fallback_reason("fallback:device-missing",
                               "requested " + *device_spec + ": " + dlrt_status_message(s));
      dlrt_status_free(s);
    } else {
      dlrt::check(s);
    }
  } else {
    for (nb::handle v : inputs)
      if (is_tensor(v)) {
        device = nb::cast<const TensorHandle&>(v).tensor.device();
        reason = "follows-input";
        break;
      }
  }

  // 2. The attributes, typed by the schema.
  const dlrt::OpAttrs attrs = to_attrs(sig, attrs_in);

  // 3. The inputs, on `device`.
  auto spec_of = [&](size_t i) -> const OpSig::Input* {
    if (sig.inputs.empty()) return nullptr;
    return i < sig.inputs.size() ? &sig.inputs[i] : (sig.inputs.back().variadic ? &sig.inputs.back() : nullptr);
  };
  auto hint_for = [&](size_t i) -> std::optional<dlrt_dtype> {
    const OpSig::Input* in = spec_of(i);
    if (in == nullptr || in->type_var == 0) return std::nullopt;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const OpSig::Input* other = spec_of(k);
      if (other != nullptr && other->type_var == in->type_var && is_tensor(inputs[k]))
        return nb::cast<const TensorHandle&>(inputs[k]).tensor.dtype();
    }
    // No tensor to follow: a Python number goes to the first dtype the input accepts among
    // TensorFlow's defaults (float32 for floats, int32 then int64 for ints).
    return std::nullopt;
  };
  std::vector<TensorHandle> converted;  // tensors made or copied for this call
  converted.reserve(inputs.size());
  std::vector<const dlrt::Tensor*> tensors(inputs.size(), nullptr);
  auto place_inputs = [&](size_t dev) {
    converted.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (is_tensor(inputs[i])) {
        const TensorHandle& h = nb::cast<const TensorHandle&>(inputs[i]);
        if (h.tensor.device() == dev) {
          tensors[i] = &h.tensor;
          continue;
        }
        converted.push_back(copy_to_device(h, dev));
      } else {
        std::optional<dlrt_dtype> hint = hint_for(i);
        const OpSig::Input* in = spec_of(i);
        if (!hint && in != nullptr && PyLong_Check(inputs[i].ptr()) && !PyBool_Check(inputs[i].ptr())) {
          // An integer where the op takes floats only (relu(3)) is a float, as in TensorFlow.
          bool takes_int = false;
          for (dlrt_dtype t : in->dtypes) takes_int = takes_int || t == DLRT_I32 || t == DLRT_I64;
          if (!takes_int && !in->dtypes.empty()) hint = in->dtypes.front();
        }
        // A tape replays its inputs later: it gets a copy, never a view of a NumPy array.
        converted.push_back(to_tensor(inputs[i], hint, dev, /*copy=*/record));
      }
    }
    size_t c = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (is_tensor(inputs[i]) && nb::cast<const TensorHandle&>(inputs[i]).tensor.device() == dev)
        continue;
      tensors[i] = &converted[c++].tensor;
    }
  };
  place_inputs(device);

  // 4. Run; under soft placement an "unsupported" moves the op to the next device that can.
  std::vector<dlrt_tensor*> in_ptrs;
  for (const dlrt::Tensor* t : tensors) in_ptrs.push_back(t->get());
  detail::CAttrs c_attrs(attrs);
  size_t num_outputs = sig.num_outputs;
  if (sig.variadic_outputs) {
    std::vector<dlrt_tensor_desc> descs;
    for (const dlrt::Tensor* t : tensors) descs.push_back(t->desc());
    num_outputs = ctx->op_infer(op, descs, attrs).size();
  }
  std::vector<dlrt_tensor*> out(num_outputs, nullptr);
  auto run_on = [&](size_t dev) {
    nb::gil_scoped_release no_gil;
    return dlrt_op_run(ctx->get(), op.c_str(), dev, in_ptrs.empty() ? nullptr : in_ptrs.data(),
                       in_ptrs.size(), c_attrs.data(), c_attrs.size(),
                       out.empty() ? nullptr : out.data(), out.size());
  };
  dlrt_status* status = run_on(device);
  if (status != nullptr && dlrt_status_code(status) == DLRT_UNIMPLEMENTED &&
      rt.config().soft_placement) {
    const std::string refusal = dlrt_status_message(status);
    std::vector<dlrt_tensor_desc> descs;
    for (const dlrt::Tensor* t : tensors) descs.push_back(t->desc());
    for (size_t other : device_order(devices)) {
      if (other == device || !ctx->op_supported(op, other, descs, attrs)) continue;
      dlrt_status_free(status);
      device = other;
      reason = fallback_reason("fallback:no-kernel", refusal);
      place_inputs(device);
      in_ptrs.clear();
      for (const dlrt::Tensor* t : tensors) in_ptrs.push_back(t->get());
      status = run_on(device);
      break;
    }
  }
  dlrt::check(status);

  if (rt.log_device_placement())
    std::fprintf(stderr, "Executing op %s in device %s [%s]\n", op.c_str(),
                 devices.at(device).full_name.c_str(), reason.c_str());

  nb::list result;
  for (dlrt_tensor* t : out) result.append(nb::cast(TensorHandle{ctx, dlrt::Tensor(t)}));
  if (!record) return result;
  // For a GradientTape: the tensors the op read, the caller's own handle where it was used
  // as it was, else the tensor made (or copied) for this call.
  nb::list used;
  size_t c = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (is_tensor(inputs[i]) && nb::cast<const TensorHandle&>(inputs[i]).tensor.device() == device)
      used.append(nb::borrow(inputs[i]));
    else
      used.append(nb::cast(std::move(converted[c++])));
  }
  return nb::make_tuple(result, used);
}

}  // namespace

void bind_eager(nb::module_& m) {
  m.def("run_op", &run_op, nb::arg("op"), nb::arg("inputs"), nb::arg("attrs").none(),
        nb::arg("device").none(), nb::arg("record") = false,
        "Runs op of the schema now on the runtime's devices (see eager.cc for where) and "
        "returns its outputs as TensorHandles; with record=True, (outputs, the input "
        "tensors it read) for a GradientTape.");
}

}  // namespace dlrt::python
