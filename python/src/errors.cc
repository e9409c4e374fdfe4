// errors.cc: dlrt errors as Python exceptions. Every dlrt::Error thrown under a binding
// becomes the class of dlrt.errors named as TensorFlow names its code (InvalidArgumentError
// for DLRT_INVALID_ARGUMENT, ...; the codes are TensorFlow's), with the message; never an
// abort of the interpreter.
#include <nanobind/nanobind.h>

#include <exception>

#include "bindings.hpp"

namespace dlrt::python {

void raise_error(dlrt_code code, const std::string& message) {
  PyObject* type = PyExc_RuntimeError;
  nb::object cls;
  try {
    cls = nb::module_::import_("dlrt.errors").attr("exception_type")(static_cast<int>(code));
    type = cls.ptr();
  } catch (const nb::python_error&) {
    // dlrt.errors could not be imported (a broken install): RuntimeError still says what
    // went wrong.
  }
  PyErr_SetString(type, message.c_str());
}

void bind_errors(nb::module_& m) {
  (void)m;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dlrt::Error& e) {
      raise_error(e.code(), e.message());
    }
  });
}

}  // namespace dlrt::python
