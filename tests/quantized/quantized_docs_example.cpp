// Quantized squared difference and subtract of int8 tensors, as LiteRT computes them.
#include <sqdiff/sqdiff.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  // Real values a = 0.5 * (q - 0) and b = 0.25 * (q - 10); b is broadcast over a's rows.
  std::vector<int8_t> a = {2, 4, 6, 8, 10, 12};  // shape [2, 3]: 1 2 3 / 4 5 6
  std::vector<int8_t> b = {14, 18, 22};          // shape [3]: 1 2 3
  std::vector<int8_t> out(6);
  const sqdiff::QuantParams qa{0.5f, 0}, qb{0.25f, 10}, qout{0.125f, -128};

  sqdiff::quantized_squared_difference({a.data(), sqdiff::DType::i8, {2, 3}}, qa,
                                       {b.data(), sqdiff::DType::i8, {3}}, qb,
                                       {out.data(), sqdiff::DType::i8, {2, 3}}, qout);
  for (int8_t q : out) std::printf("%d ", q);  // (a - b)^2 = 0 0 0 9 9 9 in steps of 0.125 from -128
  std::printf("\n");

  sqdiff::QuantizedOptions relu;
  relu.activation = sqdiff::Activation::relu;
  sqdiff::quantized_subtract({b.data(), sqdiff::DType::i8, {3}}, qb, {a.data(), sqdiff::DType::i8, {2, 3}}, qa,
                             {out.data(), sqdiff::DType::i8, {2, 3}}, {0.125f, 0}, relu);
  for (int8_t q : out) std::printf("%d ", q);  // b - a = 0 0 0 -3 -3 -3, clamped at 0 by relu
  std::printf("\n");

  try {  // an output scale too small for subtract: LiteRT aborts, sqdiff throws
    sqdiff::quantized_subtract({a.data(), sqdiff::DType::i8, {6}}, qa, {a.data(), sqdiff::DType::i8, {6}}, qa,
                               {out.data(), sqdiff::DType::i8, {6}}, {1e-7f, 0});
  } catch (const sqdiff::Error& e) {
    std::printf("error: %s\n", e.what());
  }
}
