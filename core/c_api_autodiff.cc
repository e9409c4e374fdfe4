// c_api_autodiff.cc: dlrt_graph_gradients, the C face of core::gradients (core/autodiff).
//
// A thin shell like the other c_api*.cc files: NULL checks, out-parameters reset on entry,
// one call into the core, every exception turned into a dlrt_status*. On failure the graph
// is unchanged (gradients() checks the whole request before adding a node).
#include <dlrt/dlrt.h>

#include <fmt/format.h>

#include <vector>

#include "autodiff/autodiff.hpp"
#include "graph/graph_handle.hpp"
#include "status.hpp"

DLRT_API dlrt_status* dlrt_graph_gradients(dlrt_graph* graph, dlrt_value loss,
                                           const dlrt_value* wrt, size_t num_wrt,
                                           dlrt_value* out_grads) {
  try {
    using dlrt::core::fail;
    if (out_grads != nullptr)
      for (size_t i = 0; i < num_wrt; ++i) out_grads[i] = DLRT_INVALID_VALUE;
    if (graph == nullptr) fail(DLRT_INVALID_ARGUMENT, "dlrt_graph_gradients: graph is NULL");
    if (num_wrt > 0 && wrt == nullptr)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_graph_gradients: num_wrt is {} but wrt is NULL", num_wrt));
    if (num_wrt > 0 && out_grads == nullptr)
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_graph_gradients: num_wrt is {} but out_grads is NULL", num_wrt));
    std::vector<dlrt::core::ValueRef> values;
    values.reserve(num_wrt);
    for (size_t i = 0; i < num_wrt; ++i) values.push_back(dlrt::core::from_c(wrt[i]));
    std::vector<dlrt::core::ValueRef> grads =
        dlrt::core::gradients(*graph, dlrt::core::from_c(loss), values);
    for (size_t i = 0; i < num_wrt; ++i) out_grads[i] = dlrt::core::to_c(grads[i]);
    return nullptr;
  } catch (...) {
    return dlrt::core::status_from_current_exception();
  }
}
