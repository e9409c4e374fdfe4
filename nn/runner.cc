// runner.cc: Runner, an executable with its feed and fetch tensors (dlrt/nn/runner.hpp). The
// feeds are made on the device each placeholder was placed on, so a run copies nothing in.
#include "dlrt/nn/runner.hpp"

namespace dlrt::nn::detail {

Runner::Runner(const Context& ctx, Graph& g, const std::vector<Value>& placeholders,
               const std::vector<std::string>& names, const std::vector<Value>& outputs,
               const dlrt::CompileOptions& options)
    : exe(g.compile(placeholders, outputs, options)), fetches(outputs.size()) {
  make_feeds(ctx, placeholders, names);
}

void Runner::make_feeds(const Context& ctx, const std::vector<Value>& placeholders,
                        const std::vector<std::string>& names) {
  for (size_t i = 0; i < placeholders.size(); ++i) {
    size_t device = 0;
    bool found = false;
    for (size_t n = 0; n < exe.node_count() && !found; ++n) {
      const NodePlacement p = exe.node_placement(n);
      if (p.name == names[i]) {
        device = ctx.find_device(p.assigned);
        found = true;
      }
    }
    if (!found) throw Error(DLRT_INTERNAL, "nn: placeholder '" + names[i] + "' was not placed");
    feeds.push_back(Tensor::create(ctx, device, placeholders[i].dtype(), placeholders[i].dims()));
  }
}

void Runner::run() {
  std::vector<const Tensor*> in;
  for (const Tensor& t : feeds) in.push_back(&t);
  exe.run(in, fetches);
}

}  // namespace dlrt::nn::detail
