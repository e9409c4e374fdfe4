// run_plan_scopes.cc: Scopes, a plan's device scopes pushed around every build of it
// (dlrt/nn/run_plan.hpp; run_plan itself is in session_run_plan.cc).
#include <memory>
#include <string>
#include <vector>

#include "dlrt/nn/run_plan.hpp"

namespace dlrt::nn::detail {

Scopes::Scopes(Graph& g, const std::vector<std::string>& specs) {
  for (const std::string& s : specs) scopes_.push_back(std::make_unique<dlrt::DeviceScope>(g, s));
}

Scopes::~Scopes() {
  while (!scopes_.empty()) scopes_.pop_back();  // innermost first
}

}  // namespace dlrt::nn::detail
