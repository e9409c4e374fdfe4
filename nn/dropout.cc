// dropout.cc: Dropout (dlrt/nn/dropout.hpp).
#include "dlrt/nn/dropout.hpp"

namespace dlrt::nn {

Dropout::Dropout(double rate) : rate_(rate) {
  if (!(rate >= 0.0 && rate < 1.0))
    throw Error(DLRT_INVALID_ARGUMENT, "Dropout: rate must be in [0, 1)");
}

std::shared_ptr<Layer> Dropout::clone() const { return std::make_shared<Dropout>(*this); }

std::string Dropout::type() const { return "Dropout"; }

std::string Dropout::base_name() const { return "dropout"; }

Shape Dropout::output_shape(const Shape& in) const { return in; }

Value Dropout::call(CallContext& c, Value x, const std::vector<Value>&) const {
  if (!c.training || rate_ == 0.0) return x;
  return c.graph.op1("dropout", {x},
                     {{"rate", rate_}, {"seed", static_cast<int64_t>(derive_seed(c.seed, name_))}},
                     c.node(name_));
}

}  // namespace dlrt::nn
