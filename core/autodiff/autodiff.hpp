// autodiff.hpp: reverse-mode gradients as ops in the same graph (docs/design.md section 4).
//
// gradients(loss, wrt) walks the nodes `loss` depends on in reverse topological order,
// applying one rule per op (core/autodiff/rules_*.cc) that turns the gradient of an op's
// outputs into gradients of its inputs, summing (add) where a value feeds several consumers.
// New nodes get is_gradient = true and inherit the requested device of the op they
// differentiate (so device scopes apply to the backward pass too, as in TensorFlow).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace dlrt::core {

// `loss` must be a scalar (rank 0, or all dims 1) float. A `wrt` value loss does not depend
// on gets a zero gradient (fill). Throws Error: INVALID_ARGUMENT (loss not scalar float),
// UNIMPLEMENTED naming an op on the path that has no rule.
std::vector<ValueRef> gradients(Graph& graph, ValueRef loss, const std::vector<ValueRef>& wrt);

// The ops that have a gradient rule (for tests: every differentiable op of the registry).
std::vector<std::string> ops_with_gradient_rules();

}  // namespace dlrt::core
