// model.cc: reading and checking an ONNX ModelProto (model.hpp).
#include "onnx_import/model.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "onnx_import/tensor_proto.hpp"
#include "status.hpp"

namespace dlrt::onnx_import {
namespace {

std::string node_label(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? fmt::format("node #{} ({})", index, n.op_type())
                          : fmt::format("node '{}' ({})", n.name(), n.op_type());
}

void parse(const void* data, size_t size, onnx::ModelProto& proto) {
  if (size > kMaxModelBytes)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("the model has {} bytes; ONNX models above 2 GiB keep their weights as "
                     "external data",
                     size));
  google::protobuf::io::CodedInputStream in(static_cast<const uint8_t*>(data),
                                            static_cast<int>(size));
  in.SetTotalBytesLimit(static_cast<int>(kMaxModelBytes - 1));
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    fail(DLRT_INVALID_ARGUMENT, "the bytes are not an ONNX ModelProto (protobuf parse failed)");
}

ModelIo io_of(const onnx::ValueInfoProto& v, const char* role) {
  ModelIo io;
  io.name = v.name();
  const std::string what = fmt::format("{} '{}'", role, v.name());
  if (!v.type().has_tensor_type())
    fail(DLRT_UNIMPLEMENTED, fmt::format("{} is not a tensor (sequences, maps and optionals are "
                                         "not supported)", what));
  const auto& tt = v.type().tensor_type();
  io.dtype = dtype_from_onnx(tt.elem_type(), what);
  if (tt.has_shape()) {
    io.has_shape = true;
    if (tt.shape().dim_size() > DLRT_MAX_RANK)
      fail(DLRT_UNIMPLEMENTED, fmt::format("{} has rank {}; dlrt tensors have at most {} dims",
                                           what, tt.shape().dim_size(), DLRT_MAX_RANK));
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          fail(DLRT_INVALID_ARGUMENT, fmt::format("{} has a negative dim {}", what, d.dim_value()));
        io.dims.push_back(d.dim_value());
        io.dim_names.emplace_back();
      } else {
        io.dims.push_back(-1);
        io.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "?");
      }
    }
    checked_element_count(std::vector<int64_t>(io.dims.size(), 1), kMaxTensorElements, what);
    std::vector<int64_t> fixed;
    for (int64_t d : io.dims) fixed.push_back(d < 0 ? 1 : d);
    checked_element_count(fixed, kMaxTensorElements, what);
  }
  return io;
}

void check(OnnxModel& m) {
  const onnx::ModelProto& p = m.proto;
  if (!p.has_graph()) fail(DLRT_INVALID_ARGUMENT, "the ModelProto has no graph");
  std::set<std::string> domains_in_use;
  bool have_default = false;
  std::map<std::string, int64_t> opsets;
  for (const auto& o : p.opset_import()) {
    const std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
    opsets[d] = o.version();
    if (d.empty()) {
      have_default = true;
      m.opset = o.version();
    }
  }
  if (!have_default) {
    if (p.opset_import_size() == 0 && p.ir_version() <= 2) {
      m.opset = 1;  // IR 1-2 models predate opset_import; opset 1 is what they meant
    } else {
      std::string names;
      for (const auto& o : p.opset_import()) names += (names.empty() ? "" : ", ") + o.domain();
      fail(DLRT_UNIMPLEMENTED, fmt::format("the model imports no opset of the default domain ('' / "
                                           "ai.onnx), only {}: dlrt reads the default domain",
                                           names));
    }
  }
  if (m.opset < kMinOpset)
    fail(DLRT_UNIMPLEMENTED,
         fmt::format("the model uses opset {} of the default domain; dlrt reads opsets {}-{} "
                     "(convert it with onnx.version_converter)",
                     m.opset, kMinOpset, kMaxOpset));
  if (m.opset > kMaxOpset)
    fail(DLRT_UNIMPLEMENTED,
         fmt::format("the model uses opset {} of the default domain; dlrt reads opsets {}-{}",
                     m.opset, kMinOpset, kMaxOpset));

  const onnx::GraphProto& g = p.graph();
  std::set<std::string> defined;  // names with a value before any node runs
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    if (!initializers.insert(t.name()).second)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("initializer '{}' is given twice", t.name()));
    defined.insert(t.name());
  }
  for (const auto& t : g.sparse_initializer())
    fail(DLRT_UNIMPLEMENTED,
         fmt::format("sparse initializer '{}' is not supported", t.values().name()));
  for (const auto& v : g.input()) {
    if (initializers.count(v.name()) != 0) continue;  // IR < 4: initializers listed as inputs
    if (!defined.insert(v.name()).second)
      fail(DLRT_INVALID_ARGUMENT, fmt::format("graph input '{}' is given twice", v.name()));
    m.inputs.push_back(io_of(v, "graph input"));
  }

  // Kahn's order over the nodes: a node is ready when every input it names is defined.
  const int n = g.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    const std::string dom = node.domain() == "ai.onnx" ? "" : node.domain();
    if (!dom.empty())
      fail(DLRT_UNIMPLEMENTED,
           fmt::format("{} is of domain '{}'; dlrt reads the default domain only",
                       node_label(node, i), node.domain()));
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      if (defined.count(out) != 0 || !producer.emplace(out, i).second)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{} makes '{}', which already has a value (an input, an initializer "
                         "or another node's output): ONNX graphs are in SSA form",
                         node_label(node, i), out));
    }
  }
  std::vector<int> waiting(n, 0);
  std::multimap<std::string, int> consumers;
  for (int i = 0; i < n; ++i) {
    for (const std::string& in : g.node(i).input()) {
      if (in.empty() || defined.count(in) != 0) continue;
      if (producer.count(in) == 0)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("{} reads '{}', which is not a graph input, an initializer or the "
                         "output of any node",
                         node_label(g.node(i), i), in));
      ++waiting[i];
      consumers.emplace(in, i);
    }
  }
  std::vector<int> ready;
  for (int i = n - 1; i >= 0; --i)
    if (waiting[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    m.order.push_back(i);
    for (const std::string& out : g.node(i).output()) {
      auto range = consumers.equal_range(out);
      for (auto it = range.first; it != range.second; ++it)
        if (--waiting[it->second] == 0) ready.push_back(it->second);
    }
  }
  if (static_cast<int>(m.order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (waiting[i] > 0)
        fail(DLRT_INVALID_ARGUMENT,
             fmt::format("the graph has a cycle: {} waits on its own output through other "
                         "nodes ({} of {} nodes can never run)",
                         node_label(g.node(i), i), n - static_cast<int>(m.order.size()), n));
  }
  for (const auto& v : g.output()) {
    if (defined.count(v.name()) == 0 && producer.count(v.name()) == 0)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("graph output '{}' is not made by any node, input or initializer",
                       v.name()));
    m.outputs.push_back(io_of(v, "graph output"));
  }
  if (m.outputs.empty()) fail(DLRT_INVALID_ARGUMENT, "the graph has no outputs");
}

}  // namespace

OnnxModel load_model_bytes(const void* data, size_t size) {
  OnnxModel m;
  parse(data, size, m.proto);
  check(m);
  return m;
}

OnnxModel load_model_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) fail(DLRT_NOT_FOUND, fmt::format("ONNX model {}: {}", path, ec.message()));
  if (size > kMaxModelBytes)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("ONNX model {} has {} bytes, above protobuf's 2 GiB limit", path, size));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!in) fail(DLRT_DATA_LOSS, fmt::format("ONNX model {}: read failed", path));
  try {
    OnnxModel m = load_model_bytes(bytes.data(), bytes.size());
    m.folder = fs::absolute(fs::path(path)).parent_path().string();
    return m;
  } catch (const Error& e) {
    fail(e.code(), fmt::format("ONNX model {}: {}", path, e.message()));
  }
}

}  // namespace dlrt::onnx_import
