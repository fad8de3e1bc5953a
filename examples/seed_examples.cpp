// The main job (run by scripts/setup.sh): the examples of the operations' seed
// texts, run through sqdiff and printed in a readable form. Each result is also
// checked against a plain C++ loop; the program exits non-zero on a mismatch.
//
//   1. [256,56] with [256,56], broadcast none   (SquaredDifference-1's first example)
//   2. [8,1,6,1] with [7,1,5], broadcast numpy  (its second example)
//   3. an f16 case: one rounding, overflow to inf
//   4. an error: [3,5,6] with [4,10,12] do not broadcast

#include <sqdiff/sqdiff.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

std::string format_shape(const sqdiff::Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t element_count(const sqdiff::Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  return count;
}

// Compares bit patterns, so that the check is exact (and NaN equals NaN).
template <typename T>
bool same_bits(const T& x, const T& y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

void report_check(const char* what, std::int64_t mismatches, std::int64_t count) {
  if (mismatches == 0) {
    std::printf("   check: all %lld values equal %s\n", static_cast<long long>(count), what);
  } else {
    std::printf("   check: FAILED, %lld of %lld values differ from %s\n",
                static_cast<long long>(mismatches), static_cast<long long>(count), what);
    ++g_failures;
  }
}

void seed_example_none() {
  const sqdiff::Shape shape = {256, 56};
  const std::int64_t n = element_count(shape);
  std::vector<float> a(static_cast<std::size_t>(n));
  std::vector<float> b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 97) * 0.5f;
    b[i] = static_cast<float>(i % 13) - 6.0f;
  }
  const sqdiff::Options none{.broadcast = {.kind = sqdiff::BroadcastKind::none}};
  const sqdiff::Shape out_shape = sqdiff::broadcast_shape(shape, shape, none.broadcast);

  std::printf("1. f32 %s with %s, broadcast none -> %s\n", format_shape(shape).c_str(),
              format_shape(shape).c_str(), format_shape(out_shape).c_str());
  std::vector<float> diff(a.size());
  std::vector<float> square(a.size());
  sqdiff::subtract({a.data(), sqdiff::DType::f32, shape}, {b.data(), sqdiff::DType::f32, shape},
                   {diff.data(), sqdiff::DType::f32, out_shape}, none);
  sqdiff::squared_difference({a.data(), sqdiff::DType::f32, shape},
                             {b.data(), sqdiff::DType::f32, shape},
                             {square.data(), sqdiff::DType::f32, out_shape}, none);

  std::printf("   %-10s %-10s %-10s %-12s %s\n", "index", "a", "b", "subtract", "squared_difference");
  const std::size_t shown[] = {0, 1, 2, 57, a.size() - 1};
  for (std::size_t i : shown) {
    const std::string index =
        format_shape({static_cast<std::int64_t>(i / 56), static_cast<std::int64_t>(i % 56)});
    std::printf("   %-10s %-10g %-10g %-12g %g\n", index.c_str(), static_cast<double>(a[i]),
                static_cast<double>(b[i]), static_cast<double>(diff[i]),
                static_cast<double>(square[i]));
  }

  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    const float sq = d * d;
    if (!same_bits(diff[i], d) || !same_bits(square[i], sq)) ++mismatches;
  }
  report_check("d = a - b and d * d computed in a plain loop", mismatches, n);
}

void seed_example_numpy() {
  const sqdiff::Shape a_shape = {8, 1, 6, 1};
  const sqdiff::Shape b_shape = {7, 1, 5};
  const sqdiff::Shape out_shape = sqdiff::broadcast_shape(a_shape, b_shape);  // numpy by default
  std::printf("\n2. f32 %s with %s, broadcast numpy -> %s\n", format_shape(a_shape).c_str(),
              format_shape(b_shape).c_str(), format_shape(out_shape).c_str());

  std::vector<float> a(static_cast<std::size_t>(element_count(a_shape)));  // a[n,0,h,0] = 6n + h
  std::vector<float> b(static_cast<std::size_t>(element_count(b_shape)));  // b[c,0,w] = (5c + w) / 4
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.25f;
  std::vector<float> diff(static_cast<std::size_t>(element_count(out_shape)));
  std::vector<float> square(diff.size());
  sqdiff::subtract({a.data(), sqdiff::DType::f32, a_shape}, {b.data(), sqdiff::DType::f32, b_shape},
                   {diff.data(), sqdiff::DType::f32, out_shape});
  sqdiff::squared_difference({a.data(), sqdiff::DType::f32, a_shape},
                             {b.data(), sqdiff::DType::f32, b_shape},
                             {square.data(), sqdiff::DType::f32, out_shape});

  // out[n,c,h,w] reads a[n,0,h,0] and b[c,0,w].
  auto out_index = [](int n, int c, int h, int w) { return static_cast<std::size_t>(((n * 7 + c) * 6 + h) * 5 + w); };
  struct Index { int n, c, h, w; };
  const Index shown[] = {{0, 0, 0, 0}, {1, 2, 3, 4}, {3, 6, 5, 0}, {7, 6, 5, 4}};
  std::printf("   %-12s %-12s %-10s %-8s %-8s %-10s %s\n", "out index", "a index", "b index", "a", "b",
              "subtract", "squared_difference");
  for (const Index& x : shown) {
    const std::size_t o = out_index(x.n, x.c, x.h, x.w);
    const std::size_t ia = static_cast<std::size_t>(x.n * 6 + x.h);
    const std::size_t ib = static_cast<std::size_t>(x.c * 5 + x.w);
    const std::string oi = format_shape({x.n, x.c, x.h, x.w});
    const std::string ai = format_shape({x.n, 0, x.h, 0});
    const std::string bi = format_shape({x.c, 0, x.w});
    std::printf("   %-12s %-12s %-10s %-8g %-8g %-10g %g\n", oi.c_str(), ai.c_str(), bi.c_str(),
                static_cast<double>(a[ia]), static_cast<double>(b[ib]), static_cast<double>(diff[o]),
                static_cast<double>(square[o]));
  }

  std::int64_t mismatches = 0;
  for (int n = 0; n < 8; ++n)
    for (int c = 0; c < 7; ++c)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 5; ++w) {
          const float d = a[static_cast<std::size_t>(n * 6 + h)] - b[static_cast<std::size_t>(c * 5 + w)];
          const float sq = d * d;
          const std::size_t o = out_index(n, c, h, w);
          if (!same_bits(diff[o], d) || !same_bits(square[o], sq)) ++mismatches;
        }
  report_check("a plain loop over the broadcast indices", mismatches,
               static_cast<std::int64_t>(diff.size()));
}

void f16_example() {
  const std::vector<float> a_values = {1.5f, 0.1f, -3.0f, 256.0f};
  const float b_value = -0.5f;
  std::vector<sqdiff::float16> a;
  for (float v : a_values) a.emplace_back(v);
  const sqdiff::float16 b(b_value);
  const sqdiff::Shape a_shape = {4};
  const sqdiff::Shape b_shape = {};  // a scalar, broadcast onto every element of a
  std::printf("\n3. f16 %s with %s (a scalar), broadcast numpy -> %s\n", format_shape(a_shape).c_str(),
              format_shape(b_shape).c_str(), format_shape(sqdiff::broadcast_shape(a_shape, b_shape)).c_str());
  std::printf("   f16 widens exactly to f32, computes there, and rounds once to f16:\n");

  std::vector<sqdiff::float16> diff(a.size());
  std::vector<sqdiff::float16> square(a.size());
  sqdiff::subtract({a.data(), sqdiff::DType::f16, a_shape}, {&b, sqdiff::DType::f16, b_shape},
                   {diff.data(), sqdiff::DType::f16, a_shape});
  sqdiff::squared_difference({a.data(), sqdiff::DType::f16, a_shape}, {&b, sqdiff::DType::f16, b_shape},
                             {square.data(), sqdiff::DType::f16, a_shape});

  std::printf("   %-12s %-8s %-12s %s\n", "a (as f16)", "b", "subtract", "squared_difference");
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::printf("   %-12.8g %-8g %-12.8g %.8g\n", static_cast<double>(static_cast<float>(a[i])),
                static_cast<double>(static_cast<float>(b)), static_cast<double>(static_cast<float>(diff[i])),
                static_cast<double>(static_cast<float>(square[i])));
    const float d = static_cast<float>(a[i]) - static_cast<float>(b);
    if (!(diff[i] == sqdiff::float16(d)) || !(square[i] == sqdiff::float16(d * d))) ++mismatches;
  }
  std::printf("   (256.5 squared is 65792.25, above f16's largest finite value 65504: +inf)\n");
  report_check("round_to_f16(a - b) and round_to_f16(d * d) in f32", mismatches,
               static_cast<std::int64_t>(a.size()));
}

void error_example() {
  const sqdiff::Shape a_shape = {3, 5, 6};
  const sqdiff::Shape b_shape = {4, 10, 12};
  std::printf("\n4. f32 %s with %s, broadcast numpy: an error\n", format_shape(a_shape).c_str(),
              format_shape(b_shape).c_str());
  std::vector<float> a(90, 1.0f);
  std::vector<float> b(480, 2.0f);
  std::vector<float> out(480, 7.0f);
  try {
    sqdiff::squared_difference({a.data(), sqdiff::DType::f32, a_shape},
                               {b.data(), sqdiff::DType::f32, b_shape},
                               {out.data(), sqdiff::DType::f32, b_shape});
    std::printf("   FAILED: no sqdiff::Error was thrown\n");
    ++g_failures;
  } catch (const sqdiff::Error& e) {
    std::printf("   sqdiff::Error: %s\n", e.what());
    bool untouched = true;
    for (float v : out) untouched = untouched && v == 7.0f;
    std::printf("   output untouched: %s\n", untouched ? "yes" : "NO");
    if (!untouched) ++g_failures;
  }
}

}  // namespace

int main() {
  try {
    std::string compiled;
    for (const std::string& name : sqdiff::compiled_simd_targets()) {
      compiled += compiled.empty() ? "" : ", ";
      compiled += name;
    }
    std::printf("sqdiff %s, SIMD target %s (compiled: %s)\n\n", sqdiff::kVersion,
                sqdiff::active_simd_target().c_str(), compiled.c_str());
    seed_example_none();
    seed_example_numpy();
    f16_example();
    error_example();
  } catch (const std::exception& e) {
    std::printf("unexpected exception: %s\n", e.what());
    return 1;
  }
  if (g_failures != 0) {
    std::printf("\n%d check(s) FAILED\n", g_failures);
    return 1;
  }
  std::printf("\nall checks passed\n");
  return 0;
}
