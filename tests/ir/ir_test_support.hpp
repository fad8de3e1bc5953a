// Small builders for IR XML in tests, and helpers for temporary files.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace sqdiff::tools::ir::test {

inline std::string examples_dir() { return SQDIFF_IR_EXAMPLES; }
inline std::string example(const std::string& name) { return examples_dir() + "/" + name; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_text(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// "8,1,6,1" -> "<dim>8</dim><dim>1</dim>..."; "" -> no dims.
inline std::string dims(std::string_view list) {
  std::string out;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    out += "<dim>" + std::string(list.substr(start, comma - start)) + "</dim>";
    start = comma + 1;
  }
  return out;
}

// Each builder puts one element per line, so that tests can predict lines.
inline std::string parameter(int id, const std::string& name, const std::string& shape,
                             const std::string& type = "f32", const std::string& port_dims = "@") {
  return "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"Parameter\" version=\"opset1\">\n" +
         "<data shape=\"" + shape + "\" element_type=\"" + type + "\"/>\n" + "<output>\n<port id=\"0\">" +
         dims(port_dims == "@" ? shape : port_dims) + "</port>\n</output>\n</layer>\n";
}

inline std::string constant(int id, const std::string& name, const std::string& shape, const std::string& type,
                            int64_t offset, int64_t size) {
  return "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"Const\" version=\"opset1\">\n" +
         "<data element_type=\"" + type + "\" shape=\"" + shape + "\" offset=\"" + std::to_string(offset) +
         "\" size=\"" + std::to_string(size) + "\"/>\n" + "<output>\n<port id=\"0\">" + dims(shape) +
         "</port>\n</output>\n</layer>\n";
}

// A two-input op (ports 0 and 1 in, 2 out). `data` is the text inside <data .../>.
inline std::string op(int id, const std::string& name, const std::string& type, const std::string& data,
                      const std::string& a, const std::string& b, const std::string& out) {
  return "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"" + type + "\" version=\"opset1\">\n" +
         (data.empty() ? std::string() : "<data " + data + "/>\n") + "<input>\n<port id=\"0\">" + dims(a) +
         "</port>\n<port id=\"1\">" + dims(b) + "</port>\n</input>\n<output>\n<port id=\"2\">" + dims(out) +
         "</port>\n</output>\n</layer>\n";
}

inline std::string result(int id, const std::string& name, const std::string& shape) {
  return "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"Result\" version=\"opset1\">\n" +
         "<input>\n<port id=\"0\">" + dims(shape) + "</port>\n</input>\n</layer>\n";
}

inline std::string edge(int from_layer, int from_port, int to_layer, int to_port) {
  return "<edge from-layer=\"" + std::to_string(from_layer) + "\" from-port=\"" + std::to_string(from_port) +
         "\" to-layer=\"" + std::to_string(to_layer) + "\" to-port=\"" + std::to_string(to_port) + "\"/>\n";
}

inline std::string net(const std::string& layers, const std::string& edges, int version = 11) {
  return "<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"" + std::to_string(version) + "\">\n<layers>\n" +
         layers + "</layers>\n<edges>\n" + edges + "</edges>\n</net>\n";
}

// The 1-based line of the first occurrence of `needle` in `text` (0 if absent).
inline std::size_t line_of(std::string_view text, std::string_view needle, std::size_t from = 0) {
  const std::size_t at = text.find(needle, from);
  if (at == std::string_view::npos) return 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

// A fresh directory under the system's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("sqdiff_ir_test_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace sqdiff::tools::ir::test
