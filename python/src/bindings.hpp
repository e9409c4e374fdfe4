// bindings.hpp: what the files of the extension _dlrt share: one bind_* function per file
// (module.cc calls them in order) and TensorHandle, the object a dlrt.Tensor wraps.
#pragma once

#include <nanobind/nanobind.h>

#include <dlrt/dlrt.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlrt::python {

namespace nb = nanobind;

// One tensor of the runtime's context. The context is shared so that it outlives every
// tensor, whatever order Python frees them in. Move-only, as dlrt::Tensor.
struct TensorHandle {
  std::shared_ptr<dlrt::Context> context;
  dlrt::Tensor tensor;
};

// errors.cc: raises the dlrt.errors class for `code` with `message` (the Python error
// indicator is set; the caller returns to Python). Used by the exception translator.
void raise_error(dlrt_code code, const std::string& message);

// runtime.cc
nb::dict device_dict(const dlrt::DeviceInfo& d);

// tensor.cc: NumPy <-> tensors.
// dtype <-> NumPy: the dlrt dtype of a NumPy dtype object (TypeError for one dlrt has not).
dlrt_dtype dtype_from_numpy(nb::handle numpy_dtype);
// A tensor on `device` holding `value` (a NumPy array, a scalar, nested lists); `dtype` when
// given converts Python numbers to it. `copy` = false wraps a suitable array in place
// (docs/python.md, "No copies"), true always copies (constants outlive their array).
TensorHandle to_tensor(nb::handle value, std::optional<dlrt_dtype> dtype, size_t device, bool copy);
// Whether value is a NumPy array (numpy.ndarray or a subclass).
bool is_ndarray(nb::handle value);
// A new NumPy array holding the tensor's values (bf16 widened to f32), owning its memory.
nb::object to_numpy(const TensorHandle& h);
// The same tensor on another device (a copy through the host).
TensorHandle copy_to_device(const TensorHandle& t, size_t device);

// op_signatures.cc: the op schema as the binding reads it (cached per op).
struct OpSig {
  std::string name;
  struct Input {
    std::string name;
    bool variadic = false;
    int32_t type_var = 0;
    std::vector<dlrt_dtype> dtypes;
  };
  std::vector<Input> inputs;
  size_t num_outputs = 0;
  bool variadic_outputs = false;
  struct AttrInfo {
    std::string name;
    dlrt_attr_type type = DLRT_ATTR_NONE;
  };
  std::vector<AttrInfo> attrs;
};
const OpSig& op_signature(const std::string& op);
// (An attribute type's word, "int", "floats", ...: dlrt::attr_type_name, dlrt/names.hpp.)

// eager.cc: a dict of Python values as the op's attributes, each converted to the type the
// schema gives it (None values are left out: the default).
dlrt::OpAttrs to_attrs(const OpSig& sig, nb::handle attrs);

// keras_eager.cc: a function that builds ops into a graph from values: a Keras layer call or
// a loss. Run eagerly it compiles once per input shape; a GradientTape's backward builds it
// again into the tape's graph (tape.cc), with `scope` prefixed to its node names.
// A number no composite made before in this process had: keys built from it never meet a
// freed composite's (an address could be reused by a different layer or loss, and its cached
// graph would then be run for the wrong one).
inline uint64_t next_composite_serial() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

struct Composite {
  const uint64_t serial = next_composite_serial();
  virtual ~Composite() = default;
  virtual std::vector<dlrt::Value> build(dlrt::Graph& g, const std::vector<dlrt::Value>& in,
                                         const std::string& scope) const = 0;
  // What, besides the inputs' dtypes and dims, makes two builds the same graph.
  virtual std::string key() const = 0;
};

// The compiled graphs cached by keras_eager.cc (composites) and tape.cc (gradients), dropped
// by Runtime::release before the context goes: they hold memory of its devices.
void clear_composite_cache();
void clear_tape_cache();

void bind_errors(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_image(nb::module_& m);
void bind_jpeg(nb::module_& m);  // jpeg.cc: libjpeg read/write for load_img/save_img
void bind_tiff(nb::module_& m);  // tiff.cc: libtiff reading for load_img
void bind_eager(nb::module_& m);
void bind_op_signatures(nb::module_& m);
void bind_tape(nb::module_& m);
void bind_onnx(nb::module_& m);
void bind_distribute(nb::module_& m);
void bind_keras_layers(nb::module_& m);
void bind_keras_model(nb::module_& m);
void bind_keras_eager(nb::module_& m);

}  // namespace dlrt::python
