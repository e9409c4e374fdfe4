// model_data.cc: Model's checks of the arrays given to fit, evaluate and predict
// (dlrt/nn/model.hpp).
#include "dlrt/nn/model.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/plan.hpp"
#include "functional_graph.hpp"

namespace dlrt::nn {

void Model::check_ids(const Array& x, const std::string& xn, int64_t ids, const std::string& who) {
  if (x.dtype() != DLRT_I32 && x.dtype() != DLRT_I64)
    throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " is " + dtype_name(x.dtype()) +
                                           "; the model starts with an Embedding, which takes "
                                           "i32 or i64 ids");
  const size_t n = x.bytes().size() / dtype_size(x.dtype());
  const size_t per_sample = n / static_cast<size_t>(x.rows());
  for (size_t i = 0; i < n; ++i) {
    int64_t id;
    if (x.dtype() == DLRT_I32) {
      int32_t v;
      std::memcpy(&v, x.data() + i * sizeof v, sizeof v);
      id = v;
    } else {
      std::memcpy(&id, x.data() + i * sizeof id, sizeof id);
    }
    if (id < 0 || id >= ids)
      throw Error(DLRT_INVALID_ARGUMENT,
                  who + ": " + xn + " holds id " + std::to_string(id) + " (sample " +
                      std::to_string(i / per_sample) + ", element " +
                      std::to_string(i % per_sample) + "), outside [0, " + std::to_string(ids) +
                      "): the Embedding's input_dim is " + std::to_string(ids));
  }
}

std::string Model::array_name(const char* kind, size_t i, size_t count) {
  return count == 1 ? std::string(kind) : std::string(kind) + "[" + std::to_string(i) + "]";
}

std::string Model::joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void Model::check_data(const detail::ArrayRefs& xs, const detail::ArrayRefs* ys,
                       const std::string& who) {
  const size_t ni = num_inputs(), no = num_outputs();
  if (xs.size() != ni)
    throw Error(DLRT_INVALID_ARGUMENT, who + ": " + std::to_string(xs.size()) + " x array" +
                                           (xs.size() == 1 ? "" : "s") + " given; " + name_ +
                                           " has " + std::to_string(ni) + " input" +
                                           (ni == 1 ? "" : "s") + " (" + joined(input_names()) +
                                           "): give one array per input, in that order");
  if (ys != nullptr && ys->size() != no)
    throw Error(DLRT_INVALID_ARGUMENT, who + ": " + std::to_string(ys->size()) + " y array" +
                                           (ys->size() == 1 ? "" : "s") + " given; " + name_ +
                                           " has " + std::to_string(no) + " output" +
                                           (no == 1 ? "" : "s") + " (" + joined(output_names()) +
                                           "): give one array of targets per output, in that "
                                           "order");
  for (size_t i = 0; i < ni; ++i)
    if (xs[i]->empty())
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + array_name("x", i, ni) + " is empty");
  if (ys != nullptr) require_loss(who);            // fit, evaluate; predict needs no compile()
  if (!plan_) make_plan({xs[0]->sample_shape()});  // a Sequential without Input: one input
  const std::vector<std::string> inames = input_names();
  for (size_t i = 0; i < ni; ++i) {
    const Array& x = *xs[i];
    const std::string xn = array_name("x", i, ni);
    const std::string takes =
        ni == 1 ? "the model takes "
                : "the model's input " + std::to_string(i) + " (" + inames.at(i) + ") takes ";
    if (x.sample_shape() != plan_->inputs.at(i))
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " has samples of shape " +
                                             shape_string(x.sample_shape()) + "; " + takes +
                                             shape_string(plan_->inputs[i]));
    if (i > 0 && x.rows() != xs[0]->rows())
      throw Error(DLRT_INVALID_ARGUMENT,
                  who + ": " + xn + " has " + std::to_string(x.rows()) + " samples but x[0] has " +
                      std::to_string(xs[0]->rows()) + "; every array needs one row per sample");
    if (const int64_t ids = detail::model_input_ids(*plan_, i); ids > 0) {
      check_ids(x, xn, ids, who);  // Embedding first: i32/i64 ids, each in [0, ids)
    } else if (x.dtype() != DLRT_U8 && x.dtype() != DLRT_F32) {
      throw Error(DLRT_INVALID_ARGUMENT, who + ": " + xn + " is " + dtype_name(x.dtype()) +
                                             "; expected u8 (images, scaled by 1/255) or f32");
    }
  }
  if (ys == nullptr) return;
  const std::vector<std::string> onames = output_names();
  for (size_t k = 0; k < no; ++k) {
    const Array& y = *(*ys)[k];
    if (no == 1) {  // the messages of a model of one output, as they always were
      if (y.rows() != xs[0]->rows())
        throw Error(DLRT_INVALID_ARGUMENT, who + ": x has " + std::to_string(xs[0]->rows()) +
                                               " samples but y has " + std::to_string(y.rows()));
      plan_->loss->check_targets(y, output_shapes_[0]);
      continue;
    }
    const std::string yn = array_name("y", k, no);
    if (y.empty()) throw Error(DLRT_INVALID_ARGUMENT, who + ": " + yn + " is empty");
    if (y.rows() != xs[0]->rows())
      throw Error(DLRT_INVALID_ARGUMENT,
                  who + ": " + yn + " has " + std::to_string(y.rows()) + " samples but x[0] has " +
                      std::to_string(xs[0]->rows()) + "; every array needs one row per sample");
    try {
      plan_->loss->check_targets(y, output_shapes_[k]);
    } catch (const Error& e) {
      throw Error(e.code(), who + ": " + yn + " (targets of output " + std::to_string(k) + ", " +
                                onames.at(k) + "): " + e.message());
    }
  }
}

}  // namespace dlrt::nn
