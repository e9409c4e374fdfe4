// onnx.cc: dlrt.onnx.InferenceSession, an ONNX model compiled by dlrt (dlrt::InferenceSession,
// docs/onnx.md) with onnxruntime's Python call shape:
//   sess = dlrt.onnx.InferenceSession("model.onnx")
//   (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
// Inputs are wrapped in place on the host device where NumPy's layout allows (no copy);
// outputs are new NumPy arrays. The GIL is released while the model runs.
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
      if (io.dims[k] >= 0)
        shape.append(io.dims[k]);
      else if (k < io.dim_names.size() && !io.dim_names[k].empty())
        shape.append(nb::str(io.dim_names[k].c_str()));
      else
        shape.append(nb::none());
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
          [](Session& s, nb::handle feeds) {
            Runtime& rt = Runtime::instance();
            const size_t host = rt.host_device();
            nb::dict given = nb::cast<nb::dict>(feeds);
            for (auto [key, value] : given) {
              const std::string name = nb::cast<std::string>(key);
              bool known = false;
              for (const dlrt::SessionIo& io : s.inputs) known = known || io.name == name;
              if (!known) {
                std::string names;
                for (const dlrt::SessionIo& io : s.inputs) names += (names.empty() ? "" : ", ") + io.name;
                throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                                  "run: the model has no input '" + name + "'; its inputs are " + names);
              }
            }
            std::vector<TensorHandle> tensors;
            std::vector<const dlrt::Tensor*> ordered;
            tensors.reserve(s.inputs.size());
            for (const dlrt::SessionIo& io : s.inputs) {
              if (!given.contains(io.name.c_str()))
                throw dlrt::Error(DLRT_INVALID_ARGUMENT, "run: input '" + io.name + "' is not given");
              nb::handle v = given[io.name.c_str()];
              if (nb::isinstance<TensorHandle>(v)) {
                ordered.push_back(&nb::cast<const TensorHandle&>(v).tensor);
                continue;
              }
              tensors.push_back(to_tensor(v, std::nullopt, host, /*copy=*/false));
              ordered.push_back(&tensors.back().tensor);
            }
            std::vector<dlrt::Tensor> out;
            {
              nb::gil_scoped_release no_gil;
              out = s.session.run(ordered);
            }
            nb::list result;
            for (dlrt::Tensor& t : out) result.append(nb::cast(TensorHandle{s.context, std::move(t)}));
            return result;
          },
          nb::arg("feeds"),
          "The outputs (TensorHandles, in outputs() order) for feeds {input name: array}.")
      .def("placement_log", [](const Session& s) { return s.session.placement_log(); });
}

}  // namespace dlrt::python
