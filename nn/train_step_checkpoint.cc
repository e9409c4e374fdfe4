// train_step_checkpoint.cc: TrainStep::save and load, and the step's variables read and
// written by name (dlrt/nn/train_step.hpp).
#include "dlrt/nn/train_step.hpp"

#include <cstring>
#include <set>

#include "step_trace.hpp"

namespace dlrt::nn {

namespace {
constexpr const char* kStepCheckpointFormat = "dlrt.nn.step/1";
}  // namespace

void TrainStep::save(const std::string& path) {
  if (traces_.empty())
    throw Error(DLRT_FAILED_PRECONDITION, "TrainStep::save: the step has not run yet");
  const std::map<std::string, Model::NamedValue> values = read_values(primary());
  std::vector<SafeTensorView> tensors;
  for (const auto& [name, v] : values)
    tensors.push_back({name, DLRT_F32, v.dims, v.values.data(), v.values.size() * sizeof(float)});
  write_safetensors(path, tensors,
                    {{"format", kStepCheckpointFormat}, {"runs", std::to_string(runs_)}});
}

void TrainStep::load(const std::string& path) {
  const SafeTensors file = SafeTensors::open(path);
  auto format = file.metadata("format");
  if (!format || *format != kStepCheckpointFormat)
    throw Error(DLRT_INVALID_ARGUMENT, "TrainStep::load: '" + path + "' has format '" +
                                           (format ? *format : std::string("(none)")) +
                                           "'; expected '" + kStepCheckpointFormat +
                                           "' (TrainStep::save)");
  std::map<std::string, Model::NamedValue> values;
  for (const SafeTensorView& t : file.entries()) {
    if (t.dtype != DLRT_F32)
      throw Error(DLRT_INVALID_ARGUMENT, "TrainStep::load: '" + path + "': tensor '" + t.name +
                                             "' is " + dtype_name(t.dtype) + "; expected f32");
    Model::NamedValue v{t.name, t.dims, std::vector<float>(t.bytes / sizeof(float))};
    if (!v.values.empty()) std::memcpy(v.values.data(), t.data, v.values.size() * sizeof(float));
    values[t.name] = std::move(v);
  }
  uint64_t runs = 0;
  const std::string text = file.metadata("runs").value_or("");
  try {
    size_t used = 0;
    runs = std::stoull(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw Error(DLRT_DATA_LOSS,
                "TrainStep::load: '" + path + "': metadata runs = '" + text + "' is not a count");
  }
  if (!traces_.empty()) {
    lend_from_models();  // the models' weights are then replaced by the file's
    write_values(values, true, "TrainStep::load: '" + path + "'");
    sync_from_chief();
    for (auto& t : traces_) {
      for (detail::StepOptimizer& o : t->optimizers) {
        o.steps_done = static_cast<int64_t>(t->graph->read_variable<float>(o.iterations).at(0));
        o.written = -1.f;
      }
      t->runner->exe.set_run_count(runs);
    }
  } else {
    pending_ = std::move(values);
    has_pending_ = true;
  }
  runs_ = runs;
}

// Writes `values` into the step's variables of the same names; with `complete`, every
// variable must be there. Unknown names and wrong shapes are refused, naming them.
void TrainStep::write_values(const std::map<std::string, Model::NamedValue>& values, bool complete,
                             const std::string& who) {
  std::set<std::string> known;
  for (const auto& [name, v] : primary().variables) {
    known.insert(name);
    auto it = values.find(name);
    if (it == values.end()) {
      if (complete)
        throw Error(DLRT_INVALID_ARGUMENT, who + ": has no tensor '" + name + "' " +
                                               dims_string(v.dims()) + ", a variable of the step");
      continue;
    }
    if (it->second.dims != v.dims())
      throw Error(DLRT_INVALID_ARGUMENT, who + ": tensor '" + name + "' is " +
                                             dims_string(it->second.dims) + "; the step's is " +
                                             dims_string(v.dims()));
  }
  for (const auto& [name, v] : values)
    if (!known.count(name))
      throw Error(DLRT_INVALID_ARGUMENT,
                  who + ": tensor '" + name + "' is not a variable of the step");
  for (auto& t : traces_)
    for (const auto& [name, v] : t->variables) {
      auto it = values.find(name);
      if (it != values.end()) t->graph->write_variable(v, it->second.values);
    }
}

std::map<std::string, Model::NamedValue> TrainStep::read_values(Trace& t) {
  std::map<std::string, Model::NamedValue> out;
  for (const auto& [name, v] : t.variables)
    out[name] = {name, v.dims(), t.graph->read_variable<float>(v)};
  return out;
}

}  // namespace dlrt::nn
