// kernel_registry.hpp: how a plugin's kernel files join its kernel table, the one way in each
// in-tree plugin. A kernel file ends with a block of rows for the ops it runs:
//
//   DLRT_REFERENCE_KERNELS(t) { t.push_back({"relu", run_unary, check_float}); }   // reference
//   DLRT_CPU_KERNELS(t) { t.push_back({"relu_grad", check_relu_grad, make<ReluGrad>}); }  // cpu
//   DLRT_CUDA_OPS(t) { t.push_back({"where", &check_where, &create_where}); }             // cuda
//
// and nothing else lists it: no central table, no declaration in a shared header. Each plugin
// macro is DLRT_KERNEL_ROWS over that plugin's row type (its KernelDef / OpEntry, with a
// `const char*` op name member).
//
// How: the block is a function that a namespace-scope initialiser hands to the registry while
// the library is loaded (static initialisation, before dlrt_plugin_init can be called); the
// first lookup runs every block once, sorts the rows by name and never changes them again, so
// lookups are a binary search and thread-safe. The library must keep every kernel object:
// plugins compile their kernel files into the module itself, and the reference kernels are an
// OBJECT library for that reason (a static archive would drop files nothing calls by name).
//
// Two rows for one op name are a bug in the kernel files; `duplicate()` names it, and each
// plugin's plugin_create refuses to load with that message (INTERNAL), so every test that
// loads the plugin catches it.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::plugin {

// R: the plugin's row type; Name: its op-name member.
template <typename R, const char* R::*Name>
class KernelRegistry {
 public:
  using Row = R;
  using AddRows = void (*)(std::vector<Row>& rows);

  // Called by DLRT_KERNEL_ROWS at static initialisation; the return value only gives the
  // initialiser something to hold.
  static bool enlist(AddRows add) {
    blocks().push_back(add);
    return true;
  }

  // Every row of every block, sorted by op name (stable: a duplicate keeps its file order).
  // Never destroyed, so a lookup from another library's exit-time destructor still works.
  static const std::vector<Row>& rows() {
    static const std::vector<Row>* sorted = [] {
      auto* t = new std::vector<Row>();
      for (AddRows add : blocks()) add(*t);
      std::stable_sort(t->begin(), t->end(), [](const Row& a, const Row& b) {
        return std::strcmp(a.*Name, b.*Name) < 0;
      });
      return t;
    }();
    return *sorted;
  }

  // The row of `op`, or nullptr.
  static const Row* find(std::string_view op) {
    const std::vector<Row>& t = rows();
    auto it = std::lower_bound(t.begin(), t.end(), op,
                               [](const Row& r, std::string_view n) { return r.*Name < n; });
    return it != t.end() && (*it).*Name == op ? &*it : nullptr;
  }

  // The first op name with more than one row, or "" when every name is unique.
  static std::string duplicate() {
    const std::vector<Row>& t = rows();
    for (size_t i = 1; i < t.size(); ++i)
      if (std::strcmp(t[i - 1].*Name, t[i].*Name) == 0) return t[i].*Name;
    return "";
  }

 private:
  // Made on first use, so it exists whichever initialiser runs first; never destroyed.
  static std::vector<AddRows>& blocks() {
    static auto* b = new std::vector<AddRows>();
    return *b;
  }
};

}  // namespace dlrt::plugin

#define DLRT_KERNEL_ROWS_CAT2(a, b) a##b
#define DLRT_KERNEL_ROWS_CAT(a, b) DLRT_KERNEL_ROWS_CAT2(a, b)
// DLRT_KERNEL_ROWS(Registry, t) { ...t.push_back(row)... }: a block of rows for Registry, at
// namespace scope (any namespace). Several blocks may share a file.
#define DLRT_KERNEL_ROWS(Registry, rows)                                                          \
  static void DLRT_KERNEL_ROWS_CAT(dlrt_kernel_rows_,                                             \
                                   __LINE__)(std::vector<typename Registry::Row> & rows);         \
  [[maybe_unused]] static const bool DLRT_KERNEL_ROWS_CAT(dlrt_kernel_rows_enlisted_, __LINE__) = \
      Registry::enlist(&DLRT_KERNEL_ROWS_CAT(dlrt_kernel_rows_, __LINE__));                       \
  static void DLRT_KERNEL_ROWS_CAT(dlrt_kernel_rows_,                                             \
                                   __LINE__)(std::vector<typename Registry::Row> & rows)
