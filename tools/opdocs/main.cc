// dlrt-opdocs: keeps docs/ops.md's op tables equal to the op schema (core/ops/op_docs.hpp).
//
//   dlrt-opdocs --print             the tables, to stdout
//   dlrt-opdocs --check docs/ops.md exit 1, saying so, when the file's tables are not the schema's
//   dlrt-opdocs --write docs/ops.md rewrite the tables in place (`make docs`)
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "ops/op_docs.hpp"

namespace {

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return static_cast<bool>(in) || in.eof();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Keeps docs/ops.md's op tables equal to the op schema (core/ops)"};
  std::string check, write;
  bool print = false;
  app.add_flag("--print", print, "print the tables");
  app.add_option("--check", check, "fail when this file's tables differ from the schema");
  app.add_option("--write", write, "rewrite this file's tables from the schema");
  CLI11_PARSE(app, argc, argv);
  if (print) std::cout << dlrt::ops::op_table_markdown();
  for (const std::string& path : {check, write}) {
    if (path.empty()) continue;
    std::string text;
    if (!read_file(path, &text)) {
      std::cerr << "dlrt-opdocs: cannot read " << path << "\n";
      return 2;
    }
    auto updated = dlrt::ops::with_op_table(text);
    if (!updated.ok()) {
      std::cerr << "dlrt-opdocs: " << path << ": " << updated.status().message() << "\n";
      return 2;
    }
    if (&path == &check) {
      if (*updated != text) {
        std::cerr << "dlrt-opdocs: " << path << ": the op tables differ from the op schema "
                  << "(core/ops); run `make docs` (dlrt-opdocs --write " << path << ")\n";
        return 1;
      }
      std::cout << "dlrt-opdocs: " << path << " matches the op schema\n";
    } else if (*updated != text) {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << *updated;
      if (!out) {
        std::cerr << "dlrt-opdocs: cannot write " << path << "\n";
        return 2;
      }
      std::cout << "dlrt-opdocs: rewrote the op tables of " << path << "\n";
    }
  }
  if (!print && check.empty() && write.empty()) std::cout << app.help();
  return 0;
}
