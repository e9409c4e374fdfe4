// module.cc: the extension module dlrt._dlrt. Everything users touch has TensorFlow's names
// in the pure-Python modules beside it (python/dlrt/); this module is the thin layer under
// them (docs/python.md, "How the package is built").
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_dlrt, m) {
  m.doc() = "dlrt's extension module: the runtime, tensors and eager ops under dlrt.*";
  dlrt::python::bind_errors(m);
  dlrt::python::bind_runtime(m);
  dlrt::python::bind_op_signatures(m);
  dlrt::python::bind_tensor(m);
  dlrt::python::bind_image(m);
  dlrt::python::bind_jpeg(m);
  dlrt::python::bind_tiff(m);
  dlrt::python::bind_eager(m);
  dlrt::python::bind_tape(m);
  dlrt::python::bind_onnx(m);
  nanobind::module_ keras = m.def_submodule("keras", "nn's layers, models, optimizers, losses");
  dlrt::python::bind_keras_layers(keras);
  dlrt::python::bind_keras_model(keras);
  dlrt::python::bind_keras_eager(keras);
  dlrt::python::bind_distribute(keras);
}
