// kernel_choices.cc: the names and the one-line account of the cpu plugin's kernel choices.
#include "kernel_choices.hpp"

#include <cstdio>

namespace dlrt::cpu {

const char* choice_pass_name(ChoicePass pass) {
  switch (pass) {
    case ChoicePass::forward:
      return "forward";
    case ChoicePass::backward_data:
      return "backward_data";
    case ChoicePass::backward_filter:
      return "backward_filter";
  }
  return "?";
}

const char* pair_class_name(int pair_class) { return pair_class == 0 ? "few" : "many"; }

std::string KernelChoices::describe() const {
  std::string out;
  for (int pass = 0; pass < kChoicePasses; ++pass)
    for (int cls = 0; cls < kPairClasses; ++cls) {
      const WinogradVerdict& v = winograd[pass][cls];
      if (!v.measured) continue;
      const bool dlrt = v.dlrt_wins;
      char line[200];
      std::snprintf(line, sizeof line,
                    "conv3x3 %s, %s 1024 channel pairs: %s, %.0f us against %s %.0f us",
                    choice_pass_name(static_cast<ChoicePass>(pass)), cls == 0 ? "<=" : ">",
                    dlrt ? "dlrt winograd" : "oneDNN direct", dlrt ? v.dlrt_us : v.onednn_us,
                    dlrt ? "oneDNN direct" : "dlrt winograd", dlrt ? v.onednn_us : v.dlrt_us);
      out += (out.empty() ? "" : "; ") + std::string(line) +
             (v.tie ? " (a tie: the rule's choice)" : "");
    }
  return out;
}

}  // namespace dlrt::cpu
