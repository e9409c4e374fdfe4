// keras_model.cc: nn::Model (Sequential and functional) for dlrt.keras.Model, its
// optimizers, losses and callbacks.
//
// NumPy at the edge: fit/evaluate/predict take lists of arrays (one per model input and
// output) and copy each into an nn::Array (float64 features become float32, as Keras casts
// them; other dtypes are kept); predict returns new NumPy arrays. The GIL is released while
// a step runs; it is taken back between steps to run Python callbacks, to print progress
// through sys.stdout (so notebooks and pytest's capture see it) and to check for Ctrl-C,
// which stops fit between two steps with KeyboardInterrupt and leaves the model usable.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlrt/nn.hpp>

#include <cstring>
#include <memory>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

using namespace nb::literals;

namespace {

namespace nn = dlrt::nn;

// A model and the context it was made in (kept alive as long as the model).
struct ModelHandle {
  std::shared_ptr<dlrt::Context> context;
  std::unique_ptr<nn::Model> model;
  nn::Sequential* sequential() {
    auto* s = dynamic_cast<nn::Sequential*>(model.get());
    if (s == nullptr)
      throw dlrt::Error(DLRT_FAILED_PRECONDITION, "add() is for Sequential models");
    return s;
  }
};

// ---- NumPy <-> nn::Array ----
nn::Array to_array(nb::handle value, const char* what) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(value, "order"_a = "C");
  const std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
  if (kind != "f" && kind != "i" && kind != "u" && kind != "b")
    throw nb::type_error((std::string(what) + ": expected a numeric array, got dtype " +
                          nb::cast<std::string>(a.attr("dtype").attr("name")))
                             .c_str());
  if (nb::cast<std::string>(a.attr("dtype").attr("name")) == "float64")
    a = np.attr("asarray")(a, "dtype"_a = "float32", "order"_a = "C");
  const dlrt_dtype dtype = dtype_from_numpy(a.attr("dtype"));
  std::vector<int64_t> dims;
  for (nb::handle d : a.attr("shape")) dims.push_back(nb::cast<int64_t>(d));
  if (dims.empty())
    throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                      std::string(what) + ": expected an array with a sample axis, got a scalar");
  auto view = nb::cast<nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>>(a);
  std::vector<uint8_t> bytes(view.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), view.data(), bytes.size());
  return nn::Array(dtype, std::move(dims), std::move(bytes));
}

std::vector<nn::Array> to_arrays(nb::handle list, const char* what) {
  std::vector<nn::Array> out;
  for (nb::handle v : list) out.push_back(to_array(v, what));
  return out;
}

nb::object from_array(const nn::Array& a) {
  nb::module_ np = nb::module_::import_("numpy");
  static const std::pair<dlrt_dtype, const char*> names[] = {
      {DLRT_F32, "float32"}, {DLRT_F16, "float16"}, {DLRT_F64, "float64"},
      {DLRT_I32, "int32"},   {DLRT_I64, "int64"},   {DLRT_U8, "uint8"},
      {DLRT_I8, "int8"},     {DLRT_BOOL, "bool"}};
  const char* name = nullptr;
  for (const auto& [t, n] : names)
    if (t == a.dtype()) name = n;
  if (name == nullptr)
    throw dlrt::Error(DLRT_UNIMPLEMENTED, "predict: no NumPy type for " + dlrt::dtype_name(a.dtype()));
  nb::object out = np.attr("empty")(nb::cast(a.dims()), "dtype"_a = name);
  auto view = nb::cast<nb::ndarray<nb::c_contig, nb::device::cpu>>(out);
  if (!a.bytes().empty()) std::memcpy(view.data(), a.data(), a.bytes().size());
  return out;
}

nb::list logs_list(const nn::Logs& logs) {
  nb::list out;
  for (const auto& [k, v] : logs) out.append(nb::make_tuple(k, v));
  return out;
}

nb::dict logs_dict(const nn::Logs& logs) {
  nb::dict out;
  for (const auto& [k, v] : logs) out[k.c_str()] = v;
  return out;
}

// ---- progress through sys.stdout ----
// A streambuf that hands whole writes to Python's sys.stdout (taking the GIL), so progress
// bars appear where Python's own prints do.
class PyStdoutBuf : public std::streambuf {
 protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) pending_.push_back(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    if (pending_.empty()) return 0;
    nb::gil_scoped_acquire gil;
    try {
      nb::object out = nb::module_::import_("sys").attr("stdout");
      out.attr("write")(pending_);
      out.attr("flush")();
    } catch (const nb::python_error&) {
      // A closed or broken sys.stdout loses the progress line, never the training.
    }
    pending_.clear();
    return 0;
  }

 private:
  std::string pending_;
};

struct PyStdout {
  PyStdoutBuf buf;
  std::ostream stream{&buf};
  ~PyStdout() { stream.flush(); }
};

// ---- callbacks ----
// Calls a Python callback object's hooks (the Keras method names), with logs as a dict.
// Exceptions raised in Python stop fit and reach the caller.
class PyCallback : public nn::Callback {
 public:
  explicit PyCallback(nb::object target) : target_(std::move(target)) {}
  void on_train_begin(nn::Model&) override { call("on_train_begin"); }
  void on_epoch_begin(nn::Model&, int64_t epoch) override {
    nb::gil_scoped_acquire gil;
    target_.attr("on_epoch_begin")(epoch);
  }
  void on_train_batch_end(nn::Model&, int64_t batch, const nn::Logs& logs) override {
    nb::gil_scoped_acquire gil;
    target_.attr("on_train_batch_end")(batch, logs_dict(logs));
  }
  void on_epoch_end(nn::Model&, int64_t epoch, const nn::Logs& logs) override {
    nb::gil_scoped_acquire gil;
    target_.attr("on_epoch_end")(epoch, logs_dict(logs));
  }
  void on_train_end(nn::Model&) override { call("on_train_end"); }
  bool chief_only() const override { return false; }

 private:
  // Called without the GIL: everything Python is made after taking it.
  void call(const char* hook) {
    nb::gil_scoped_acquire gil;
    target_.attr(hook)(nb::dict());
  }
  nb::object target_;
};

// Ctrl-C between steps: Python's signal handler only sets a flag while a step runs without
// the GIL; this checks it after every step and stops fit with KeyboardInterrupt.
class InterruptCheck : public nn::Callback {
 public:
  void on_train_batch_end(nn::Model&, int64_t, const nn::Logs&) override {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
};

// The LearningRateScheduler's Python function, called with the GIL.
nn::LearningRateScheduler::Schedule py_schedule(nb::object fn) {
  auto shared = std::make_shared<nb::object>(std::move(fn));
  return [shared](int64_t epoch, double lr) {
    nb::gil_scoped_acquire gil;
    return nb::cast<double>((*shared)(epoch, lr));
  };
}

}  // namespace

void bind_keras_model(nb::module_& m) {
  // ---- optimizers and losses: values handed to compile ----
  nb::class_<nn::Optimizer>(m, "Optimizer")
      .def_prop_ro("name", &nn::Optimizer::name)
      .def_prop_ro("config", &nn::Optimizer::config);
  nb::class_<nn::Adam, nn::Optimizer>(m, "Adam")
      .def(nb::init<double, double, double, double>(), nb::arg("learning_rate"),
           nb::arg("beta_1"), nb::arg("beta_2"), nb::arg("epsilon"));
  nb::class_<nn::AdamW, nn::Adam>(m, "AdamW")
      .def(nb::init<double, double, double, double, double>(), nb::arg("learning_rate"),
           nb::arg("weight_decay"), nb::arg("beta_1"), nb::arg("beta_2"), nb::arg("epsilon"));
  nb::class_<nn::SGD, nn::Optimizer>(m, "SGD")
      .def(nb::init<double, double, bool>(), nb::arg("learning_rate"), nb::arg("momentum"),
           nb::arg("nesterov"));

  nb::class_<nn::Loss>(m, "Loss");
  nb::class_<nn::SparseCategoricalCrossentropy, nn::Loss>(m, "SparseCategoricalCrossentropy")
      .def(nb::init<bool, std::optional<int64_t>>(), nb::arg("from_logits"),
           nb::arg("ignore_class") = nb::none())
      .def_prop_ro("ignore_class", &nn::SparseCategoricalCrossentropy::ignore_class);
  nb::class_<nn::MeanSquaredError, nn::Loss>(m, "MeanSquaredError").def(nb::init<>());
  nb::class_<nn::MeanAbsoluteError, nn::Loss>(m, "MeanAbsoluteError").def(nb::init<>());
  nb::class_<nn::Huber, nn::Loss>(m, "Huber").def(nb::init<double>(), nb::arg("delta"));
  nb::class_<nn::BinaryCrossentropy, nn::Loss>(m, "BinaryCrossentropy")
      .def(nb::init<bool>(), nb::arg("from_logits"));

  // ---- callbacks nn implements ----
  nb::class_<nn::Callback>(m, "NativeCallback");
  nb::class_<nn::CSVLogger, nn::Callback>(m, "CSVLogger")
      .def(
          "__init__",
          [](nn::CSVLogger* self, const std::string& filename, const std::string& separator,
             bool append) {
            if (separator.size() != 1)
              throw dlrt::Error(DLRT_INVALID_ARGUMENT, "CSVLogger: separator must be one character");
            new (self) nn::CSVLogger(filename, separator[0], append);
          },
          nb::arg("filename"), nb::arg("separator"), nb::arg("append"));
  nb::class_<nn::EarlyStopping, nn::Callback>(m, "EarlyStopping")
      .def(
          "__init__",
          [](nn::EarlyStopping* self, const std::string& monitor, double min_delta,
             int64_t patience, const std::string& mode, std::optional<double> baseline,
             bool restore_best_weights, int64_t start_from_epoch) {
            nn::EarlyStoppingOptions o;
            o.monitor = monitor;
            o.min_delta = min_delta;
            o.patience = patience;
            o.mode = mode;
            o.baseline = baseline;
            o.restore_best_weights = restore_best_weights;
            o.start_from_epoch = start_from_epoch;
            new (self) nn::EarlyStopping(o);
          },
          nb::arg("monitor"), nb::arg("min_delta"), nb::arg("patience"), nb::arg("mode"),
          nb::arg("baseline").none(), nb::arg("restore_best_weights"),
          nb::arg("start_from_epoch"))
      .def_prop_ro("stopped_epoch", &nn::EarlyStopping::stopped_epoch)
      .def_prop_ro("best_epoch", &nn::EarlyStopping::best_epoch)
      .def_prop_ro("best", &nn::EarlyStopping::best);
  nb::class_<nn::LearningRateScheduler, nn::Callback>(m, "LearningRateScheduler")
      .def(
          "__init__",
          [](nn::LearningRateScheduler* self, nb::object schedule) {
            new (self) nn::LearningRateScheduler(py_schedule(std::move(schedule)));
          },
          nb::arg("schedule"));

  // ---- models ----
  nb::class_<ModelHandle>(m, "Model", "nn::Model (dlrt.keras.Model wraps it).")
      .def_static(
          "sequential",
          [](const std::vector<std::shared_ptr<nn::Layer>>& layers, const std::string& name) {
            auto ctx = Runtime::instance().context();
            auto seq = std::make_unique<nn::Sequential>(*ctx, std::initializer_list<nn::LayerRef>{},
                                                        name);
            for (const auto& l : layers) seq->add(nn::LayerRef(l));
            return ModelHandle{ctx, std::move(seq)};
          },
          nb::arg("layers"), nb::arg("name"))
      .def_static(
          "functional",
          [](const std::vector<nn::SymbolicTensor>& inputs,
             const std::vector<nn::SymbolicTensor>& outputs, const std::string& name) {
            auto ctx = Runtime::instance().context();
            return ModelHandle{ctx, std::make_unique<nn::Model>(*ctx, inputs, outputs, name)};
          },
          nb::arg("inputs"), nb::arg("outputs"), nb::arg("name"))
      .def(
          "add", [](ModelHandle& h, std::shared_ptr<nn::Layer> l) { h.sequential()->add(nn::LayerRef(l)); },
          nb::arg("layer"))
      .def_prop_ro("name", [](ModelHandle& h) { return h.model->name(); })
      .def_prop_ro("layers", [](ModelHandle& h) { return h.model->layers(); })
      .def_prop_ro("is_sequential", [](ModelHandle& h) { return h.model->is_sequential(); })
      .def_prop_ro("input_names", [](ModelHandle& h) { return h.model->input_names(); })
      .def_prop_ro("output_names", [](ModelHandle& h) { return h.model->output_names(); })
      .def_prop_ro("output_shapes", [](ModelHandle& h) { return h.model->output_shapes(); },
                   "each output's shape without the batch dim, once built (else empty)")
      .def_prop_ro("epoch", [](ModelHandle& h) { return h.model->epoch(); })
      .def_prop_rw(
          "stop_training", [](ModelHandle& h) { return h.model->stop_training; },
          [](ModelHandle& h, bool v) { h.model->stop_training = v; })
      .def_prop_rw(
          "learning_rate", [](ModelHandle& h) { return h.model->learning_rate(); },
          [](ModelHandle& h, double lr) { h.model->set_learning_rate(lr); })
      .def(
          "get_layer",
          [](ModelHandle& h, const std::string& name) {
            nn::Layer& l = h.model->get_layer(name);
            for (const auto& p : h.model->layers())
              if (p.get() == &l) return p;
            throw dlrt::Error(DLRT_NOT_FOUND, "get_layer: '" + name + "' is not a top-level layer");
          },
          nb::arg("name"))
      .def(
          "compile",
          [](ModelHandle& h, nn::Optimizer* optimizer, nn::Loss* loss,
             const std::vector<std::string>& metrics, const std::string& device, uint64_t seed,
             bool log_device_placement, const std::string& dtype_policy,
             const std::vector<double>& loss_weights, const std::string& graph_passes) {
            nn::CompileConfig c;
            c.device = device;
            c.seed = seed;
            c.log_device_placement = log_device_placement;
            c.dtype_policy = dtype_policy;
            c.loss_weights = loss_weights;
            c.graph_passes = graph_passes;
            nb::gil_scoped_release no_gil;
            if (optimizer == nullptr && loss == nullptr) {
              h.model->compile(c);
            } else {
              if (optimizer == nullptr || loss == nullptr)
                throw dlrt::Error(DLRT_INVALID_ARGUMENT,
                                  "compile: give both an optimizer and a loss (or neither, "
                                  "for predict only)");
              h.model->compile(*optimizer, *loss, metrics, c);
            }
          },
          nb::arg("optimizer").none(), nb::arg("loss").none(), nb::arg("metrics"),
          nb::arg("device"), nb::arg("seed"), nb::arg("log_device_placement"),
          nb::arg("dtype_policy"), nb::arg("loss_weights"), nb::arg("graph_passes"))
      .def(
          "fit",
          [](ModelHandle& h, nb::handle xs, nb::handle ys, int64_t epochs, int64_t batch_size,
             nb::handle val_xs, nb::handle val_ys, bool shuffle,
             const std::vector<std::shared_ptr<nn::Callback>>& native, nb::handle python_callbacks,
             int verbose, int64_t initial_epoch, int64_t epochs_total) {
            std::vector<nn::Array> x = to_arrays(xs, "fit x"), y = to_arrays(ys, "fit y");
            std::vector<nn::Array> vx, vy;
            nn::FitOptions o;
            o.epochs = epochs;
            o.initial_epoch = initial_epoch;
            o.batch_size = batch_size;
            o.shuffle = shuffle;
            if (!val_xs.is_none()) {
              vx = to_arrays(val_xs, "validation x");
              vy = to_arrays(val_ys, "validation y");
              o.validation_xs = &vx;
              o.validation_ys = &vy;
            }
            for (const auto& cb : native) o.callbacks.push_back(cb);
            for (nb::handle cb : python_callbacks)
              o.callbacks.push_back(std::make_shared<PyCallback>(nb::borrow(cb)));
            o.callbacks.push_back(std::make_shared<InterruptCheck>());
            PyStdout out;
            o.progress.verbose = verbose;
            o.progress.out = &out.stream;
            o.progress.terminal = nb::cast<bool>(
                nb::module_::import_("sys").attr("stdout").attr("isatty")());
            o.progress.epochs_total = epochs_total;
            nn::History history;
            {
              nb::gil_scoped_release no_gil;
              history = h.model->fit(x, y, o);
              out.stream.flush();
            }
            nb::dict hist;
            for (const auto& [k, v] : history.history) hist[k.c_str()] = v;
            return nb::make_tuple(history.epoch, hist);
          },
          nb::arg("xs"), nb::arg("ys"), nb::arg("epochs"), nb::arg("batch_size"),
          nb::arg("val_xs").none(), nb::arg("val_ys").none(), nb::arg("shuffle"),
          nb::arg("native_callbacks"), nb::arg("python_callbacks"), nb::arg("verbose"),
          nb::arg("initial_epoch"), nb::arg("epochs_total"))
      .def(
          "evaluate",
          [](ModelHandle& h, nb::handle xs, nb::handle ys, int64_t batch_size) {
            std::vector<nn::Array> x = to_arrays(xs, "evaluate x"), y = to_arrays(ys, "evaluate y");
            nn::Logs logs;
            {
              nb::gil_scoped_release no_gil;
              logs = h.model->evaluate(x, y, batch_size);
            }
            return logs_list(logs);
          },
          nb::arg("xs"), nb::arg("ys"), nb::arg("batch_size"))
      .def(
          "predict",
          [](ModelHandle& h, nb::handle xs, int64_t batch_size) {
            std::vector<nn::Array> x = to_arrays(xs, "predict x");
            std::vector<nn::Array> y;
            {
              nb::gil_scoped_release no_gil;
              y = h.model->predict(x, batch_size);
            }
            nb::list out;
            for (const nn::Array& a : y) out.append(from_array(a));
            return out;
          },
          nb::arg("xs"), nb::arg("batch_size"))
      .def(
          "train_on_batch",
          [](ModelHandle& h, nb::handle xs, nb::handle ys) {
            std::vector<nn::Array> x = to_arrays(xs, "x"), y = to_arrays(ys, "y");
            nb::gil_scoped_release no_gil;
            return h.model->train_on_batch(x, y);
          },
          nb::arg("xs"), nb::arg("ys"))
      .def(
          "test_on_batch",
          [](ModelHandle& h, nb::handle xs, nb::handle ys) {
            std::vector<nn::Array> x = to_arrays(xs, "x"), y = to_arrays(ys, "y");
            nb::gil_scoped_release no_gil;
            return h.model->test_on_batch(x, y);
          },
          nb::arg("xs"), nb::arg("ys"))
      .def("summary",
           [](ModelHandle& h) {
             std::ostringstream out;
             h.model->summary(out);
             return out.str();
           })
      .def(
          "save_weights",
          [](ModelHandle& h, const std::string& path) {
            nb::gil_scoped_release no_gil;
            h.model->save_weights(path);
          },
          nb::arg("path"))
      .def(
          "load_weights",
          [](ModelHandle& h, const std::string& path) {
            nb::gil_scoped_release no_gil;
            h.model->load_weights(path);
          },
          nb::arg("path"))
      .def(
          "save_onnx",
          [](ModelHandle& h, const std::string& path, nb::list input_dtypes) {
            // NumPy dtypes (or their names): the model inputs' types in the file, one per
            // input or one for all (ids for inputs Embeddings read, uint8 for images scaled
            // inside); empty: int64 ids where only Embeddings read the input, else float32.
            std::vector<dlrt_dtype> dtypes;
            for (nb::handle d : input_dtypes) dtypes.push_back(dtype_from_numpy(d));
            nb::gil_scoped_release no_gil;
            h.model->save_onnx(path, dtypes);
          },
          nb::arg("path"), nb::arg("input_dtypes"))
      .def("state",
           [](ModelHandle& h) {
             nb::list out;
             for (const nn::Model::NamedValue& v : h.model->state()) {
               nb::object a = nb::module_::import_("numpy").attr("array")(nb::cast(v.values),
                                                                          "dtype"_a = "float32");
               out.append(nb::make_tuple(v.name, a.attr("reshape")(nb::cast(v.dims))));
             }
             return out;
           })
      .def(
          "set_state",
          [](ModelHandle& h, const std::vector<std::pair<std::string, nb::handle>>& values) {
            std::vector<nn::Model::NamedValue> state;
            for (const auto& [name, array] : values) {
              nb::object a = nb::module_::import_("numpy").attr("ascontiguousarray")(
                  array, "dtype"_a = "float32");
              nn::Model::NamedValue v;
              v.name = name;
              for (nb::handle d : a.attr("shape")) v.dims.push_back(nb::cast<int64_t>(d));
              v.values = nb::cast<std::vector<float>>(a.attr("reshape")(-1).attr("tolist")());
              state.push_back(std::move(v));
            }
            h.model->set_state(state);
          },
          nb::arg("values"));
}

}  // namespace dlrt::python
