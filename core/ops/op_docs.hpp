// core/ops/op_docs.hpp: the op tables of docs/ops.md, made from the schema.
//
// docs/ops.md holds the generated tables between two marker lines; `dlrt-opdocs --write`
// (tools/opdocs, `make docs`) rewrites that part and the CTest test `docs.op_table`
// (`dlrt-opdocs --check`) fails while the file and the schema disagree. So a new op in the
// schema is documented by running one command, not by editing a table by hand.
#pragma once

#include <string>

#include "status.hpp"

namespace dlrt::ops {

inline constexpr const char* kOpTableBegin =
    "<!-- BEGIN OP TABLE: generated from core/ops by `make docs` (tools/opdocs); do not edit -->";
inline constexpr const char* kOpTableEnd = "<!-- END OP TABLE -->";

// The tables, one per family, as Markdown (ends with a newline; markers not included).
std::string op_table_markdown();

// `document` with the text between its markers replaced by op_table_markdown(), or
// INVALID_ARGUMENT when a marker is missing or out of order.
Result<std::string> with_op_table(const std::string& document);

}  // namespace dlrt::ops
