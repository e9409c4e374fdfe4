// pass_list.hpp: the passes of the stage, one file each (passes.hpp describes them and their
// order; passes.cc runs them). Each walks the live nodes of the rewrite, replaces the anchors
// of the patterns it finds (rewrite.hpp) and logs each change. Private to core/passes.
#pragma once

#include "passes/rewrite.hpp"

namespace dlrt::core::passes {

void fold_batch_norm(Rewrite& rw);       // fold_batch_norm.cc
void fuse_bias_activation(Rewrite& rw);  // fuse_bias_activation.cc
void fuse_residual_tail(Rewrite& rw);    // fuse_residual_tail.cc
void fold_constants(Rewrite& rw);        // fold_constants.cc

}  // namespace dlrt::core::passes
