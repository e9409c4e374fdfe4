// reduce.hpp: element types and the reduction arithmetic of all_reduce (reduce.cc).
//
// The arithmetic is done here, by the plugin, not by MPI_Allreduce: rank 0 folds the ranks'
// buffers one after another in rank order, acc = ((x0 op x1) op x2) ..., so the result has
// the same bits whatever the transport, the message sizes or the MPI library's algorithm.
#pragma once

#include <dlrt/types.h>

#include <cstddef>
#include <string>

namespace dlrt::mpi {

// Bytes per element of `dtype`; 0 for a value that is not a dlrt_dtype.
size_t dtype_size(int32_t dtype);
// "f32", "i64", ... (types.h's dlrt_dtype_name); "dtype 42" for a value that is not one.
std::string dtype_name(int32_t dtype);
// "SUM", "AVG", ...; "reduce_op 42" for a value that is not one.
std::string reduce_op_name(int32_t op);

// Whether reduce_into supports (dtype, op): SUM, PROD, MAX and MIN of F32, F64, I32 and I64,
// and AVG of F32 and F64. Integer SUM and PROD wrap around (two's complement) on overflow.
bool reduce_supported(int32_t dtype, int32_t op);

// acc[i] = acc[i] op in[i] for i < count. Requires reduce_supported(dtype, op).
void reduce_into(void* acc, const void* in, size_t count, int32_t dtype, int32_t op);

// The last step of AVG: acc[i] /= nranks (F32, F64 only). No-op for every other op.
void finish_reduce(void* acc, size_t count, int32_t dtype, int32_t op, int nranks);

}  // namespace dlrt::mpi
