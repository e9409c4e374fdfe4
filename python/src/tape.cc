// tape.cc: _dlrt.tape_gradient, the backward pass of dlrt.GradientTape.
//
// The tape (dlrt/_tape.py) records the eager ops run inside it: op, inputs and outputs by
// number, attributes. gradient() hands the record here; it becomes a dlrt graph (a placeholder
// per value the ops read but did not make, the recorded ops replayed on them), the core's
// autodiff adds d target / d source (dlrt_graph_gradients, the rules every graph uses), and
// the graph is compiled and run on the recorded values. A record of the same shape (the same
// ops, attributes, dtypes and dims: every step of a training loop) reuses the compiled
// executable, so a loop pays for one compile.
//
// Targets that are not scalars are summed first (TensorFlow's gradient of a non-scalar target
// is that of its sum); output_gradients weight them (sum(target * weight)).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

namespace {

struct CompiledTape {
  dlrt::Graph graph;
  dlrt::Executable executable;
  std::vector<int64_t> leaves;  // fed in this order
};

std::mutex cache_mutex;
std::map<std::string, std::shared_ptr<CompiledTape>>& cache() {
  static auto* c = new std::map<std::string, std::shared_ptr<CompiledTape>>();
  return *c;
}

std::shared_ptr<CompiledTape> build(const std::shared_ptr<dlrt::Context>& ctx, nb::handle records,
                                    const std::vector<int64_t>& leaf_ids,
                                    const std::vector<const TensorHandle*>& leaf_values,
                                    const std::vector<int64_t>& targets,
                                    const std::vector<std::optional<int64_t>>& target_weights,
                                    const std::vector<int64_t>& sources) {
  auto t = std::make_shared<CompiledTape>(CompiledTape{dlrt::Graph(*ctx), {}, leaf_ids});
  dlrt::Graph& g = t->graph;
  std::map<int64_t, dlrt::Value> values;
  for (size_t i = 0; i < leaf_ids.size(); ++i) {
    const dlrt::Tensor& v = leaf_values[i]->tensor;
    values[leaf_ids[i]] = g.placeholder("leaf" + std::to_string(i), v.dtype(), v.dims());
  }
  auto value_of = [&](int64_t id) {
    auto it = values.find(id);
    if (it == values.end())
      throw dlrt::Error(DLRT_INTERNAL, "GradientTape: value " + std::to_string(id) +
                                           " is neither recorded nor a leaf");
    return it->second;
  };
  size_t index = 0;
  for (nb::handle r : records) {
    const std::string op = nb::cast<std::string>(r[0]);
    std::vector<dlrt::Value> inputs;
    for (nb::handle i : r[1]) inputs.push_back(value_of(nb::cast<int64_t>(i)));
    std::vector<dlrt::Value> outs;
    if (op == "@composite") {
      // A Keras layer call or loss (keras_eager.cc): built again here, under its own scope
      // so that two calls of one layer get distinct node names.
      const auto c = nb::cast<std::shared_ptr<Composite>>(r[2]);
      outs = c->build(g, inputs, "tape" + std::to_string(index) + "/");
    } else {
      outs = g.op(op, inputs, to_attrs(op_signature(op), r[2]));
    }
    ++index;
    size_t k = 0;
    for (nb::handle o : r[3]) {
      if (k >= outs.size())
        throw dlrt::Error(DLRT_INTERNAL, "GradientTape: " + op + " made fewer outputs than recorded");
      values[nb::cast<int64_t>(o)] = outs[k++];
    }
  }
  // One scalar: the sum over targets of sum(target) or sum(target * weight).
  dlrt::Value loss;
  for (size_t i = 0; i < targets.size(); ++i) {
    dlrt::Value y = value_of(targets[i]);
    if (target_weights[i]) y = g.op1("mul", {y, value_of(*target_weights[i])});
    if (!y.dims().empty()) y = g.op1("reduce_sum", {y});
    loss = loss ? g.op1("add", {loss, y}) : y;
  }
  std::vector<dlrt::Value> wrt;
  for (int64_t s : sources) wrt.push_back(value_of(s));
  std::vector<dlrt::Value> grads = g.gradients(loss, wrt);
  std::vector<dlrt::Value> feeds;
  for (int64_t id : leaf_ids) feeds.push_back(values.at(id));
  nb::gil_scoped_release no_gil;  // compiling places, plans and makes every kernel
  t->executable = g.compile(feeds, grads);
  return t;
}

}  // namespace

void clear_tape_cache() {
  std::map<std::string, std::shared_ptr<CompiledTape>> dropped;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    dropped.swap(cache());
  }
}  // the compiled gradients are destroyed here, outside the lock

void bind_tape(nb::module_& m) {
  m.def(
      "tape_gradient",
      [](const std::string& key, nb::handle records, const std::vector<int64_t>& leaf_ids,
         nb::handle leaf_values, const std::vector<int64_t>& targets,
         const std::vector<std::optional<int64_t>>& target_weights,
         const std::vector<int64_t>& sources) {
        const std::shared_ptr<dlrt::Context>& ctx = Runtime::instance().context();
        std::vector<const TensorHandle*> leaves;
        for (nb::handle v : leaf_values) leaves.push_back(&nb::cast<const TensorHandle&>(v));
        std::shared_ptr<CompiledTape> t;
        {
          std::lock_guard<std::mutex> lock(cache_mutex);
          auto it = cache().find(key);
          if (it != cache().end()) t = it->second;
        }
        if (t == nullptr) {
          t = build(ctx, records, leaf_ids, leaves, targets, target_weights, sources);
          std::lock_guard<std::mutex> lock(cache_mutex);
          if (cache().size() > 64) cache().clear();  // a loop of changing shapes stays bounded
          cache()[key] = t;
        }
        std::vector<const dlrt::Tensor*> feeds;
        for (const TensorHandle* h : leaves) feeds.push_back(&h->tensor);
        std::vector<dlrt::Tensor> out;
        {
          nb::gil_scoped_release no_gil;
          out = t->executable.run(feeds, sources.size());
        }
        nb::list result;
        for (dlrt::Tensor& x : out) result.append(nb::cast(TensorHandle{ctx, std::move(x)}));
        return result;
      },
      nb::arg("key"), nb::arg("records"), nb::arg("leaf_ids"), nb::arg("leaf_values"),
      nb::arg("targets"), nb::arg("target_weights"), nb::arg("sources"),
      "d(sum of targets)/d(each source) over the recorded ops (see tape.cc).");
  m.def("tape_cache_size", [] {
    std::lock_guard<std::mutex> lock(cache_mutex);
    return cache().size();
  });
}

}  // namespace dlrt::python
