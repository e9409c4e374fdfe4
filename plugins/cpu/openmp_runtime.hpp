// openmp_runtime.hpp: the OpenMP runtimes the cpu plugin's threads come from, behind one
// interface with a file per system (openmp_runtime_posix.cc, openmp_runtime_windows.cc).
//
// Linux: one runtime. Debian's oneDNN and the plugin's own loop kernels both use GNU libgomp,
// so omp_set_num_threads on the calling thread sets the team size of both.
// Windows: two. The plugin's loops use mingw's libgomp (linked into the plugin DLL), while
// PyPI's dnnl.dll is built with MSVC and threads with Microsoft's runtime (vcomp140.dll).
// The loops pass their team size explicitly (num_threads(n)); oneDNN's comes from vcomp's own
// omp_set_num_threads, which the Windows file finds in the loaded vcomp140.dll.
#pragma once

namespace dlrt::cpu {

// Keeps the OpenMP runtimes mapped for the life of the process (called at plugin creation).
// Their worker threads outlive every parallel region: they spin, then sleep, inside the
// runtime. If the host unloaded the plugin (a context destroyed right after a training step),
// the runtime's code would be unmapped under threads still running it, and one of those
// threads, not ours, would crash the program. Unloading the plugin and oneDNN stays safe, as
// no worker runs their code outside a parallel region. A failure is logged, not fatal.
void pin_openmp_runtimes();

// The thread count oneDNN's primitives use when created or run on the calling thread
// (omp_get_max_threads / omp_set_num_threads of oneDNN's runtime).
int onednn_max_threads();
void set_onednn_threads(int threads);

// Sets oneDNN's thread count on the calling thread for the scope and restores it: what every
// kernel that runs oneDNN code (its primitives, or dnnl_sgemm from a loop kernel) wraps the
// run in, so the plugin's `threads` option holds for it.
class OnednnThreadScope {
 public:
  explicit OnednnThreadScope(int threads)
      : saved_(onednn_max_threads()), set_(threads > 0 && threads != saved_) {
    if (set_) set_onednn_threads(threads);
  }
  ~OnednnThreadScope() {
    if (set_) set_onednn_threads(saved_);
  }
  OnednnThreadScope(const OnednnThreadScope&) = delete;
  OnednnThreadScope& operator=(const OnednnThreadScope&) = delete;

 private:
  int saved_;
  bool set_;
};

}  // namespace dlrt::cpu
