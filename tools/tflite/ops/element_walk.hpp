// Walking a tensor value element by element, for the operator kinds the tool
// computes itself (the library computes SUB and SQUARED_DIFFERENCE): the
// output in row-major order, each input at its broadcast position (NumPy's
// rules, what TFLite's "BroadcastSlow" kernels do), through any strides an
// input file has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/ir_run.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::tools::tflite {

// The element strides of `t` aligned to `shape` (right-aligned, NumPy's
// rules): 0 where `t` lacks the dim or has 1 there. `t` broadcasts to `shape`
// (the check made sure).
inline std::vector<int64_t> aligned_strides(const ir::Tensor& t, const sqdiff::Shape& shape) {
  const std::size_t rank = shape.size();
  const std::size_t own = t.shape.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t dense = 1;
  for (std::size_t i = own; i-- > 0;) {
    const int64_t stride = t.strides.empty() ? dense : t.strides[i];
    dense *= t.shape[i] > 0 ? t.shape[i] : 1;
    if (t.shape[i] != 1) strides[rank - own + i] = stride;
  }
  return strides;
}

// f(k, i, j) for each position k of `shape` in row-major order, with i and j
// its offsets under the strides `sa` and `sb` (0 on a dim one of them
// repeats): the odometer over the outer dims, the innermost dim a plain loop.
template <typename F>
void walk(const sqdiff::Shape& shape, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb, F&& f) {
  int64_t count = 1;
  for (const int64_t d : shape) count *= d;
  if (count == 0) return;
  const std::size_t rank = shape.size();
  if (rank == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = shape[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
  int64_t k = 0, oa = 0, ob = 0;  // offsets of the current row's first element
  for (;;) {
    for (int64_t x = 0; x < inner; ++x) f(k + x, oa + x * ia, ob + x * ib);
    k += inner;
    std::size_t d = rank - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++index[d] < shape[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (shape[d] - 1);
      ob -= sb[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// f(k, i, j) for each output element k (row-major over `shape`), with i and j
// the element offsets of a and b at that position.
template <typename F>
void for_each_pair(const sqdiff::Shape& shape, const ir::Tensor& a, const ir::Tensor& b, F&& f) {
  walk(shape, aligned_strides(a, shape), aligned_strides(b, shape), f);
}

// f(k, i) for each element k of `t` in row-major order, i its offset.
template <typename F>
void for_each_element(const ir::Tensor& t, F&& f) {
  for_each_pair(t.shape, t, t, [&](int64_t k, int64_t i, int64_t) { f(k, i); });
}

}  // namespace sqdiff::tools::tflite
