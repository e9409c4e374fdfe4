// dlrt/graph.hpp: Graph, a dataflow graph built op by op with shape inference at build time
// (dlrt_graph_*), and DeviceScope, TensorFlow's `with tf.device(spec):`.
//
//   dlrt::Graph g(ctx);
//   dlrt::Value x = g.placeholder("x", DLRT_F32, {64, 28, 28, 1});
//   dlrt::Value w = g.variable("w", DLRT_F32, {3, 3, 1, 32}, "random_uniform",
//                              {{"minval", -0.1}, {"maxval", 0.1}, {"seed", 1}});
//   {
//     dlrt::DeviceScope on_gpu(g, "/GPU:0");   // TensorFlow's `with tf.device('/GPU:0'):`
//     dlrt::Value y = g.op1("relu", {g.op1("conv2d", {x, w}, {{"padding", "SAME"}})});
//   }
//   dlrt::Executable exe = g.compile({x}, {y});
//
// Values (value.hpp) are small copyable handles; they stay valid as long as their Graph.
#ifndef DLRT_GRAPH_HPP_
#define DLRT_GRAPH_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dlrt/context.hpp"
#include "dlrt/error.hpp"
#include "dlrt/executable.hpp"
#include "dlrt/names.hpp"
#include "dlrt/op_attr.hpp"
#include "dlrt/tensor_desc.hpp"
#include "dlrt/value.hpp"

namespace dlrt {

// A dataflow graph and its variables' storage (dlrt_graph). Move-only; destroy it before its
// Context, and after its executables. Every builder throws Error and leaves the graph as it
// was; a name "" makes a unique one ("relu", "relu_1", ...).
class Graph {
 public:
  explicit Graph(const Context& context) {
    dlrt_graph* raw = nullptr;
    check(dlrt_graph_create(context.get(), &raw));
    handle_.reset(raw);
  }
  // Adopts a graph made through the C API; it is destroyed with this object.
  explicit Graph(dlrt_graph* adopted) noexcept : handle_(adopted) {}

  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  dlrt_graph* get() const noexcept { return handle_.get(); }
  dlrt_graph* release() noexcept { return handle_.release(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // ---- building ----
  Value placeholder(const std::string& name, dlrt_dtype dtype, const std::vector<int64_t>& dims) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_placeholder(get(), name.c_str(), &d, &v));
    return Value(get(), v);
  }
  // `data` holds the elements, row-major; their count must match `dims`.
  template <typename T>
  Value constant(const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<T>& data) {
    const dlrt_tensor_desc d = detail::dense_desc(detail::CDtype<T>::value, dims);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_constant(get(), name.c_str(), &d, data.data(), data.size() * sizeof(T), &v));
    return Value(get(), v);
  }
  // Initialised once on its device by `init_op` ("fill", "random_uniform", "random_normal")
  // with `init_attrs`; shape and dtype come from `dtype`/`dims`.
  Value variable(const std::string& name, dlrt_dtype dtype, const std::vector<int64_t>& dims,
                 const std::string& init_op, const OpAttrs& init_attrs = {},
                 bool trainable = true) {
    const dlrt_tensor_desc d = detail::dense_desc(dtype, dims);
    const detail::CAttrs attrs(init_attrs);
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_variable(get(), name.c_str(), &d, init_op.c_str(), attrs.data(), attrs.size(),
                              trainable ? 1 : 0, &v));
    return Value(get(), v);
  }
  // Adds op `op` (docs/ops.md) and returns all its outputs. `name` "" makes a unique one.
  std::vector<Value> op(const std::string& op, const std::vector<Value>& inputs,
                        const OpAttrs& attrs = {}, const std::string& name = "") {
    return op_outputs(op, inputs, attrs, 8, name);  // fixed-arity ops have at most 3 outputs
  }
  // op() for an op with up to `max_outputs` outputs: split into T parts (nn::LSTM's steps).
  std::vector<Value> op_outputs(const std::string& op, const std::vector<Value>& inputs,
                                const OpAttrs& attrs, size_t max_outputs,
                                const std::string& name = "") {
    std::vector<dlrt_value> in;
    in.reserve(inputs.size());
    for (const Value& i : inputs) in.push_back(i.get());
    const detail::CAttrs c_attrs(attrs);
    std::vector<dlrt_value> out(max_outputs, DLRT_INVALID_VALUE);
    size_t n = 0;
    check(dlrt_graph_op(get(), op.c_str(), name.c_str(), in.empty() ? nullptr : in.data(),
                        in.size(), c_attrs.data(), c_attrs.size(), out.data(), out.size(), &n));
    std::vector<Value> values;
    for (size_t k = 0; k < n; ++k) values.push_back(Value(get(), out[k]));
    return values;
  }
  // The first (for most ops the only) output of op().
  Value op1(const std::string& op_name, const std::vector<Value>& inputs, const OpAttrs& attrs = {},
            const std::string& name = "") {
    return op(op_name, inputs, attrs, name).at(0);
  }
  // After each run of an executable that includes it, `variable` holds `value`.
  void assign(Value variable, Value value) {
    check(dlrt_graph_assign(get(), variable.get(), value.get()));
  }
  // The producers of `a` and `b` are placed on one device.
  void colocate(Value a, Value b) { check(dlrt_graph_colocate(get(), a.get(), b.get())); }
  // Whether `value` is computed from `on` along a path gradients follow (op inputs, not
  // through stop_gradient): false means gradients(value, {on}) is zeros by construction.
  bool depends_on(Value value, Value on) const {
    int out = 0;
    check(dlrt_graph_depends_on(get(), value.get(), on.get(), &out));
    return out != 0;
  }
  // d(loss)/d(w) for each w of `wrt` (variables or any float values), built as ops in this
  // graph (dlrt_graph_gradients: nodes "gradients/..."), one per wrt, in order. A value the
  // loss does not depend on (a variable not reachable from it, or reachable only through
  // stop_gradient) gets zeros, not an error, as tf.GradientTape with
  // unconnected_gradients=ZERO. Throws Error, leaving the graph as it was: INVALID_ARGUMENT for
  // a loss that is not a float scalar (the message names it and its type: reduce it first),
  // an integer wrt, or a Value of another graph (named by its index); UNIMPLEMENTED for an op
  // without a gradient rule on the path (the message names op and node).
  std::vector<Value> gradients(Value loss, const std::vector<Value>& wrt) {
    if (loss.graph() != get())
      throw Error(DLRT_INVALID_ARGUMENT, "gradients: the loss is a value of another graph");
    std::vector<dlrt_value> in;
    in.reserve(wrt.size());
    for (size_t i = 0; i < wrt.size(); ++i) {
      if (wrt[i].graph() != get())
        throw Error(DLRT_INVALID_ARGUMENT,
                    "gradients: wrt[" + std::to_string(i) + "] is a value of another graph");
      in.push_back(wrt[i].get());
    }
    std::vector<dlrt_value> grads(wrt.size(), DLRT_INVALID_VALUE);
    check(dlrt_graph_gradients(get(), loss.get(), in.empty() ? nullptr : in.data(), in.size(),
                               grads.empty() ? nullptr : grads.data()));
    std::vector<Value> out;
    out.reserve(grads.size());
    for (dlrt_value v : grads) out.push_back(Value(get(), v));
    return out;
  }

  // Prefer DeviceScope, which pops for you.
  void push_device(const std::string& spec) { check(dlrt_graph_push_device(get(), spec.c_str())); }
  void pop_device() { check(dlrt_graph_pop_device(get())); }

  // ---- queries ----
  // "name" (output 0) or "name:k"; Error(DLRT_NOT_FOUND) when there is none.
  Value find(const std::string& name) const {
    dlrt_value v = DLRT_INVALID_VALUE;
    check(dlrt_graph_find(get(), name.c_str(), &v));
    return Value(get(), v);
  }
  std::vector<Value> trainable_variables() const {
    std::vector<dlrt_value> raw(dlrt_graph_trainable_variables(get(), nullptr, 0));
    raw.resize(dlrt_graph_trainable_variables(get(), raw.data(), raw.size()));
    std::vector<Value> out;
    for (dlrt_value v : raw) out.push_back(Value(get(), v));
    return out;
  }

  // ---- variables' contents (checkpoints); T must match the variable's dtype ----
  template <typename T>
  std::vector<T> read_variable(Value variable) {
    const dlrt_tensor_desc d = variable.desc();
    size_t count = 1;
    for (int32_t i = 0; i < d.rank; ++i) count *= static_cast<size_t>(d.dims[i]);
    if (d.dtype != detail::CDtype<T>::value)
      throw Error(DLRT_INVALID_ARGUMENT,
                  "read_variable: the element type does not match the "
                  "variable's dtype " +
                      dtype_name(static_cast<dlrt_dtype>(d.dtype)));
    std::vector<T> out(count);
    check(dlrt_graph_variable_read(get(), variable.get(), out.data(), count * sizeof(T)));
    return out;
  }
  template <typename T>
  void write_variable(Value variable, const std::vector<T>& data) {
    check(dlrt_graph_variable_write(get(), variable.get(), data.data(), data.size() * sizeof(T)));
  }

  // ---- compiling ----
  // The subgraph computing `fetches`, fed by `feeds`; with options.run_assigns, also every
  // assign of the graph (a training step).
  Executable compile(const std::vector<Value>& feeds, const std::vector<Value>& fetches,
                     const CompileOptions& options = {}) {
    std::vector<dlrt_value> in, out;
    for (const Value& v : feeds) in.push_back(v.get());
    for (const Value& v : fetches) out.push_back(v.get());
    const dlrt_compile_options c = options.c();
    dlrt_executable* raw = nullptr;
    check(dlrt_graph_compile(get(), in.empty() ? nullptr : in.data(), in.size(),
                             out.empty() ? nullptr : out.data(), out.size(), &c, &raw));
    return Executable(raw);
  }

 private:
  detail::Owner<dlrt_graph> handle_;
};

// TensorFlow's `with tf.device(spec):` — ops, variables and constants built while it lives
// request `spec`; scopes nest (the inner one's parts override the outer's). Not copyable or
// movable: it pops exactly what it pushed, when its block ends.
class DeviceScope {
 public:
  DeviceScope(Graph& graph, const std::string& spec) : graph_(graph.get()) {
    check(dlrt_graph_push_device(graph_, spec.c_str()));
  }
  ~DeviceScope() { dlrt_status_free(dlrt_graph_pop_device(graph_)); }  // paired: cannot fail
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  dlrt_graph* graph_;
};

}  // namespace dlrt

#endif  // DLRT_GRAPH_HPP_
