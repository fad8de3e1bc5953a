// fuzz_api's model of one API call: the op, the views it passes (each with its
// place in one arena, so that views overlap freely), the arena itself, and
// running the call on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oracle.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/quantized.hpp"

namespace sqdiff_fuzz::api {

using sqdiff::BroadcastKind;
using sqdiff::DType;
using sqdiff::Shape;
namespace oracle = sqdiff_test::oracle;

// The values 0-5 are the op byte modulo 6, as the committed seeds were made;
// mean_squared_difference_backward and the quantized ops came later (decode_op).
enum class Op {
  subtract,
  squared_difference,
  sum,
  mean,
  squared_difference_backward,
  subtract_backward,
  mean_squared_difference_backward,
  quantized_squared_difference,
  quantized_subtract
};

const char* op_name(Op op);

inline bool is_reduction(Op op) { return op == Op::sum || op == Op::mean; }
inline bool is_gradient(Op op) {
  return op == Op::squared_difference_backward || op == Op::subtract_backward ||
         op == Op::mean_squared_difference_backward;
}
inline bool is_quantized(Op op) { return op == Op::quantized_squared_difference || op == Op::quantized_subtract; }
// The gradients that read the inputs a and b (subtract_backward has only
// grad_out), and those given a grad_out (the mean's is implicit: ones, the
// sum divided by the broadcast shape's count).
inline bool reads_inputs(Op op) { return op != Op::subtract_backward; }
inline bool has_grad_out(Op op) { return op == Op::squared_difference_backward || op == Op::subtract_backward; }

inline std::string shape_text(const Shape& s) { return oracle::shape_str(s); }

inline int64_t count_of(const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

// A view as the fuzzer builds it: strides explicit (or empty = dense), and
// where in the arena its element [0,...,0] lies.
struct View {
  DType dtype = DType::f32;
  Shape shape;
  Shape strides;       // as passed to the library (may be empty)
  int64_t start = 0;   // byte offset of element [0,...,0] in the arena
  bool strides_ok() const { return strides.empty() || strides.size() == shape.size(); }
  Shape effective_strides() const { return strides.empty() ? oracle::dense_strides(shape) : strides; }
  std::size_t item() const { return oracle::elem_size(dtype); }
};

// Lowest and highest element offset a view reaches (0, 0 for an empty view).
std::pair<int64_t, int64_t> reach(const View& v);

// SPEC_DECISIONS 4: the dims of size > 1, ordered by |stride|, each stride
// larger than the reach of all the smaller ones.
bool strides_nest(const View& v);

// Calls f(byte offset in the arena) for each element of v, row-major.
template <typename F>
void for_each_element(const View& v, F&& f) {
  const int64_t n = count_of(v.shape);
  if (n == 0) return;
  const Shape s = v.effective_strides();
  std::vector<int64_t> index(v.shape.size(), 0);
  const auto item = static_cast<int64_t>(v.item());
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (std::size_t i = 0; i < index.size(); ++i) offset += index[i] * s[i];
    f(v.start + offset * item);
    for (std::size_t i = index.size(); i-- > 0;) {
      if (++index[i] < v.shape[i]) break;
      index[i] = 0;
    }
  }
}

// The bits of v (exact in float type t) in t.
uint64_t float_bits(DType t, double v);

// The arena: `size` bytes at `shift` bytes past a 64-byte boundary, in an
// allocation of exactly shift + size bytes, so ASan sees a step past either end.
class Arena {
 public:
  Arena(std::size_t size, std::size_t shift);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  unsigned char* data() const { return block_ + shift_; }
  std::size_t size() const { return size_; }

  // Poisons every 8-byte granule outside the views' extents (from each view's
  // lowest to its highest element): a kernel may read a whole row's span,
  // gaps included (the block rows do), but nothing beyond it. ASan tracks
  // granules, so up to 7 bytes past an extent stay readable.
  void poison_outside(const std::vector<const View*>& views);
  void unpoison();

 private:
  unsigned char* block_;
  std::size_t size_;
  std::size_t shift_;
};

// One call. The gradients' views: a and b (the inputs of
// squared_difference_backward and mean_squared_difference_backward;
// subtract_backward has none, its inputs' shapes are the gradients'), g
// (grad_out; the mean's has none), out (grad_a) and grad_b, either gradient
// skipped (a null pointer) at times.
struct Call {
  Op op = Op::subtract;
  View a, b, out;
  View g, grad_b;                   // gradients only
  bool want_a = true, want_b = true;  // gradients only
  sqdiff::Broadcast mode;
  std::optional<Shape> axes;
  bool keepdims = false;
  int threads = 1;
  std::size_t arena_size = 8;
  std::size_t arena_shift = 0;  // bytes past a 64-byte boundary
  // The quantized ops only: each tensor's parameters and the options other
  // than broadcast and threads; the enums as raw values, so that values
  // outside them (an error) can be passed too.
  sqdiff::QuantParams qa, qb, qout;
  uint8_t activation = 0;  // sqdiff::Activation
  uint8_t rounding = 0;    // sqdiff::Requantize
  bool pot_scale_int16 = true;

  // The views passed to the library, inputs first (of a Call or a const Call).
  template <class Self>
  static auto views_of(Self& c) {
    std::vector<decltype(&c.a)> v;
    if (!is_gradient(c.op)) return decltype(v){&c.a, &c.b, &c.out};
    if (reads_inputs(c.op)) v = {&c.a, &c.b};
    if (has_grad_out(c.op)) v.push_back(&c.g);
    if (c.want_a) v.push_back(&c.out);
    if (c.want_b) v.push_back(&c.grad_b);
    return v;
  }
  std::vector<const View*> views() const { return views_of(*this); }
  // The views the library writes.
  std::vector<const View*> outputs() const {
    if (!is_gradient(op)) return {&out};
    std::vector<const View*> v;
    if (want_a) v.push_back(&out);
    if (want_b) v.push_back(&grad_b);
    return v;
  }

  std::string describe() const;
  sqdiff::QuantizedOptions quantized_options(int thread_count) const;
};

// Runs the call on views into `base`; returns the error text, or nullopt.
std::optional<std::string> run(const Call& c, unsigned char* base, int threads);

}  // namespace sqdiff_fuzz::api
