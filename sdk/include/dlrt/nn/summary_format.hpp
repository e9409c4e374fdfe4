// dlrt/nn/summary_format.hpp: the text layout of Keras' model.summary() (print_summary):
// fixed-width rows whose fields are cut at given positions, and counts with thousands commas
// (namespace nn::detail; Model::summary in model_impl.hpp prints with them).
#ifndef DLRT_NN_SUMMARY_FORMAT_HPP_
#define DLRT_NN_SUMMARY_FORMAT_HPP_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace dlrt::nn::detail {

// One row: field i ends at positions[i] (cut or padded with spaces), and the character
// before each next field is a space, as Keras' print_row.
inline void summary_row(std::ostream& out, const std::vector<std::string>& fields,
                        const std::vector<size_t>& positions) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line = line.substr(0, line.size() - 1) + " ";
    line += fields[i];
    line = line.substr(0, positions[i]);
    line += std::string(positions[i] - line.size(), ' ');
  }
  out << line << "\n";
}

// 93322 -> "93,322".
inline std::string with_commas(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace dlrt::nn::detail

#endif  // DLRT_NN_SUMMARY_FORMAT_HPP_
