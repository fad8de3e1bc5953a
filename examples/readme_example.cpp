#include <sqdiff/sqdiff.hpp>

#include <cstdio>
#include <vector>

int main() {
  using sqdiff::DType;
  // The caller owns the buffers; sqdiff reads and writes them through views.
  std::vector<float> a = {1, 2, 3,
                          4, 5, 6};   // shape [2,3]
  std::vector<float> b = {1, 0, -1};  // shape [3], broadcast over the rows
  std::vector<float> out(6);

  sqdiff::Shape shape = sqdiff::broadcast_shape({2, 3}, {3});  // [2,3]
  sqdiff::squared_difference({a.data(), DType::f32, {2, 3}},
                             {b.data(), DType::f32, {3}},
                             {out.data(), DType::f32, shape});
  for (float v : out) std::printf("%g ", v);  // 0 4 16 9 25 49
  std::printf("\n");

  // In place (the output is exactly a), reading b backwards through a stride of -1.
  sqdiff::subtract({a.data(), DType::f32, {2, 3}},
                   {b.data() + 2, DType::f32, {3}, {-1}},
                   {a.data(), DType::f32, {2, 3}});
  for (float v : a) std::printf("%g ", v);  // 2 2 2 5 5 5
  std::printf("\n");

  // Bad input throws sqdiff::Error (a std::invalid_argument) and writes nothing.
  try {
    sqdiff::subtract({a.data(), DType::f32, {2, 3}},
                     {b.data(), DType::f32, {3, 1}},
                     {out.data(), DType::f32, {2, 3}});
  } catch (const sqdiff::Error& e) {
    std::printf("error: %s\n", e.what());
  }
  return 0;
}
