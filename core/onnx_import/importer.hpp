// importer.hpp: an OnnxModel turned into a dlrt graph for one set of input shapes.
//
//   OnnxModel m = load_model_file("resnet.onnx");
//   dlrt::Graph g(ctx);
//   ImportedGraph ig = import_model(m, g, {{1, 3, 224, 224}});
//   dlrt::Executable exe = g.compile(ig.inputs, ig.outputs);
//
// Inputs become placeholders with the given dims (a model's symbolic dims take the fed
// tensor's); initializers and Constant nodes become host constants, folded through shape
// arithmetic at import and made graph constants where an op reads them. Each node goes through
// its converter (converters(), convert_*.cc); a node without one is UNIMPLEMENTED naming it.
#pragma once

#include <dlrt/graph.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_import/model.hpp"
#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {

struct ImportOptions {
  std::string device;         // "" or "auto": no scope; else every op requests this spec
  // A Conv with constant weights runs in NHWC (dlrt's layout) on a transpose of its input,
  // and the ops after it (BatchNormalization, Relu, ...) on that NHWC value, so the graph
  // passes can fuse them; false: every node as the model has it (NCHW).
  bool prefer_nhwc = true;
};

struct ImportedGraph {
  std::vector<dlrt::Value> inputs;   // placeholders of the fed inputs, in OnnxModel::inputs order
  std::vector<size_t> fed;           // which model inputs those are (the others are values)
  std::vector<dlrt::Value> outputs;  // in OnnxModel::outputs order
};

// Model inputs whose *values* the import needs (a Reshape's shape, a Resize's sizes, a
// TopK's K fed at run time): the session passes them as host tensors, and one graph is
// built per value, as per shape. `input_values[i]` set: input i is such an input.
using InputValues = std::vector<std::optional<HostTensor>>;

// Thrown by NodeContext::require_host when the constant it needs is graph input `input`: the
// session then reads that input's value and imports again.
// The most elements a value input may have (its value joins the session's cache key).
constexpr int64_t kMaxValueInputElements = 4096;

struct NeedsInputValue {
  size_t input;
  std::string message;  // the UNIMPLEMENTED message for an input that cannot be a value
};

// `input_dims[i]` for model input i: its dims must match the model's fixed dims (-1 dims take
// any size >= 1). Throws core Error naming the node or value that failed.
ImportedGraph import_model(const OnnxModel& model, dlrt::Graph& graph,
                           const std::vector<std::vector<int64_t>>& input_dims,
                           const ImportOptions& options = {}, const InputValues& values = {});

// The importer's state while it walks one model; NodeContext reads and writes it.
class Importer {
 public:
  Importer(const OnnxModel& model, dlrt::Graph& graph, const ImportOptions& options);
  ImportedGraph run(const std::vector<std::vector<int64_t>>& input_dims, const InputValues& values);
  // The model input `name` is, or -1.
  int input_index(const std::string& name) const;
  // A fed model input (not yet a value) of at most kMaxValueInputElements elements whose
  // value ONNX value `name` is computed from, through the nodes that produce it (not through
  // Shape/Size, which read only dims); nullopt when there is none. require_host asks the
  // session for it, so shape arithmetic on a small input (CenterCropPad's expansion: Max,
  // Sub, Div, Concat of a fed `shape`) folds on the host like arithmetic on constants.
  std::optional<size_t> small_input_behind(const std::string& name);

  dlrt::Graph& graph() { return graph_; }
  const ImportOptions& options() const { return options_; }
  const std::string& folder() const { return model_.folder; }
  Slot& slot(const std::string& name, const std::string& reader);
  void define(const std::string& name, Slot s);
  dlrt::Value materialize(Slot& s, const std::string& name);
  int uses(const std::string& name) const;
  std::string unique_name(const std::string& base);

 private:
  const OnnxModel& model_;
  dlrt::Graph& graph_;
  ImportOptions options_;
  std::map<std::string, Slot> slots_;
  std::map<std::string, int> uses_;
  std::map<std::string, int> producer_;  // ONNX value -> index of the node that makes it
  std::set<std::string> names_;
};

}  // namespace dlrt::onnx_import
