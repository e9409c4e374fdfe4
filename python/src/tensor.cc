// tensor.cc: TensorHandle (what dlrt.Tensor wraps) and the conversions at the edge:
// NumPy arrays, scalars and nested lists in; NumPy arrays that own their memory out.
//
// In: a C-contiguous, aligned array of a dtype dlrt has, on a device whose memory is the
// host's (cpu, reference), is wrapped in place (dlrt_tensor_wrap_host; the tensor keeps a
// reference to the array and drops it, under the GIL, when destroyed). Anything else is
// converted by NumPy (numpy.asarray(order="C")) and copied in. Constants always copy: a
// constant must not change when its array does.
//
// Out: numpy() copies the tensor into a new array that owns its buffer (bf16, which NumPy has
// not, widens to f32).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

using namespace nb::literals;

namespace {

nb::module_& numpy() {
  static nb::module_* np = new nb::module_(nb::module_::import_("numpy"));
  return *np;
}

// dlrt's dtypes as NumPy has them: the NumPy name and the DLPack code and bits that nanobind
// reports for (and hands NumPy with) an array. One table for the four conversions below. bf16
// has no NumPy dtype: numpy() widens it to float32 (an ml_dtypes "bfloat16" array still reads
// as bf16: dtype_from_numpy).
struct NumpyType {
  dlrt_dtype dtype;
  const char* name;
  nb::dlpack::dtype_code code;
  uint8_t bits;
};
using Code = nb::dlpack::dtype_code;
constexpr NumpyType kNumpyTypes[] = {
    {DLRT_F32, "float32", Code::Float, 32}, {DLRT_F16, "float16", Code::Float, 16},
    {DLRT_F64, "float64", Code::Float, 64}, {DLRT_I8, "int8", Code::Int, 8},
    {DLRT_I16, "int16", Code::Int, 16},     {DLRT_I32, "int32", Code::Int, 32},
    {DLRT_I64, "int64", Code::Int, 64},     {DLRT_U8, "uint8", Code::UInt, 8},
    {DLRT_U16, "uint16", Code::UInt, 16},   {DLRT_U32, "uint32", Code::UInt, 32},
    {DLRT_U64, "uint64", Code::UInt, 64},   {DLRT_BOOL, "bool", Code::Bool, 8},
};

const NumpyType& numpy_type(dlrt_dtype t) {
  for (const NumpyType& n : kNumpyTypes)
    if (n.dtype == t) return n;
  throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                    "dtype " + dlrt::dtype_name(t) + " has no NumPy equivalent");
}

// The NumPy name of a dlrt dtype (bf16: float32, what numpy() widens it to).
const char* numpy_name(dlrt_dtype t) { return numpy_type(t == DLRT_BF16 ? DLRT_F32 : t).name; }

// The DLPack dtype nanobind hands NumPy for a dlrt dtype (bf16 is widened before).
nb::dlpack::dtype dlpack_dtype(dlrt_dtype t) {
  const NumpyType& n = numpy_type(t);
  return nb::dlpack::dtype{static_cast<uint8_t>(n.code), n.bits, 1};
}

// The dlrt dtype of a DLPack dtype (what nanobind reports for an array), if dlrt has it.
std::optional<dlrt_dtype> dtype_from_dlpack(nb::dlpack::dtype d) {
  if (d.lanes != 1) return std::nullopt;
  for (const NumpyType& n : kNumpyTypes)
    if (static_cast<uint8_t>(n.code) == d.code && n.bits == d.bits) return n.dtype;
  return std::nullopt;
}

}  // namespace

bool is_ndarray(nb::handle value) {
  static PyTypeObject* const ndarray_type =
      reinterpret_cast<PyTypeObject*>(numpy().attr("ndarray").inc_ref().ptr());
  return PyObject_TypeCheck(value.ptr(), ndarray_type);
}

namespace {

// Python numbers and lists: TensorFlow's defaults (float32 for floats, int32 for ints), unless
// a dtype is asked for.
// (Exact checks: NumPy's float64 scalar is a subclass of float and keeps its dtype.)
bool is_python_value(nb::handle v) {
  return PyFloat_CheckExact(v.ptr()) || PyLong_CheckExact(v.ptr()) || PyBool_Check(v.ptr()) ||
         PyList_Check(v.ptr()) || PyTuple_Check(v.ptr());
}

// (2, 3) for dims {2, 3}; () for a scalar.
nb::tuple shape_tuple(const std::vector<int64_t>& dims) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(dims.size()));
  if (t == nullptr) throw nb::python_error();
  for (size_t i = 0; i < dims.size(); ++i)
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(dims[i]));
  return nb::steal<nb::tuple>(t);
}

void release_array(void* owner) {
  nb::gil_scoped_acquire gil;
  delete static_cast<nb::object*>(owner);
}

// The fast path of to_tensor for the common input, a NumPy array that is already C-contiguous,
// aligned and of a dtype dlrt has, going to a host-memory device: wrapped in place without a
// call into NumPy (a batch-1 inference spent ~5 us in numpy.asarray and attribute look-ups).
// nullopt sends everything else (lists, scalars, strided or odd arrays, empty dimensions: the
// slow path's messages) down the general path.
std::optional<TensorHandle> wrap_array_in_place(nb::handle value, size_t device) {
  if (!is_ndarray(value)) return std::nullopt;
  nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> view;
  if (!nb::try_cast(value, view, /*convert=*/false)) return std::nullopt;
  const std::optional<dlrt_dtype> t = dtype_from_dlpack(view.dtype());
  if (!t) return std::nullopt;
  std::vector<int64_t> dims(view.ndim());
  for (size_t k = 0; k < view.ndim(); ++k) {
    dims[k] = view.shape(k);
    if (dims[k] < 1) return std::nullopt;
  }
  void* data = const_cast<void*>(view.data());
  if (reinterpret_cast<uintptr_t>(data) % dlrt_dtype_size(*t) != 0) return std::nullopt;
  Runtime& rt = Runtime::instance();
  TensorHandle out{rt.context(), {}};
  auto* owner = new nb::object(nb::borrow(value));
  try {
    out.tensor =
        dlrt::Tensor::wrap_host(*rt.context(), device, *t, dims, data, release_array, owner);
  } catch (...) {
    delete owner;  // on an error wrap_host does not call release
    throw;
  }
  return out;
}

}  // namespace

dlrt_dtype dtype_from_numpy(nb::handle numpy_dtype) {
  const std::string name = nb::cast<std::string>(nb::str(numpy_dtype.attr("name")));
  if (name == "bfloat16") return DLRT_BF16;  // ml_dtypes' bfloat16
  for (const NumpyType& n : kNumpyTypes)
    if (name == n.name) return n.dtype;
  throw nb::type_error(("dlrt has no dtype for NumPy's " + name +
                        "; expected a bool, integer or float array (float32, float64, int32, "
                        "...)")
                           .c_str());
}

TensorHandle to_tensor(nb::handle value, std::optional<dlrt_dtype> dtype, size_t device,
                       bool copy) {
  Runtime& rt = Runtime::instance();
  const std::shared_ptr<dlrt::Context>& ctx = rt.context();
  if (device >= rt.devices().size())
    throw dlrt::Error(DLRT_OUT_OF_RANGE, "device index " + std::to_string(device) +
                                             " is out of range: the runtime has " +
                                             std::to_string(rt.devices().size()) + " devices");
  if (!dtype && !copy && rt.host_memory(device)) {
    if (std::optional<TensorHandle> wrapped = wrap_array_in_place(value, device))
      return std::move(*wrapped);
  }
  nb::object np_dtype = dtype ? numpy().attr("dtype")(numpy_name(*dtype)) : nb::none();
  nb::object array;
  try {
    // asarray(order="C") keeps a scalar 0-d (ascontiguousarray would make it 1-d) and returns
    // the array itself when it is already C-contiguous and of the dtype.
    array = numpy().attr("asarray")(value, "dtype"_a = np_dtype, "order"_a = "C");
    if (!dtype && is_python_value(value)) {
      // NumPy made float64/int64 of Python numbers; TensorFlow makes float32/int32.
      const std::string kind = nb::cast<std::string>(array.attr("dtype").attr("kind"));
      if (kind == "f") array = array.attr("astype")("float32");
      if (kind == "i") array = array.attr("astype")("int32");
    }
  } catch (const nb::python_error& e) {
    throw nb::type_error(("cannot make a tensor of " +
                          nb::cast<std::string>(nb::repr(value.type())) + ": " + e.what())
                             .c_str());
  }
  const dlrt_dtype t = dtype_from_numpy(array.attr("dtype"));
  std::vector<int64_t> dims;
  for (nb::handle d : array.attr("shape")) {
    const int64_t n = nb::cast<int64_t>(d);
    if (n < 1)
      throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                        "an array of shape " +
                            nb::cast<std::string>(nb::repr(array.attr("shape"))) +
                            " has an empty dimension; dlrt tensors have every dimension >= 1");
    dims.push_back(n);
  }
  auto view = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(array);
  void* data = const_cast<void*>(view.data());
  const size_t bytes = view.nbytes();
  const size_t element = dlrt_dtype_size(t);
  TensorHandle out{ctx, {}};
  if (!copy && rt.host_memory(device) && element > 0 &&
      reinterpret_cast<uintptr_t>(data) % element == 0) {
    auto* owner = new nb::object(array);
    try {
      out.tensor = dlrt::Tensor::wrap_host(*ctx, device, t, dims, data, release_array, owner);
    } catch (...) {
      delete owner;  // on an error wrap_host does not call release
      throw;
    }
    return out;
  }
  out.tensor = dlrt::Tensor::create(*ctx, device, t, dims);
  nb::gil_scoped_release no_gil;
  dlrt::check(dlrt_tensor_write(out.tensor.get(), data, bytes));
  return out;
}

TensorHandle copy_to_device(const TensorHandle& t, size_t device) {
  std::vector<unsigned char> bytes(t.tensor.byte_size());
  TensorHandle out{t.context,
                   dlrt::Tensor::create(*t.context, device, t.tensor.dtype(), t.tensor.dims())};
  nb::gil_scoped_release no_gil;
  dlrt::check(dlrt_tensor_read(t.tensor.get(), bytes.data(), bytes.size()));
  dlrt::check(dlrt_tensor_write(out.tensor.get(), bytes.data(), bytes.size()));
  return out;
}

nb::object to_numpy(const TensorHandle& h) {
  const dlrt_dtype t = h.tensor.dtype();
  const std::vector<int64_t> dims = h.tensor.dims();
  const size_t bytes = h.tensor.byte_size();
  if (t == DLRT_BF16) {
    nb::tuple shape = shape_tuple(dims);
    // Widen bf16 to f32: the upper 16 bits of an f32 are a bf16.
    std::vector<uint16_t> half(bytes / 2);
    {
      nb::gil_scoped_release no_gil;
      dlrt::check(dlrt_tensor_read(h.tensor.get(), half.data(), bytes));
    }
    nb::object out = numpy().attr("empty")(shape, "dtype"_a = "float32");
    auto view = nb::cast<nb::ndarray<float, nb::c_contig, nb::device::cpu>>(out);
    float* dst = view.data();
    for (size_t i = 0; i < half.size(); ++i) {
      const uint32_t bits = static_cast<uint32_t>(half[i]) << 16;
      std::memcpy(dst + i, &bits, 4);
    }
    return out;
  }
  // A new buffer that the array owns through a capsule (freed with the array), filled by
  // dlrt_tensor_read, and handed to NumPy without a call into Python code.
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[std::max<size_t>(bytes, 1)]);
  {
    nb::gil_scoped_release no_gil;
    dlrt::check(dlrt_tensor_read(h.tensor.get(), buffer.get(), bytes));
  }
  std::vector<size_t> shape_sizes(dims.begin(), dims.end());
  unsigned char* data = buffer.get();
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<unsigned char*>(p); });
  buffer.release();
  nb::ndarray<nb::numpy> array(data, shape_sizes.size(), shape_sizes.data(), owner, nullptr,
                               dlpack_dtype(t));
  return array.cast();
}

void bind_tensor(nb::module_& m) {
  nb::class_<TensorHandle>(m, "TensorHandle",
                           "A tensor on one device of the runtime (dlrt.Tensor wraps it).")
      .def_prop_ro("shape", [](const TensorHandle& h) { return shape_tuple(h.tensor.dims()); })
      .def_prop_ro(
          "dtype", [](const TensorHandle& h) { return static_cast<int>(h.tensor.dtype()); },
          "the dlrt_dtype value")
      .def_prop_ro("device_index", [](const TensorHandle& h) { return h.tensor.device(); })
      .def_prop_ro("device",
                   [](const TensorHandle& h) {
                     return Runtime::instance().devices().at(h.tensor.device()).full_name;
                   })
      .def_prop_ro("nbytes", [](const TensorHandle& h) { return h.tensor.byte_size(); })
      .def("numpy", &to_numpy, "A new NumPy array holding the tensor's values (bf16 as f32).")
      .def(
          "copy_to", [](const TensorHandle& h, size_t device) { return copy_to_device(h, device); },
          nb::arg("device"), "The same values on runtime device index `device`.");

  m.def(
      "to_tensor",
      [](nb::handle value, std::optional<int> dtype, std::optional<size_t> device, bool copy) {
        Runtime& rt = Runtime::instance();
        return to_tensor(
            value,
            dtype ? std::optional<dlrt_dtype>(static_cast<dlrt_dtype>(*dtype)) : std::nullopt,
            device ? *device : rt.default_device(), copy);
      },
      nb::arg("value"), nb::arg("dtype").none() = nb::none(), nb::arg("device").none() = nb::none(),
      nb::arg("copy") = true,
      "A tensor of value (array, scalar, nested lists) on runtime device index `device` "
      "(default: the default device); copy=False wraps a suitable host array in place.");
  m.def(
      "dtype_of_numpy",
      [](nb::handle numpy_dtype) { return static_cast<int>(dtype_from_numpy(numpy_dtype)); },
      nb::arg("numpy_dtype"));
  m.def(
      "dtype_name", [](int dtype) { return dlrt::dtype_name(static_cast<dlrt_dtype>(dtype)); },
      nb::arg("dtype"));
}

}  // namespace dlrt::python
