// checkpoint.cc: Model::save_weights and load_weights over safetensors (dlrt/nn/checkpoint.hpp).
#include "dlrt/nn/checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/plan.hpp"

namespace dlrt::nn {

void Model::save_weights(const std::string& path) {
  const std::vector<NamedValue> values = state();
  std::vector<SafeTensorView> tensors;
  for (const NamedValue& v : values)
    tensors.push_back({v.name, DLRT_F32, v.dims, v.values.data(), v.values.size() * sizeof(float)});
  const float steps =
      plan_->iterations == detail::kNoStateVar ? 0.f : values[plan_->iterations].values.at(0);
  write_safetensors(path, tensors,
                    {{"format", kCheckpointFormat},
                     {"model", name_},
                     {"epoch", std::to_string(epoch_)},
                     {"step", std::to_string(static_cast<int64_t>(steps))},
                     {"seed", std::to_string(config_.seed)},
                     {"optimizer", optimizer_ ? optimizer_->config() : "none"},
                     {"loss", loss_ ? loss_->name() : "none"}});
}

void Model::load_weights(const std::string& path) {
  plan();  // the model must be built: the file is checked against its variables
  const SafeTensors file = SafeTensors::open(path);
  auto meta = file.metadata("format");
  if (meta && *meta != kCheckpointFormat)
    throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "' has format '" + *meta +
                                           "'; expected '" + kCheckpointFormat + "'");
  std::vector<NamedValue> values;
  for (const SafeTensorView& t : file.entries()) {
    if (t.dtype != DLRT_F32)
      throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "': tensor '" + t.name +
                                             "' is " + dtype_name(t.dtype) + "; expected f32");
    NamedValue v{t.name, t.dims, std::vector<float>(t.bytes / sizeof(float))};
    if (!v.values.empty()) std::memcpy(v.values.data(), t.data, v.values.size() * sizeof(float));
    values.push_back(std::move(v));
  }
  // With DLRT_CHECK_NUMERICS on, a NaN or Inf in the file is refused before anything is
  // written (the model keeps its values), naming the tensor and the element.
  bool check_numerics = false;
  for (const Setting& s : ctx_.settings())
    if (s.name == "DLRT_CHECK_NUMERICS") check_numerics = s.value == "1";
  if (check_numerics)
    for (const NamedValue& v : values)
      for (size_t i = 0; i < v.values.size(); ++i)
        if (!std::isfinite(v.values[i]))
          throw Error(DLRT_INVALID_ARGUMENT,
                      "load_weights: '" + path + "': tensor '" + v.name + "' holds " +
                          (std::isnan(v.values[i]) ? "NaN" : "Inf") + " at element " +
                          std::to_string(i) + " of " + std::to_string(v.values.size()) +
                          " (DLRT_CHECK_NUMERICS is on); nothing was loaded");
  // Every trainable weight must be there; slots and the step count may be absent (a file of
  // weights only), and then keep their values.
  for (const detail::StateVar& s : plan_->state) {
    if (!s.weight) continue;  // frozen layers' weights too
    bool found = false;
    for (const NamedValue& v : values) found |= v.name == s.name;
    if (!found)
      throw Error(DLRT_INVALID_ARGUMENT, "load_weights: '" + path + "' has no tensor '" + s.name +
                                             "' " + dims_string(s.dims) + ", a weight of " + name_);
  }
  set_state(values);  // refuses unknown names and wrong shapes, naming them
  auto parse = [&](const char* key, int64_t fallback) -> int64_t {
    auto text = file.metadata(key);
    if (!text) return fallback;
    try {
      size_t used = 0;
      const long long v = std::stoll(*text, &used);
      if (used == text->size() && v >= 0) return v;
    } catch (const std::exception&) {
    }
    throw Error(DLRT_DATA_LOSS, "load_weights: '" + path + "': metadata " + key + " = '" + *text +
                                    "' is not a non-negative integer");
  };
  epoch_ = parse("epoch", 0);
  if (file.metadata("seed")) {
    auto seed_text = *file.metadata("seed");
    try {
      size_t used = 0;
      const unsigned long long s = std::stoull(seed_text, &used);
      if (used != seed_text.size()) throw std::invalid_argument("trailing");
      config_.seed = s;
      plan_->seed = s;
    } catch (const std::exception&) {
      throw Error(DLRT_DATA_LOSS, "load_weights: '" + path + "': metadata seed = '" + seed_text +
                                      "' is not an unsigned integer");
    }
  }
}

}  // namespace dlrt::nn
