// model_summary.cc: Model::summary, Keras' summary table for Sequential and functional models
// (dlrt/nn/model.hpp).
#include "dlrt/nn/model.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "dlrt/nn/plan.hpp"
#include "functional_graph.hpp"

namespace dlrt::nn {

namespace {

// The text layout of Keras' model.summary() (print_summary): fixed-width rows whose fields are
// cut at given positions, and counts with thousands commas.
// One row: field i ends at positions[i] (cut or padded with spaces), and the character
// before each next field is a space, as Keras' print_row.
void summary_row(std::ostream& out, const std::vector<std::string>& fields,
                 const std::vector<size_t>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";
    line += fields[i];
    line = line.substr(0, positions[i]);
    line += std::string(positions[i] - line.size(), ' ');
  }
  out << line << "\n";
}

// 93322 -> "93,322".
std::string with_commas(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

void Model::summary(std::ostream& out) const {
  if (sequential_) sequential_summary(out);
  else functional_summary(out);
}

void Model::sequential_summary(std::ostream& out) const {
  if (!input_ && !plan_)
    throw Error(DLRT_FAILED_PRECONDITION, "summary: " + name_ +
                                              " is not built; give it an Input "
                                              "layer or fit() it first");
  // Keras' print_summary for sequential models: 65 columns, fields cut at 29, 55, 65, the
  // last character before each next field a space.
  const std::vector<size_t> positions = {29, 55, 65};
  auto row = [&](const std::vector<std::string>& fields) { summary_row(out, fields, positions); };
  auto commas = [](int64_t v) { return with_commas(v); };
  out << "Model: \"" << name_ << "\"\n" << std::string(65, '_') << "\n";
  row({"Layer (type)", "Output Shape", "Param #"});
  out << std::string(65, '=') << "\n";
  Shape shape = plan_ ? plan_->input : *input_;
  int64_t trainable = 0, frozen = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    int64_t count = 0;
    for (const ParamSpec& p : layers_[l]->params(shape)) {
      count += element_count(p.dims);
      (p.trainable && layers_[l]->trainable() ? trainable : frozen) += element_count(p.dims);
    }
    shape = layers_[l]->output_shape(shape);
    row({layers_[l]->name() + " (" + layers_[l]->type() + ")", shape_string(shape),
         std::to_string(count)});
    out << std::string(65, l + 1 == layers_.size() ? '=' : '_') << "\n";
  }
  out << "Total params: " << commas(trainable + frozen) << "\n"
      << "Trainable params: " << commas(trainable) << "\n"
      << "Non-trainable params: " << commas(frozen) << "\n"
      << std::string(65, '_') << "\n";
}

void Model::functional_summary(std::ostream& out) const {
  // Keras' print_summary for functional models: 98 columns, fields cut at 32, 53, 65, 98;
  // Input layers first, then every layer once in call order. "Connected to" names each
  // input of each call as layer[call][output]; a layer called several times (shared) lists
  // every call's inputs, one per line, and its output shape is "multiple" when they differ.
  const std::vector<size_t> positions = {32, 53, 65, 98};
  const detail::FunctionalGraph& g = *graph_;
  out << "Model: \"" << name_ << "\"\n" << std::string(98, '_') << "\n";
  summary_row(out, {"Layer (type)", "Output Shape", "Param #", "Connected to"}, positions);
  out << std::string(98, '=') << "\n";
  const size_t rows = g.inputs.size() + g.layers.size();
  size_t printed = 0;
  auto rule = [&] { out << std::string(98, ++printed == rows ? '=' : '_') << "\n"; };
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    summary_row(out, {g.input_names[i] + " (InputLayer)", shape_string(g.inputs[i]), "0", "[]"},
                positions);
    rule();
  }
  int64_t trainable = 0, frozen = 0;
  for (size_t l = 0; l < g.layers.size(); ++l) {
    std::vector<std::string> connected;
    std::string shape;
    int64_t count = 0;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      const detail::PlanNode& n = g.nodes[k];
      if (n.layer != l) continue;
      const std::string mine = shape_string(g.slot_shapes[g.inputs.size() + k]);
      shape = shape.empty() || shape == mine ? mine : "multiple";
      for (size_t s : n.inputs) connected.push_back(g.slot_name(s));
      if (n.call != 0) continue;
      std::vector<Shape> in;
      for (size_t s : n.inputs) in.push_back(g.slot_shapes[s]);
      for (const ParamSpec& p : g.layers[l]->params_multi(in)) {
        count += element_count(p.dims);
        (p.trainable && g.layers[l]->trainable() ? trainable : frozen) += element_count(p.dims);
      }
    }
    const Layer& layer = *g.layers[l];
    summary_row(out,
                {layer.name() + " (" + layer.type() + ")", shape, std::to_string(count),
                 connected.empty() ? "" : connected[0]},
                positions);
    for (size_t c = 1; c < connected.size(); ++c)
      summary_row(out, {"", "", "", connected[c]}, positions);
    rule();
  }
  out << "Total params: " << with_commas(trainable + frozen) << "\n"
      << "Trainable params: " << with_commas(trainable) << "\n"
      << "Non-trainable params: " << with_commas(frozen) << "\n"
      << std::string(98, '_') << "\n";
}

}  // namespace dlrt::nn
