// sqdiff::compare (sqdiff/compare.hpp) and `sqdiff compare --json` on the same
// data give the same numbers: each case writes two .npy files, runs the built
// program on them, and reads its JSON's values back (the program writes the
// shortest decimal that reads back as the double, so the bits must match).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "npy.hpp"
#include "sqdiff/compare.hpp"
#include "sqdiff/float16.hpp"

namespace {

using sqdiff::CompareOptions;
using sqdiff::CompareStats;
using sqdiff::DType;
using sqdiff::Shape;

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  pclose(pipe);
  return output;
}

// The raw JSON value of `key` in `json`, searched from the object `within`
// opens ("" for the top level, whose keys come before the nested objects').
std::string value_of(const std::string& json, const std::string& within, const std::string& key) {
  std::size_t from = within.empty() ? 0 : json.find("\"" + within + "\": {");
  EXPECT_NE(from, std::string::npos) << within;
  const std::string marker = "\"" + key + "\": ";
  const std::size_t at = json.find(marker, from);
  EXPECT_NE(at, std::string::npos) << within << "." << key;
  if (at == std::string::npos) return "";
  std::size_t end = at + marker.size();
  int depth = 0;
  for (; end < json.size(); ++end) {
    const char c = json[end];
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) break;
  }
  return json.substr(at + marker.size(), end - at - marker.size());
}

// A double as the program writes it: the number, or null where it is not finite.
void expect_number(const std::string& json, const std::string& within, const std::string& key, double value) {
  const std::string token = value_of(json, within, key);
  if (!std::isfinite(value)) {
    EXPECT_EQ(token, "null") << within << "." << key;
  } else {
    EXPECT_EQ(std::bit_cast<uint64_t>(std::strtod(token.c_str(), nullptr)), std::bit_cast<uint64_t>(value))
        << within << "." << key << ": " << token << " vs " << value;
  }
}

std::string index_text(const CompareStats& s, int64_t position) {
  if (position < 0) return "null";
  std::string text = "[";
  const Shape index = s.index_of(position);
  for (std::size_t i = 0; i < index.size(); ++i) text += (i ? ", " : "") + std::to_string(index[i]);
  return text + "]";
}

void expect_difference(const std::string& json, const std::string& within, const std::string& key,
                       const CompareStats& s, const sqdiff::LargestDifference& m, bool integer) {
  if (m.position < 0) {
    EXPECT_EQ(value_of(json, within, key), "null");
  } else if (integer) {
    EXPECT_EQ(value_of(json, within, key), std::to_string(m.exact)) << within << "." << key;
  } else {
    expect_number(json, within, key, m.value);
  }
  (void)s;
}

struct Case {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::vector<unsigned char> a, b;  // the elements' bytes
  CompareOptions options;
  std::string flags;  // the same options for the program
};

// Options set after construction: GCC 12 warns of an aggregate's std::function
// (CompareOptions::on_progress) "maybe used uninitialized" otherwise.
Case make_case(std::string name, DType dtype, Shape shape, std::vector<unsigned char> a, std::vector<unsigned char> b,
               std::string flags) {
  Case c;
  c.name = std::move(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.a = std::move(a);
  c.b = std::move(b);
  c.flags = std::move(flags);
  return c;
}

template <typename T>
std::vector<unsigned char> bytes_of(const std::vector<T>& values) {
  std::vector<unsigned char> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<Case> cases() {
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> normal(0, 1);
  std::vector<Case> all;
  {  // f32 with NaN and inf, a tolerance
    std::vector<float> a(3000), b(3000);
    for (std::size_t i = 0; i < a.size(); ++i) {
      b[i] = static_cast<float>(normal(rng));
      a[i] = b[i] + static_cast<float>(normal(rng) * 1e-4);
    }
    a[17] = NAN;
    b[400] = INFINITY;
    a[2999] = -INFINITY;
    Case c = make_case("f32", DType::f32, {30, 100}, bytes_of(a), bytes_of(b), "--atol 1e-4 --rtol 1e-3");
    c.options.atol = 1e-4;
    c.options.rtol = 1e-3;
    all.push_back(c);
  }
  {  // f64, all finite, a peak and an MSE gate
    std::vector<double> a(777), b(777);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = normal(rng);
      b[i] = normal(rng);
    }
    Case c = make_case("f64", DType::f64, {7, 111}, bytes_of(a), bytes_of(b), "--peak 2 --fail-above 1.5");
    c.options.peak = 2;
    c.options.fail_above = 1.5;
    all.push_back(c);
  }
  {  // f16, equal_nan
    std::vector<sqdiff::float16> a(500), b(500);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = sqdiff::float16(static_cast<float>(normal(rng)));
      b[i] = i % 50 == 0 ? a[i] : sqdiff::float16(static_cast<float>(normal(rng)));
    }
    a[3] = b[3] = sqdiff::float16(NAN);
    Case c = make_case("f16", DType::f16, {500}, bytes_of(a), bytes_of(b), "--rtol 0.5 --equal-nan");
    c.options.rtol = 0.5;
    c.options.equal_nan = true;
    all.push_back(c);
  }
  {  // i16, the default peak
    std::vector<int16_t> a(1200), b(1200);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<int16_t>(rng());
      b[i] = static_cast<int16_t>(rng());
    }
    all.push_back(make_case("i16", DType::i16, {12, 10, 10}, bytes_of(a), bytes_of(b), ""));
  }
  {  // u64 differences beyond 2^53, a tolerance
    std::vector<uint64_t> a(64), b(64);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = rng();
      b[i] = i % 3 == 0 ? a[i] : rng();
    }
    Case c = make_case("u64", DType::u64, {8, 8}, bytes_of(a), bytes_of(b), "--atol 1e18");
    c.options.atol = 1e18;
    all.push_back(c);
  }
  return all;
}

TEST(CompareApiAgreesWithTheProgram, SameNumbersInItsJson) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("sqdiff_compare_api_" + std::to_string(static_cast<long>(getpid())));
  std::filesystem::create_directories(dir);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string a_path = (dir / (c.name + "_a.npy")).string(), b_path = (dir / (c.name + "_b.npy")).string();
    sqdiff::tools::write_npy(a_path, c.dtype, c.shape, c.a.data());
    sqdiff::tools::write_npy(b_path, c.dtype, c.shape, c.b.data());
    const std::string json = run(std::string(SQDIFF_CLI_PATH) + " compare --json " + c.flags + " " + a_path + " " +
                                 b_path + " 2>&1");
    ASSERT_EQ(json.rfind("{\"a\": ", 0), 0U) << json;
    const CompareStats s =
        sqdiff::compare({c.a.data(), c.dtype, c.shape}, {c.b.data(), c.dtype, c.shape}, c.options);
    const bool integer = c.dtype == DType::i16 || c.dtype == DType::u64;
    EXPECT_EQ(value_of(json, "", "elements"), std::to_string(s.elements));
    expect_number(json, "", "sum_of_squares", s.sum_squares);
    expect_number(json, "", "mse", s.mse);
    expect_number(json, "", "rmse", s.rmse);
    if (s.psnr) expect_number(json, "", "psnr", *s.psnr);
    expect_difference(json, "", "max_abs_diff", s, s.largest, integer);
    EXPECT_EQ(value_of(json, "", "max_abs_diff_index"), index_text(s, s.largest.position));
    EXPECT_EQ(value_of(json, "", "differing"), std::to_string(s.differing));
    EXPECT_EQ(value_of(json, "", "nan"), "{\"a\": " + std::to_string(s.nan_a) + ", \"b\": " + std::to_string(s.nan_b) + "}");
    EXPECT_EQ(value_of(json, "", "inf"), "{\"a\": " + std::to_string(s.inf_a) + ", \"b\": " + std::to_string(s.inf_b) + "}");
    EXPECT_EQ(value_of(json, "first_nan", "a"), index_text(s, s.first_nan_a));
    EXPECT_EQ(value_of(json, "first_inf", "b"), index_text(s, s.first_inf_b));
    EXPECT_EQ(value_of(json, "finite", "elements"), std::to_string(s.finite_elements));
    expect_number(json, "finite", "sum_of_squares", s.finite_sum_squares);
    expect_number(json, "finite", "mse", s.finite_mse);
    expect_difference(json, "finite", "max_abs_diff", s, s.finite_largest, integer);
    EXPECT_EQ(value_of(json, "finite", "max_abs_diff_index"), index_text(s, s.finite_largest.position));
    if (s.tolerance) {
      EXPECT_EQ(value_of(json, "tolerance", "out_of_tolerance"), std::to_string(s.out_of_tolerance));
      EXPECT_EQ(value_of(json, "tolerance", "worst_index"), index_text(s, s.worst.position));
      expect_difference(json, "tolerance", "worst_abs_error", s, s.worst, integer);
      if (s.out_of_tolerance > 0) expect_number(json, "tolerance", "worst_rel_error", s.worst_rel_error);
    }
    EXPECT_EQ(value_of(json, "", "passed"), s.passed ? "true" : "false");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
