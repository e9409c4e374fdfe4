// onnx.cc: dlrt.onnx.InferenceSession, an ONNX model compiled by dlrt (dlrt::InferenceSession,
// docs/onnx.md) with onnxruntime's Python call shape:
//   sess = dlrt.onnx.InferenceSession("model.onnx")
//   (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
// Inputs are wrapped in place on the host device where NumPy's layout allows (no copy);
// outputs are new NumPy arrays, made here (a batch-1 run is ~50 us, so the few microseconds
// of a round trip through Python per output count). The GIL is released while the model runs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

namespace {

struct Session {
  std::shared_ptr<dlrt::Context> context;
  dlrt::InferenceSession session;
  std::vector<dlrt::SessionIo> inputs, outputs;
};

nb::list io_list(const std::vector<dlrt::SessionIo>& ios) {
  nb::list out;
  for (const dlrt::SessionIo& io : ios) {
    nb::list shape;
    for (size_t k = 0; k < io.dims.size(); ++k) {
      if (io.dims[k] >= 0) shape.append(io.dims[k]);
      else if (k < io.dim_names.size() && !io.dim_names[k].empty())
        shape.append(nb::str(io.dim_names[k].c_str()));
      else shape.append(nb::none());
    }
    out.append(nb::make_tuple(io.name, static_cast<int>(io.dtype),
                              io.has_shape ? nb::object(shape) : nb::none()));
  }
  return out;
}

}  // namespace

void bind_onnx(nb::module_& m) {
  nb::class_<Session>(m, "Session", "dlrt::InferenceSession (dlrt.onnx.InferenceSession wraps it).")
      .def(
          "__init__",
          [](Session* self, const std::string& path, const std::string& device, bool optimize,
             std::optional<bool> log_device_placement) {
            auto ctx = Runtime::instance().context();
            dlrt::SessionOptions o;
            o.device = device;
            o.optimize = optimize;
            o.log_device_placement = log_device_placement;
            std::unique_ptr<dlrt::InferenceSession> s;
            {
              nb::gil_scoped_release no_gil;
              s = std::make_unique<dlrt::InferenceSession>(*ctx, path, o);
            }
            std::vector<dlrt::SessionIo> ins = s->inputs(), outs = s->outputs();
            new (self) Session{ctx, std::move(*s), std::move(ins), std::move(outs)};
          },
          nb::arg("path"), nb::arg("device"), nb::arg("optimize"),
          nb::arg("log_device_placement").none())
      .def("inputs", [](const Session& s) { return io_list(s.inputs); })
      .def("outputs", [](const Session& s) { return io_list(s.outputs); })
      .def(
          "run",
          [](Session& s, nb::handle output_names, nb::handle feeds) {
            Runtime& rt = Runtime::instance();
            const size_t host = rt.host_device();
            if (!nb::isinstance<nb::dict>(feeds))
              throw nb::type_error("run: input_feed must be a dict {input name: array}");
            nb::dict given = nb::borrow<nb::dict>(feeds);
            // Every name given is an input of the model; every input is given.
            for (auto [key, value] : given) {
              const std::string name = nb::cast<std::string>(key);
              bool known = false;
              for (const dlrt::SessionIo& io : s.inputs) known = known || io.name == name;
              if (!known) {
                std::string names;
                for (const dlrt::SessionIo& io : s.inputs)
                  names += (names.empty() ? "" : ", ") + io.name;
                throw dlrt::Error(DLRT_INVALID_ARGUMENT, "run: the model has no input '" + name +
                                                             "'; its inputs are " + names);
              }
            }
            // The outputs asked for, as indices into outputs() (None: all, in order).
            std::vector<size_t> wanted;
            if (output_names.is_none()) {
              for (size_t k = 0; k < s.outputs.size(); ++k) wanted.push_back(k);
            } else {
              for (nb::handle n : output_names) {
                const std::string name = nb::cast<std::string>(n);
                size_t k = 0;
                while (k < s.outputs.size() && s.outputs[k].name != name) ++k;
                if (k == s.outputs.size()) {
                  std::string names;
                  for (const dlrt::SessionIo& io : s.outputs)
                    names += (names.empty() ? "" : ", ") + io.name;
                  throw nb::value_error(
                      ("run: the model has no output '" + name + "'; its outputs are " + names)
                          .c_str());
                }
                wanted.push_back(k);
              }
            }
            std::vector<TensorHandle> tensors;
            std::vector<const dlrt::Tensor*> ordered;
            tensors.reserve(s.inputs.size());
            for (const dlrt::SessionIo& io : s.inputs) {
              PyObject* v = PyDict_GetItemString(given.ptr(), io.name.c_str());  // borrowed
              if (v == nullptr)
                throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                                  "run: input '" + io.name + "' is not given");
              nb::handle value(v);
              // A dlrt.Tensor feeds its handle (on whatever device it lives).
              if (!is_ndarray(value) && nb::hasattr(value, "_h")) value = value.attr("_h");
              if (nb::isinstance<TensorHandle>(value)) {
                ordered.push_back(&nb::cast<const TensorHandle&>(value).tensor);
                continue;
              }
              tensors.push_back(to_tensor(value, std::nullopt, host, /*copy=*/false));
              ordered.push_back(&tensors.back().tensor);
            }
            std::vector<dlrt::Tensor> out;
            {
              nb::gil_scoped_release no_gil;
              out = s.session.run(ordered);
            }
            nb::list result;
            for (size_t k : wanted)
              result.append(to_numpy(TensorHandle{s.context, std::move(out[k])}));
            return result;
          },
          nb::arg("output_names").none(), nb::arg("feeds"),
          "NumPy arrays of the outputs named (None: all, in outputs() order) for feeds {input "
          "name: array or dlrt.Tensor}.")
      .def("placement_log", [](const Session& s) { return s.session.placement_log(); });
}

}  // namespace dlrt::python
