// convert_einsum.cc: ONNX Einsum on dlrt's transpose, reshape, batch_matmul, mul and
// reduce_sum.
//
// The equation ("bij,bjk->bik"; without "->" the output is the letters used once, in
// alphabetical order; "..." stands for the same broadcast dims in every operand) is read into
// one label per dim. Then:
//   - two float operands whose shared labels have equal sizes: the labels are sorted into
//     batch (in both and the output), contracted (in both, not the output) and each
//     operand's own (in it and the output); labels of one operand alone that the output
//     drops are summed first. A is transposed to (batch, own_a, contracted) and B to (batch,
//     contracted, own_b), reshaped to (n, M, K) and (n, K, N), multiplied by batch_matmul,
//     and the result reshaped and transposed to the output's order;
//   - otherwise (one operand, more than two, f64 or integers): every operand is transposed
//     and reshaped onto all labels (size 1 where it lacks one), the operands multiplied with
//     broadcasting and the labels the output drops summed (reduce_sum, which takes floats and
//     f64: integer contractions are UNIMPLEMENTED). This materialises the product of every
//     label's size, so it is limited to kMaxBroadcastElements.
// A label repeated within one operand (a diagonal, "ii->i") is UNIMPLEMENTED.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "onnx_import/node_context.hpp"

namespace dlrt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

constexpr int64_t kMaxBroadcastElements = int64_t{1} << 24;

bool is_float(dlrt_dtype d) { return d == DLRT_F32 || d == DLRT_F16 || d == DLRT_BF16; }

struct Equation {
  std::vector<std::string> inputs;  // one label per dim of each operand
  std::string output;
};

// Labels: the equation's letters, and '0'..'7' for the dims "..." stands for (right-aligned,
// so an operand with fewer of them takes the last ones, as NumPy broadcasts).
Equation parse(NodeContext& c, std::string eq) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != c.num_inputs())
    c.invalid(fmt::format("equation '{}' has {} operands; the node has {} inputs", eq, terms.size(),
                          c.num_inputs()));
  size_t ell = 0;  // dims "..." stands for: the most any operand has
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    const size_t letters = terms[i].size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos && letters != size_t(c.rank(i)))
      c.invalid(fmt::format("operand {} ('{}') has {} labels for rank {}", i, terms[i], letters,
                            c.rank(i)));
    if (dots != std::string::npos) {
      if (size_t(c.rank(i)) < letters)
        c.invalid(fmt::format("operand {} ('{}') has rank {}", i, terms[i], c.rank(i)));
      ell = std::max(ell, size_t(c.rank(i)) - letters);
    }
  }
  if (ell > 8) c.unsupported("more than 8 dims behind '...'");
  auto expand = [&](const std::string& term, size_t n_ell) {
    std::string out;
    const size_t dots = term.find("...");
    for (size_t k = 0; k < term.size(); ++k) {
      if (k == dots) {
        for (size_t j = ell - n_ell; j < ell; ++j) out += char('0' + j);
        k += 2;
      } else if (std::isalpha(static_cast<unsigned char>(term[k]))) {
        out += term[k];
      } else {
        c.invalid(fmt::format("equation '{}': '{}' is not a label", eq, term[k]));
      }
    }
    return out;
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    const size_t n_ell = dots == std::string::npos ? 0 : size_t(c.rank(i)) - (terms[i].size() - 3);
    e.inputs.push_back(expand(terms[i], n_ell));
  }
  if (arrow != std::string::npos) {
    e.output = expand(eq.substr(arrow + 2), ell);
  } else {  // implicit: "..." dims, then the letters used once, sorted
    std::map<char, int> count;
    for (const std::string& t : e.inputs)
      for (char l : t) ++count[l];
    for (size_t j = 0; j < ell; ++j) e.output += char('0' + j);
    for (auto [l, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(l))) e.output += l;
  }
  for (const std::string& t : e.inputs)
    for (size_t k = 0; k < t.size(); ++k)
      if (t.find(t[k], k + 1) != std::string::npos)
        c.unsupported(fmt::format("label '{}' repeated within one operand (a diagonal)", t[k]));
  return e;
}

// x (labels `from`) transposed to the order of `to` (a permutation of `from`).
dlrt::Value permute(NodeContext& c, dlrt::Value x, const std::string& from, const std::string& to) {
  if (from == to) return x;
  Ints perm;
  for (char l : to) perm.push_back(static_cast<int64_t>(from.find(l)));
  return c.op("transpose", {x}, {{"perm", perm}});
}

// Sums the labels of `x` that `keep` lacks; returns the labels left (in x's order).
dlrt::Value sum_out(NodeContext& c, dlrt::Value x, std::string* labels, const std::string& keep) {
  Ints axes;
  std::string left;
  for (size_t k = 0; k < labels->size(); ++k) {
    if (keep.find((*labels)[k]) == std::string::npos) axes.push_back(int64_t(k));
    else left += (*labels)[k];
  }
  if (axes.empty()) return x;
  if (!is_float(x.dtype()) && x.dtype() != DLRT_F64)
    c.unsupported(fmt::format("a sum over labels of {} operands (dlrt's reduce_sum takes floats)",
                              dlrt_dtype_name(x.dtype())));
  *labels = left;
  if (left.empty()) return c.op("reduce_sum", {x});
  return c.op("reduce_sum", {x}, {{"axes", axes}});
}

void convert_einsum(NodeContext& c) {
  const Equation e = parse(c, c.attr_string("equation", ""));
  std::map<char, int64_t> size;
  for (size_t i = 0; i < e.inputs.size(); ++i)
    for (size_t k = 0; k < e.inputs[i].size(); ++k) {
      const int64_t d = c.dims(i)[k];
      auto [it, fresh] = size.emplace(e.inputs[i][k], d);
      if (!fresh && it->second != d) {
        if (it->second == 1) it->second = d;  // "..." dims broadcast
        else if (d != 1)
          c.invalid(fmt::format("label '{}' has sizes {} and {}", e.inputs[i][k], it->second, d));
      }
    }
  for (char l : e.output)
    if (size.count(l) == 0) c.invalid(fmt::format("output label '{}' is in no operand", l));

  // Two float operands: batch_matmul.
  if (e.inputs.size() == 2 && is_float(c.dtype(0)) && c.dtype(0) == c.dtype(1)) {
    std::string la = e.inputs[0], lb = e.inputs[1];
    bool equal_sizes = true;
    for (size_t k = 0; k < la.size(); ++k) {
      const size_t j = lb.find(la[k]);
      if (j != std::string::npos && c.dims(0)[k] != c.dims(1)[j]) equal_sizes = false;
    }
    if (equal_sizes) {
      // Labels of one operand that neither the output nor the other operand has: sum first.
      dlrt::Value a = sum_out(c, c.value(0), &la, e.output + lb);
      dlrt::Value b = sum_out(c, c.value(1), &lb, e.output + la);
      std::string batch, contracted, own_a, own_b;
      for (char l : la) {
        const bool in_b = lb.find(l) != std::string::npos,
                   in_out = e.output.find(l) != std::string::npos;
        (in_b ? (in_out ? batch : contracted) : own_a) += l;
      }
      for (char l : lb)
        if (la.find(l) == std::string::npos) own_b += l;
      auto prod = [&](const std::string& ls) {
        int64_t p = 1;
        for (char l : ls) p *= size[l];
        return p;
      };
      a = c.reshape(permute(c, a, la, batch + own_a + contracted),
                    {prod(batch), prod(own_a), prod(contracted)});
      b = c.reshape(permute(c, b, lb, batch + contracted + own_b),
                    {prod(batch), prod(contracted), prod(own_b)});
      dlrt::Value y = c.op("batch_matmul", {a, b});
      std::string labels = batch + own_a + own_b;
      Ints dims;
      for (char l : labels) dims.push_back(size[l]);
      y = c.reshape(y, dims);
      return c.set(0, permute(c, y, labels, e.output));
    }
  }

  // Broadcast product over every label, then the sums.
  std::string all = e.output;
  for (const std::string& t : e.inputs)
    for (char l : t)
      if (all.find(l) == std::string::npos) all += l;
  int64_t total = 1;
  for (char l : all) total *= size[l];
  if (total > kMaxBroadcastElements)
    c.unsupported(fmt::format(
        "an einsum whose labels span {} elements (dlrt's broadcast form makes at most {})", total,
        kMaxBroadcastElements));
  dlrt::Value product;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string order;  // the operand's labels in `all`'s order
    for (char l : all)
      if (e.inputs[i].find(l) != std::string::npos) order += l;
    dlrt::Value x = permute(c, c.value(i), e.inputs[i], order);
    Ints dims;
    for (char l : all)
      dims.push_back(e.inputs[i].find(l) == std::string::npos ? 1 : c.dims(i)[e.inputs[i].find(l)]);
    x = c.reshape(x, dims);
    product = i == 0 ? x : c.op("mul", {product, x});
  }
  std::string labels = all;
  dlrt::Value y = sum_out(c, product, &labels, e.output);
  if (!e.output.empty()) {  // broadcast "..." dims of size 1 in every operand stay 1
    Ints dims;
    for (char l : e.output) dims.push_back(size[l]);
    if (y.dims() != dims) y = c.op("broadcast_to", {y}, {{"shape", dims}});
  }
  c.set(0, y.get() == c.value(0).get() ? c.op("copy", {y}) : y);
}

}  // namespace

void add_einsum_converters(ConverterTable& t) {
  t.add("Einsum", "transpose, reshape, batch_matmul (two float operands) or mul + reduce_sum",
        convert_einsum);
}

}  // namespace dlrt::onnx_import
