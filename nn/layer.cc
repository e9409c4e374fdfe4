// layer.cc: the Layer interface's defaults and its calls on symbolic tensors
// (dlrt/nn/layer.hpp).
#include "dlrt/nn/layer.hpp"

namespace dlrt::nn {

std::vector<ParamSpec> Layer::params(const Shape& /*in*/) const { return {}; }

bool Layer::is_input() const { return false; }

int64_t Layer::input_ids() const { return 0; }

Shape Layer::output_shape_multi(const std::vector<Shape>& in) const {
  check_single(in.size());
  return output_shape(in[0]);
}

std::vector<ParamSpec> Layer::params_multi(const std::vector<Shape>& in) const {
  check_single(in.size());
  return params(in[0]);
}

Value Layer::call_multi(CallContext& c, const std::vector<Value>& xs,
                        const std::vector<Value>& vars) const {
  check_single(xs.size());
  return call(c, xs[0], vars);
}

std::shared_ptr<Layer> Layer::clone() const { return nullptr; }

void Layer::set_dtype_policy(const std::string& policy) {
  policy_compute_dtype(policy);  // checks the name
  dtype_policy_ = policy;
}

bool Layer::float32_only() const { return false; }

Error Layer::bad_input(const Shape& in, const std::string& expected) const {
  return Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): input shape " +
                                          shape_string(in) + " does not fit; expected " + expected);
}

void Layer::check_single(size_t inputs) const {
  if (inputs != 1)
    throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): called on " +
                                           std::to_string(inputs) +
                                           " tensors; it takes exactly one");
}

SymbolicTensor Layer::operator()(const SymbolicTensor& x) const {
  return (*this)(std::vector<SymbolicTensor>{x});
}

SymbolicTensor Layer::operator()(const std::vector<SymbolicTensor>& xs) const {
  check_call(xs);
  if (!called_) {
    called_ = clone();
    if (!called_)
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() +
                                             "): cannot be called on symbolic tensors: it "
                                             "does not override Layer::clone()");
    called_->called_.reset();  // the copy must not own itself
  }
  return node_of(called_, xs, /*shared=*/false);
}

SymbolicTensor Layer::call_shared(const std::shared_ptr<Layer>& self,
                                  const std::vector<SymbolicTensor>& xs) {
  if (self == nullptr) throw Error(DLRT_INVALID_ARGUMENT, "call_shared: null layer");
  self->check_call(xs);
  return node_of(self, xs, /*shared=*/true);
}

void Layer::check_call(const std::vector<SymbolicTensor>& xs) const {
  if (is_input())
    throw Error(DLRT_INVALID_ARGUMENT, "Input: is not called; use it as a tensor: Conv2D(...)(in)");
  if (xs.empty())
    throw Error(DLRT_INVALID_ARGUMENT,
                display_name() + " (" + type() + "): called on no tensors; expected at least one");
  for (size_t i = 0; i < xs.size(); ++i)
    if (!xs[i].valid())
      throw Error(DLRT_INVALID_ARGUMENT, display_name() + " (" + type() + "): input " +
                                             std::to_string(i) + " refers to no tensor");
}

SymbolicTensor Layer::node_of(const std::shared_ptr<Layer>& layer,
                              const std::vector<SymbolicTensor>& xs, bool shared) {
  std::vector<Shape> shapes;
  for (const SymbolicTensor& x : xs) shapes.push_back(x.shape());
  auto node = std::make_shared<Node>();
  node->layer = layer;
  node->shared_layer = shared;
  node->inputs = xs;
  node->outputs = {layer->output_shape_multi(shapes)};  // throws for shapes that do not fit
  return SymbolicTensor(std::move(node), 0);
}

std::string detail::shapes_string(const std::vector<Shape>& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i)
    out += (i == 0 ? "" : i + 1 == in.size() ? " and " : ", ") + shape_string(in[i]);
  return out;
}

}  // namespace dlrt::nn
