// graph_handle.hpp: what a dlrt_graph is inside — the core::Graph itself, as dlrt_context is
// the Context. The C API (c_api_graph.cc), the executor (dlrt_graph_compile) and autodiff
// (dlrt_graph_gradients) include this to turn the opaque handle into the Graph.
//
// Ownership: made by dlrt_graph_create, freed by dlrt_graph_destroy, which frees the
// variables' storage too; the graph's context and the graph's executables must outlive /
// be destroyed before it, as dlrt.h says.
#pragma once

#include <dlrt/dlrt.h>

#include "graph/graph.hpp"

struct dlrt_graph : dlrt::core::Graph {
  using dlrt::core::Graph::Graph;
};
