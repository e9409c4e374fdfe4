// lt_support.hpp: what the cuBLASLt kernels (matmul.cc, batch_matmul.cc) share: the GPU's
// shared cuBLASLt handle, and the algorithm choice — the heuristic's first algorithm for
// operands aligned to a given number of bytes (16 for the arena's 64-byte-aligned buffers,
// where cuBLASLt's vectorised kernels apply; 4 for pointers handed out at an offset).
#pragma once

#include <cublasLt.h>

#include <string>

#include "op_support.hpp"
#include "shared_handle.hpp"

namespace dlrt::cuda {

inline constexpr size_t kLtMaxWorkspace = size_t(32) << 20;  // bytes a heuristic may ask for

struct LtChoice {
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

// The current GPU's cuBLASLt handle (made on first use, shared by every matmul kernel on it).
inline SharedHandle<cublasLtHandle_t> lt_handle() {
  return SharedHandle<cublasLtHandle_t>::for_current_device(
      [] {
        cublasLtHandle_t h = nullptr;
        CUBLAS_CHECK(cublasLtCreate(&h));
        return h;
      },
      [](cublasLtHandle_t h) { cublasLtDestroy(h); });
}

// The heuristic's first algorithm for D = first . second (C = D in place) with operands
// aligned to `align` bytes; UNIMPLEMENTED naming `op` when cuBLASLt has none.
inline LtChoice lt_heuristic(SharedHandle<cublasLtHandle_t>& lt, cublasLtMatmulDesc_t desc,
                             cublasLtMatrixLayout_t first, cublasLtMatrixLayout_t second,
                             cublasLtMatrixLayout_t result, uint32_t align, const std::string& op) {
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t max_ws = kLtMaxWorkspace;
  cublasLtMatmulHeuristicResult_t found_result{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws);
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align);
  auto held = lt.lock();
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt, desc, first, second, result, result, pref, 1,
                                        &found_result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  CUBLAS_CHECK(st);
  if (found < 1 || found_result.state != CUBLAS_STATUS_SUCCESS)
    plugin::fail(DLRT_UNIMPLEMENTED, "cuda: " + op +
                                         ": cuBLASLt has no algorithm for this shape with " +
                                         std::to_string(align) + "-byte aligned operands");
  return {found_result.algo, found_result.workspaceSize};
}

}  // namespace dlrt::cuda
