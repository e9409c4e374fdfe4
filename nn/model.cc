// model.cc: Model and Sequential — construction, compile, layers, state and the sessions that
// hold it (dlrt/nn/model.hpp); the custom-step tape of this thread.
#include "dlrt/nn/model.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/plan.hpp"
#include "dlrt/nn/session.hpp"
#include "functional_graph.hpp"
#include "replicated.hpp"

namespace dlrt::nn {

namespace detail {
ModelCaller*& active_tape() {
  thread_local ModelCaller* tape = nullptr;
  return tape;
}
}  // namespace detail

Model::Model(const Context& ctx, const SymbolicTensor& input, const SymbolicTensor& output,
             std::string name)
    : Model(ctx, std::vector<SymbolicTensor>{input}, std::vector<SymbolicTensor>{output},
            std::move(name)) {}

Model::Model(const Context& ctx, const std::vector<SymbolicTensor>& inputs,
             const std::vector<SymbolicTensor>& outputs, std::string name)
    : ctx_(ctx), name_(std::move(name)) {
  graph_ = std::make_unique<detail::FunctionalGraph>(detail::trace_graph(inputs, outputs, name_));
  layers_ = graph_->layers;
}

Model::Model(const Context& ctx, std::string name)
    : ctx_(ctx),
      name_(std::move(name)),
      sequential_(true),
      graph_(std::make_unique<detail::FunctionalGraph>()) {}

Model::~Model() { detach_holder(); }

void Model::set_trainable(bool trainable) {
  for (const auto& l : layers_) l->set_trainable(trainable);
}

Layer& Model::get_layer(const std::string& name) const {
  std::string names;
  for (const auto& l : layers_) {
    if (l->name() == name) return *l;
    names += (names.empty() ? "" : ", ") + l->name();
  }
  throw Error(DLRT_NOT_FOUND, name_ + ": no layer named '" + name + "' (layers: " + names + ")");
}

std::vector<Variable> Model::trainable_variables() {
  ensure_plan("trainable_variables");
  std::vector<Variable> out;
  for (size_t l = 0; l < plan_->layers.size(); ++l)
    for (size_t i : plan_->layer_state[l])
      if (plan_->state[i].weight && plan_->layers[l]->trainable())
        out.push_back({this, plan_->state[i].name});
  return out;
}

void Model::compile_plan(const Optimizer* optimizer, const Loss* loss,
                         const std::vector<std::string>& metrics, const CompileConfig& config) {
  if (layers_.empty()) throw Error(DLRT_FAILED_PRECONDITION, "compile: the model has no layers");
  detach_holder();
  optimizer_.reset();
  loss_.reset();
  if (optimizer) optimizer_ = optimizer->clone();
  if (loss) loss_ = loss->clone();
  metrics_.clear();
  for (const std::string& m : metrics) {
    metrics_.push_back(metric_named(m, loss_.get()));
    if (metrics_.back()->needs_sparse_labels() && !loss_->sparse_labels())
      throw Error(DLRT_INVALID_ARGUMENT, "compile: metric '" + m +
                                             "' needs class labels; the "
                                             "loss " +
                                             loss_->name() + " takes other targets");
  }
  if (!config.loss_weights.empty()) {
    if (config.loss_weights.size() != num_outputs())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "compile: loss_weights has " + std::to_string(config.loss_weights.size()) +
                      " weight" + (config.loss_weights.size() == 1 ? "" : "s") + "; " + name_ +
                      " has " + std::to_string(num_outputs()) + " output" +
                      (num_outputs() == 1 ? "" : "s") + " (" + joined(output_names()) +
                      "): give one weight per output, in that order");
    for (size_t k = 0; k < config.loss_weights.size(); ++k)
      if (!std::isfinite(config.loss_weights[k]))
        throw Error(DLRT_INVALID_ARGUMENT,
                    "compile: loss_weights[" + std::to_string(k) + "] is not finite");
  }
  config_ = config;
  scopes_at_compile_ = scopes_;
  if (!config.device.empty() && config.device != "auto")
    scopes_at_compile_.push_back(config.device);
  for (const std::string& s : scopes_at_compile_) DeviceSpec::parse(s);  // refuse bad specs now
  strategy_.reset();
  strategy_devices_.clear();
  if (const DistributionStrategy* st = detail::current_strategy()) {
    strategy_ = st->impl();
    strategy_devices_ = st->devices();
  }
  plan_.reset();
  session_.reset();
  replicas_.reset();
  if (!sequential_) make_plan(graph_->inputs);
  else if (input_) make_plan({*input_});
}

size_t Model::num_local_replicas() { return strategy_ ? replicas().size() : 1; }

size_t Model::num_inputs() const { return sequential_ ? 1 : graph_->inputs.size(); }

size_t Model::num_outputs() const { return sequential_ ? 1 : graph_->outputs.size(); }

std::vector<std::string> Model::input_names() const {
  return sequential_ || graph_->input_names.empty() ? std::vector<std::string>{"input"}
                                                    : graph_->input_names;
}

std::vector<std::string> Model::output_names() const {
  if (sequential_) return {layers_.empty() ? std::string("output") : layers_.back()->name()};
  const detail::FunctionalGraph& g = *graph_;
  std::vector<std::string> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const size_t s = g.outputs[k];
    std::string n = s < g.inputs.size() ? g.input_names[s]
                                        : g.layers[g.nodes[s - g.inputs.size()].layer]->name();
    while (std::find(out.begin(), out.end(), n) != out.end()) n += "_" + std::to_string(k);
    out.push_back(n);
  }
  return out;
}

Executable& Model::train_executable() {
  if (replicas_ && replicas_->primary().has_split()) return replicas_->primary().grads_executable();
  if (!session_ || !session_->has_train())
    throw Error(DLRT_FAILED_PRECONDITION, "train_executable: fit() has not built a step yet");
  return session_->train_executable();
}

const detail::Plan& Model::plan() const {
  if (!plan_)
    throw Error(DLRT_FAILED_PRECONDITION, name_ +
                                              ": not built: compile() it with an "
                                              "Input layer first, or fit() it");
  return *plan_;
}

std::vector<Value> Model::operator()(const std::vector<Value>& inputs, bool training) {
  if (detail::active_tape() == nullptr)
    throw Error(DLRT_FAILED_PRECONDITION,
                name_ +
                    ": called on graph values outside a step function; a model is called on "
                    "Values inside nn::TrainStep's function (train_step.hpp), on "
                    "SymbolicTensors through its layers, or on data with predict()");
  return detail::active_tape()->call_model(*this, inputs, training);
}

Value Model::operator()(const Value& input, bool training) {
  std::vector<Value> out = (*this)(std::vector<Value>{input}, training);
  if (out.size() != 1)
    throw Error(DLRT_INVALID_ARGUMENT, name_ + " has " + std::to_string(out.size()) +
                                           " outputs; call it with a vector of inputs to get "
                                           "them all");
  return out[0];
}

Sequential* Model::as_sequential() {
  return sequential_ ? static_cast<Sequential*>(this) : nullptr;
}

detail::Session& Model::session() {
  plan();  // throws FAILED_PRECONDITION when not built: a Session needs the plan
  reclaim();
  if (strategy_) return replicas().primary();
  if (!session_) session_ = std::make_unique<detail::Session>(ctx_, plan_);
  return *session_;
}

detail::ReplicaSet& Model::replicas() {
  reclaim();
  if (!replicas_)
    replicas_ = std::make_unique<detail::ReplicaSet>(ctx_, plan_, strategy_, strategy_devices_);
  return *replicas_;
}

std::vector<detail::Session*> Model::all_sessions() {
  if (!strategy_) return {&session()};
  std::vector<detail::Session*> out;
  for (size_t r = 0; r < replicas().size(); ++r) out.push_back(&replicas_->replica(r));
  return out;
}

void Model::reclaim() {
  if (detail::StateHolder* h = holder_) {
    holder_ = nullptr;
    h->give_back(*this);
  }
}

void Model::detach_holder() {
  if (detail::StateHolder* h = holder_) {
    holder_ = nullptr;
    h->detach(*this);
  }
}

void Model::ensure_plan(const std::string& who) {
  if (plan_) return;
  if (sequential_ && !input_)
    throw Error(DLRT_FAILED_PRECONDITION, who + ": " + name_ +
                                              " is not built: give it an Input layer, or "
                                              "compile() and fit() it first");
  compile_plan(nullptr, nullptr, {}, config_);
}

void Model::require_loss(const std::string& who) const {
  if (!optimizer_ || !loss_)
    throw Error(DLRT_FAILED_PRECONDITION, who + ": " + name_ +
                                              " has no optimizer and loss; "
                                              "compile(optimizer, loss) it first");
}

void Model::save_onnx(const std::string& path, const std::vector<dlrt_dtype>& input_dtypes) {
  ensure_plan("save_onnx");  // a model with an Input saves uncompiled, as Keras' does
  const size_t n = plan_->inputs.size();
  if (input_dtypes.size() > 1 && input_dtypes.size() != n)
    throw Error(DLRT_INVALID_ARGUMENT,
                "save_onnx: " + name_ + " has " + std::to_string(n) + " input(s) but " +
                    std::to_string(input_dtypes.size()) +
                    " input dtypes were given; expected one per input, one for all, or none");
  std::vector<dlrt_dtype> dtypes(n);
  for (size_t i = 0; i < n; ++i)
    dtypes[i] = input_dtypes.size() == n   ? input_dtypes[i]
                : input_dtypes.size() == 1 ? input_dtypes[0]
                : detail::model_input_ids(*plan_, i) > 0 ? DLRT_I64
                                                         : DLRT_F32;
  session().save_onnx(path, dtypes);
}

std::vector<Model::NamedValue> Model::state() { return replica_state(0); }

std::vector<Model::NamedValue> Model::replica_state(size_t replica) {
  plan();  // throws when not built
  std::vector<NamedValue> out;
  const std::vector<detail::Session*> sessions = all_sessions();
  if (replica >= sessions.size())
    throw Error(DLRT_OUT_OF_RANGE, "replica_state: replica " + std::to_string(replica) + " of " +
                                       std::to_string(sessions.size()));
  detail::Session& s = *sessions[replica];
  for (size_t i = 0; i < plan_->state.size(); ++i)
    out.push_back(
        {plan_->state[i].name, plan_->state[i].dims, s.graph().read_variable<float>(s.vars()[i])});
  return out;
}

void Model::set_state(const std::vector<NamedValue>& values) {
  plan();
  for (detail::Session* s : all_sessions()) set_state_of(*s, values);
}

void Model::set_state_of(detail::Session& s, const std::vector<NamedValue>& values) {
  for (const NamedValue& v : values) {
    size_t i = 0;
    while (i < plan_->state.size() && plan_->state[i].name != v.name) ++i;
    if (i == plan_->state.size())
      throw Error(DLRT_INVALID_ARGUMENT,
                  "set_state: '" + v.name + "' is not a variable of " + name_);
    if (v.dims != plan_->state[i].dims ||
        static_cast<int64_t>(v.values.size()) != element_count(v.dims))
      throw Error(DLRT_INVALID_ARGUMENT,
                  "set_state: '" + v.name + "' has shape " + dims_string(v.dims) + " (" +
                      std::to_string(v.values.size()) + " values); the model's is " +
                      dims_string(plan_->state[i].dims));
    s.graph().write_variable(s.vars()[i], v.values);
  }
}

Sequential::Sequential(const Context& ctx, std::initializer_list<LayerRef> layers, std::string name)
    : Model(ctx, std::move(name)) {
  for (const LayerRef& l : layers) add(l);
}

void Sequential::add(const LayerRef& ref) {
  std::shared_ptr<Layer> layer = ref.get();
  if (has_plan()) throw Error(DLRT_FAILED_PRECONDITION, "Sequential::add: the model is compiled");
  if (layer->is_input()) {
    if (!layers_.empty() || input_)
      throw Error(DLRT_INVALID_ARGUMENT, "Sequential::add: Input must come first, once");
    input_ = layer->output_shape(Shape{});
    return;
  }
  const int n = counts_[layer->base_name()]++;
  layer->set_name(n == 0 ? layer->base_name() : layer->base_name() + "_" + std::to_string(n));
  layers_.push_back(std::move(layer));
}

}  // namespace dlrt::nn
