// keras_eager.cc: Keras layers, models and losses called on eager tensors, so that Keras'
// custom training loop runs:
//   with tf.GradientTape() as tape:
//       loss = loss_fn(y, model(x, training=True))
//   grads = tape.gradient(loss, model.trainable_weights)
//
// A layer call and a loss are *composites*: functions that build ops into a graph (the same
// Layer::call and Loss::per_sample that compile the model for fit). Run eagerly, a composite
// builds a small graph on placeholders (the inputs, then the layer's weights), compiles it
// once per input shape (cached) and runs it. A GradientTape records the composite like an op;
// its backward builds the composite again into the tape's graph, so autodiff differentiates
// the very ops the forward ran. Weights are Python Variables (dlrt/keras/_eager.py) made from
// the layer's parameter specs with nn's initializers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <dlrt/nn.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

namespace {

namespace nn = dlrt::nn;

// A layer called on `num_inputs` tensors followed by its weights (params() order). Its extra
// outputs, after the layer's, are the state updates (BatchNormalization's moving statistics
// in training), as (weight index, new value) in `update_index`.
//
// The layer is not owned here: a Python layer owns its composites (keras/_eager.py keeps them
// in the layer's __dict__, and each composite's `_layer` attribute keeps the layer alive while a
// tape holds the composite). Owning it (a shared_ptr, which holds the Python object) would make
// a cycle through C++ that Python's collector cannot see: every layer called eagerly would leak.
struct LayerCall : Composite {
  const nn::Layer* layer = nullptr;
  size_t num_inputs = 1;
  bool training = false;
  uint64_t seed = 0;
  mutable std::vector<size_t> update_index;  // filled by build()

  std::vector<dlrt::Value> build(dlrt::Graph& g, const std::vector<dlrt::Value>& in,
                                 const std::string& scope) const override {
    std::vector<nn::StateUpdate> updates;
    nn::CallContext c{g, training, seed, scope, &updates};
    const std::vector<dlrt::Value> xs(in.begin(), in.begin() + static_cast<long>(num_inputs));
    const std::vector<dlrt::Value> vars(in.begin() + static_cast<long>(num_inputs), in.end());
    std::vector<dlrt::Value> out{num_inputs == 1 ? layer->call(c, xs[0], vars)
                                                 : layer->call_multi(c, xs, vars)};
    update_index.clear();
    for (const nn::StateUpdate& u : updates)
      for (size_t k = 0; k < vars.size(); ++k)
        if (vars[k].get() == u.variable.get()) {
          update_index.push_back(k);
          out.push_back(u.value);
        }
    return out;
  }
  std::string key() const override {
    return "layer:" + std::to_string(serial) + ":" + std::to_string(num_inputs) + ":" + (training ? "t" : "i") + ":" + std::to_string(seed);
  }
};

// A loss on (y_true, y_pred): the mean over the batch of Loss::per_sample, as fit computes it.
struct LossCall : Composite {
  std::shared_ptr<nn::Loss> loss;
  std::vector<dlrt::Value> build(dlrt::Graph& g, const std::vector<dlrt::Value>& in,
                                 const std::string&) const override {
    const dlrt::Value t = loss->prepare_targets(g, in.at(0));
    return {g.op1("reduce_mean", {loss->per_sample(g, in.at(1), t)})};
  }
  std::string key() const override {
    return "loss:" + std::to_string(serial);
  }
};

struct Compiled {
  dlrt::Graph graph;
  dlrt::Executable executable;
  size_t num_outputs = 0;
  std::vector<size_t> update_index;
};

std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<Compiled>>& cache() {
  static auto* c = new std::map<std::string, std::shared_ptr<Compiled>>();
  return *c;
}

std::string descs_key(const std::vector<const TensorHandle*>& in) {
  std::string k;
  for (const TensorHandle* h : in) {
    k += "|" + std::to_string(h->tensor.dtype()) + ":" + std::to_string(h->tensor.device());
    for (int64_t d : h->tensor.dims()) k += "," + std::to_string(d);
  }
  return k;
}

}  // namespace

void clear_composite_cache() {
  std::map<std::string, std::shared_ptr<Compiled>> dropped;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    dropped.swap(cache());
  }
}  // the compiled graphs are destroyed here, outside the lock

std::vector<TensorHandle> run_composite(const Composite& c,
                                        const std::vector<const TensorHandle*>& inputs,
                                        std::vector<size_t>* update_index) {
  const std::shared_ptr<dlrt::Context>& ctx = Runtime::instance().context();
  const std::string key = c.key() + descs_key(inputs);
  std::shared_ptr<Compiled> compiled;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto it = cache().find(key);
    if (it != cache().end()) compiled = it->second;
  }
  if (compiled == nullptr) {
    compiled = std::make_shared<Compiled>(Compiled{dlrt::Graph(*ctx), {}, 0, {}});
    dlrt::Graph& g = compiled->graph;
    std::vector<dlrt::Value> ph;
    for (size_t i = 0; i < inputs.size(); ++i)
      ph.push_back(g.placeholder("in" + std::to_string(i), inputs[i]->tensor.dtype(),
                                 inputs[i]->tensor.dims()));
    std::vector<dlrt::Value> outs;
    {
      // Everything on the device of the first input (eager: the op follows its input).
      dlrt::DeviceScope scope(g, Runtime::instance().devices().at(inputs.at(0)->tensor.device()).name);
      outs = c.build(g, ph, "");
    }
    if (auto* lc = dynamic_cast<const LayerCall*>(&c)) compiled->update_index = lc->update_index;
    compiled->num_outputs = outs.size();
    {
      nb::gil_scoped_release no_gil;
      compiled->executable = g.compile(ph, outs);
    }
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (cache().size() > 256) cache().clear();
    cache()[key] = compiled;
  }
  if (update_index != nullptr) *update_index = compiled->update_index;
  std::vector<const dlrt::Tensor*> feeds;
  for (const TensorHandle* h : inputs) feeds.push_back(&h->tensor);
  std::vector<dlrt::Tensor> out;
  {
    nb::gil_scoped_release no_gil;
    out = compiled->executable.run(feeds, compiled->num_outputs);
  }
  std::vector<TensorHandle> result;
  for (dlrt::Tensor& t : out) result.push_back(TensorHandle{ctx, std::move(t)});
  return result;
}

void bind_keras_eager(nb::module_& m) {
  // dynamic_attr: Python keeps the layer alive through the composite (`_layer`), a cycle the
  // collector sees and frees.
  nb::class_<Composite>(m, "Composite", nb::dynamic_attr(),
                        "A layer call or a loss, as a GradientTape records it.")
      .def_prop_ro("key", &Composite::key);

  m.def(
      "layer_call",
      [](const nn::Layer& layer, size_t num_inputs, bool training, uint64_t seed) {
        auto c = std::make_shared<LayerCall>();
        c->layer = &layer;
        c->num_inputs = num_inputs;
        c->training = training;
        c->seed = seed;
        return std::static_pointer_cast<Composite>(c);
      },
      nb::arg("layer"), nb::arg("num_inputs"), nb::arg("training"), nb::arg("seed"));
  m.def(
      "loss_call",
      [](const nn::Loss& loss) {
        auto c = std::make_shared<LossCall>();
        c->loss = std::shared_ptr<nn::Loss>(loss.clone());
        return std::static_pointer_cast<Composite>(c);
      },
      nb::arg("loss"));
  m.def(
      "run_composite",
      [](const std::shared_ptr<Composite>& c, nb::handle inputs) {
        std::vector<const TensorHandle*> in;
        for (nb::handle h : inputs) in.push_back(&nb::cast<const TensorHandle&>(h));
        std::vector<size_t> updates;
        std::vector<TensorHandle> out = run_composite(*c, in, &updates);
        nb::list result;
        for (TensorHandle& t : out) result.append(nb::cast(std::move(t)));
        return nb::make_tuple(result, updates);
      },
      nb::arg("composite"), nb::arg("inputs"),
      "Runs a composite on TensorHandles: (outputs, the weight index of each state update "
      "output after the first).");
  m.def(
      "layer_weights",
      [](const nn::Layer& layer, const std::vector<nn::Shape>& input_shapes, uint64_t seed,
         std::optional<size_t> device) {
        Runtime& rt = Runtime::instance();
        const std::shared_ptr<dlrt::Context>& ctx = rt.context();
        const size_t dev = device ? *device : rt.default_device();
        const std::vector<nn::ParamSpec> specs =
            input_shapes.size() == 1 ? layer.params(input_shapes[0]) : layer.params_multi(input_shapes);
        // As nn's Session makes them (so a model's eager weights are its compiled ones'
        // first values): graph variables with the initializer's init op, seeded from the
        // model seed and "<layer>/<param>", drawn at rng offset 0; host-computed ones written.
        dlrt::Graph g(*ctx);
        std::vector<dlrt::Value> fetch;
        {
          dlrt::DeviceScope scope(g, rt.devices().at(dev).name);
          for (const nn::ParamSpec& p : specs) {
            const std::string name = layer.display_name() + "/" + p.name;
            const uint64_t s = nn::derive_seed(seed, name);
            auto [op, attrs] = p.init.init_op(p.dims, s);
            dlrt::Value v = g.variable(name, DLRT_F32, p.dims, op, attrs, false);
            if (p.init.on_host()) g.write_variable(v, p.init.host_values(p.dims, s));
            fetch.push_back(g.op1("copy", {v}));
          }
        }
        std::vector<dlrt::Tensor> values;
        if (!fetch.empty()) {
          nb::gil_scoped_release no_gil;
          dlrt::Executable e = g.compile({}, fetch);
          values = e.run({}, fetch.size());
        }
        nb::list out;
        for (size_t k = 0; k < specs.size(); ++k)
          out.append(nb::make_tuple(specs[k].name, nb::cast(TensorHandle{ctx, std::move(values[k])}),
                                    specs[k].trainable && layer.trainable()));
        return out;
      },
      nb::arg("layer"), nb::arg("input_shapes"), nb::arg("seed"),
      nb::arg("device").none() = nb::none(),
      "The layer's weights for these input shapes (batch left out): (name, first value, "
      "trainable), drawn by nn's initializers with seeds derived from `seed` and the names.");
  m.def(
      "layer_output_shape",
      [](const nn::Layer& layer, const std::vector<nn::Shape>& input_shapes) {
        return input_shapes.size() == 1 ? layer.output_shape(input_shapes[0])
                                        : layer.output_shape_multi(input_shapes);
      },
      nb::arg("layer"), nb::arg("input_shapes"));
}

}  // namespace dlrt::python
