// Checking a kernel's output against a reference, as an engine's test does:
// a float32 softmax (the kernel under test) against the same softmax in f64
// rounded once to f32 (the reference), with NumPy's allclose tolerances.
// sqdiff::compare gives the verdict and, when it fails, where and by how much.
#include <cmath>
#include <cstdio>
#include <vector>

#include "sqdiff/compare.hpp"

// The kernel under test: softmax over each row of [rows, cols], in f32.
std::vector<float> softmax_f32(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* in = &x[static_cast<std::size_t>(r * cols)];
    float* out = &y[static_cast<std::size_t>(r * cols)];
    float peak = in[0], sum = 0;
    for (int c = 1; c < cols; ++c) peak = std::fmax(peak, in[c]);
    for (int c = 0; c < cols; ++c) sum += out[c] = std::exp(in[c] - peak);
    for (int c = 0; c < cols; ++c) out[c] /= sum;
  }
  return y;
}

// The reference: the same in f64, each result rounded once to f32.
std::vector<float> softmax_reference(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* in = &x[static_cast<std::size_t>(r * cols)];
    double peak = in[0], sum = 0;
    for (int c = 1; c < cols; ++c) peak = std::fmax(peak, in[c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(in[c] - peak);
    for (int c = 0; c < cols; ++c) y[static_cast<std::size_t>(r * cols + c)] = static_cast<float>(std::exp(in[c] - peak) / sum);
  }
  return y;
}

// One check: passes, or says how many elements are out of tolerance and the worst one.
bool check(const char* what, const std::vector<float>& out, const std::vector<float>& ref, int rows, int cols) {
  sqdiff::CompareOptions options;
  options.atol = 1e-6;  // |out - ref| <= atol + rtol * |ref| for every element
  options.rtol = 1e-4;
  const sqdiff::ConstTensorView actual{out.data(), sqdiff::DType::f32, {rows, cols}};
  const sqdiff::ConstTensorView expected{ref.data(), sqdiff::DType::f32, {rows, cols}};
  const sqdiff::CompareStats stats = sqdiff::compare(actual, expected, options);
  if (stats.passed) {
    std::printf("%s: pass (%lld elements, NaN %lld, inf %lld)\n", what, static_cast<long long>(stats.elements),
                static_cast<long long>(stats.nan_a), static_cast<long long>(stats.inf_a));
  } else {
    const sqdiff::Shape at = stats.index_of(stats.worst.position);
    std::printf("%s: FAIL: %lld of %lld out of tolerance, the worst at [%lld, %lld]\n", what,
                static_cast<long long>(stats.out_of_tolerance), static_cast<long long>(stats.elements),
                static_cast<long long>(at[0]), static_cast<long long>(at[1]));
  }
  return stats.passed;
}

int main() {
  const int rows = 64, cols = 1000;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 8 * std::sin(0.37f * static_cast<float>(i));
  const std::vector<float> ref = softmax_reference(x, rows, cols);

  std::vector<float> out = softmax_f32(x, rows, cols);
  const bool good = check("softmax", out, ref, rows, cols);

  // A kernel bug: one element of row 17 twice what it should be.
  out[17 * cols + 423] *= 2;
  const bool caught = !check("softmax with a bug", out, ref, rows, cols);

  // The same check streamed, row by row as a kernel might produce them.
  sqdiff::CompareOptions options;
  options.atol = 1e-6;
  options.rtol = 1e-4;
  sqdiff::Comparison streamed(sqdiff::DType::f32, {rows, cols}, options);
  for (int r = 0; r < rows; ++r) {
    const std::size_t row = static_cast<std::size_t>(r * cols);
    streamed.add({&out[row], sqdiff::DType::f32, {cols}}, {&ref[row], sqdiff::DType::f32, {cols}});
  }
  const sqdiff::CompareStats rows_stats = streamed.finish();
  std::printf("streamed row by row: %lld out of tolerance\n", static_cast<long long>(rows_stats.out_of_tolerance));
  return good && caught && rows_stats.out_of_tolerance == 1 ? 0 : 1;
}
