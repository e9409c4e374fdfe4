// loop_cut_join.hpp: the cpu plugin's loop kernels for concat, split, slice, slice_grad, pad
// and pad_grad (loop_cut_join.cc). split ... pad_grad are rows of loop_cut_join.cc; concat's
// row is prim_concat.cc's, which runs oneDNN's concat where it has the dtype and these loops
// otherwise.
#pragma once

#include <memory>

#include "../ops.hpp"

namespace dlrt::cpu::loops {

// concat as memcpy of each input's run per row of the output (any dtype; checked before).
std::unique_ptr<Kernel> make_concat_loop(const dlrt_plugin& p, const plugin::OpView& op);

}  // namespace dlrt::cpu::loops
