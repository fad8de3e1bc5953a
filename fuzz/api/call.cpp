// fuzz_api's call model (api/call.hpp): naming an op, a view's reach and
// nesting, the poisoned arena, and running a call through the public API.
#include "api/call.hpp"

#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <exception>
#include <new>

#include "fuzz_check.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/gradients.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff_fuzz::api {

const char* op_name(Op op) {
  switch (op) {
    case Op::subtract: return "subtract";
    case Op::squared_difference: return "squared_difference";
    case Op::sum: return "sum_squared_difference";
    case Op::mean: return "mean_squared_difference";
    case Op::squared_difference_backward: return "squared_difference_backward";
    case Op::subtract_backward: return "subtract_backward";
    case Op::mean_squared_difference_backward: return "mean_squared_difference_backward";
    case Op::quantized_squared_difference: return "quantized_squared_difference";
    case Op::quantized_subtract: return "quantized_subtract";
  }
  return "?";
}

std::pair<int64_t, int64_t> reach(const View& v) {
  if (count_of(v.shape) == 0 || !v.strides_ok()) return {0, 0};
  const Shape s = v.effective_strides();
  int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    const int64_t step = s[i] * (v.shape[i] - 1);
    (step < 0 ? lo : hi) += step;
  }
  return {lo, hi};
}

bool strides_nest(const View& v) {
  const Shape s = v.effective_strides();
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, size
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    if (v.shape[i] > 1) dims.emplace_back(s[i] < 0 ? -s[i] : s[i], v.shape[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t covered = 0;
  for (const auto& [stride, size] : dims) {
    if (stride <= covered) return false;
    covered += stride * (size - 1);
  }
  return true;
}

uint64_t float_bits(DType t, double v) {
  switch (t) {
    case DType::f16: return oracle::float_to_f16(static_cast<float>(v));
    case DType::bf16: return oracle::float_to_bf16(static_cast<float>(v));
    case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<uint64_t>(v);
  }
}

Arena::Arena(std::size_t size, std::size_t shift)
    : block_(static_cast<unsigned char*>(::operator new(shift + size, std::align_val_t{64}))),
      size_(size),
      shift_(shift) {
  ASAN_POISON_MEMORY_REGION(block_, shift_);
}

Arena::~Arena() {
  ASAN_UNPOISON_MEMORY_REGION(block_, shift_ + size_);
  ::operator delete(block_, std::align_val_t{64});
}

void Arena::poison_outside(const std::vector<const View*>& views) {
  std::vector<bool> used((shift_ + size_ + 7) / 8, false);
  for (const View* v : views) {
    if (!v->strides_ok() || count_of(v->shape) == 0) continue;  // nothing may be touched
    const auto [lo, hi] = reach(*v);
    const auto item = static_cast<int64_t>(v->item());
    const int64_t first = v->start + lo * item, end = v->start + (hi + 1) * item;
    check(first >= 0 && static_cast<std::size_t>(end) <= size_, "a view outside the arena");
    for (int64_t b = first; b < end; ++b) used[(shift_ + static_cast<std::size_t>(b)) / 8] = true;
  }
  for (std::size_t g = 0; g < used.size(); ++g) {
    if (!used[g]) ASAN_POISON_MEMORY_REGION(block_ + g * 8, std::min<std::size_t>(8, shift_ + size_ - g * 8));
  }
}

void Arena::unpoison() { ASAN_UNPOISON_MEMORY_REGION(data(), size_); }

std::string Call::describe() const {
  const auto view_text = [](const char* name, const View& v) {
    return std::string(name) + " " + oracle::name_of(v.dtype) + shape_text(v.shape) + " strides " +
           shape_text(v.strides) + " @" + std::to_string(v.start);
  };
  std::string text = std::string(op_name(op)) + " ";
  if (!is_gradient(op)) {
    text += view_text("a", a) + ", " + view_text("b", b) + " -> " + view_text("out", out);
  } else {
    if (reads_inputs(op)) text += view_text("a", a) + ", " + view_text("b", b);
    if (reads_inputs(op) && has_grad_out(op)) text += ", ";
    if (has_grad_out(op)) text += view_text("grad_out", g);
    text += std::string(" -> ") + (want_a ? view_text("grad_a", out) : std::string("no grad_a")) +
            ", " + (want_b ? view_text("grad_b", grad_b) : std::string("no grad_b"));
  }
  text += " (" + std::string(oracle::name_of(mode.kind)) + ", axis " + std::to_string(mode.axis) + ")";
  if (is_reduction(op)) {
    text += " axes " + (axes ? shape_text(*axes) : std::string("all")) + (keepdims ? " keepdims" : "");
  }
  if (is_quantized(op)) {
    const auto params_text = [](const char* name, sqdiff::QuantParams q) {
      char buffer[96];
      std::snprintf(buffer, sizeof buffer, " %s (scale %.9g = %a, zero point %d)", name,
                    static_cast<double>(q.scale), static_cast<double>(q.scale), static_cast<int>(q.zero_point));
      return std::string(buffer);
    };
    text += params_text("qa", qa) + params_text("qb", qb) + params_text("qout", qout) + " activation " +
            std::to_string(activation) + " rounding " + std::to_string(rounding) +
            (pot_scale_int16 ? " pot_scale_int16" : " no pot_scale_int16");
  }
  return text + " threads " + std::to_string(threads);
}

sqdiff::QuantizedOptions Call::quantized_options(int thread_count) const {
  sqdiff::QuantizedOptions options;
  options.broadcast = mode;
  options.activation = static_cast<sqdiff::Activation>(activation);
  options.rounding = static_cast<sqdiff::Requantize>(rounding);
  options.pot_scale_int16 = pot_scale_int16;
  options.threads = thread_count;
  return options;
}

std::optional<std::string> run(const Call& c, unsigned char* base, int threads) {
  const sqdiff::ConstTensorView a{base + c.a.start, c.a.dtype, c.a.shape, c.a.strides};
  const sqdiff::ConstTensorView b{base + c.b.start, c.b.dtype, c.b.shape, c.b.strides};
  const sqdiff::TensorView out{base + c.out.start, c.out.dtype, c.out.shape, c.out.strides};
  const sqdiff::ConstTensorView g{base + c.g.start, c.g.dtype, c.g.shape, c.g.strides};
  const sqdiff::TensorView grad_b{base + c.grad_b.start, c.grad_b.dtype, c.grad_b.shape, c.grad_b.strides};
  const sqdiff::TensorView* grad_a_arg = c.want_a ? &out : nullptr;
  const sqdiff::TensorView* grad_b_arg = c.want_b ? &grad_b : nullptr;
  try {
    switch (c.op) {
      case Op::subtract: sqdiff::subtract(a, b, out, {c.mode, threads}); break;
      case Op::squared_difference: sqdiff::squared_difference(a, b, out, {c.mode, threads}); break;
      case Op::sum: sqdiff::sum_squared_difference(a, b, out, {c.mode, c.axes, c.keepdims, threads}); break;
      case Op::mean: sqdiff::mean_squared_difference(a, b, out, {c.mode, c.axes, c.keepdims, threads}); break;
      case Op::squared_difference_backward:
        sqdiff::squared_difference_backward(a, b, g, grad_a_arg, grad_b_arg, {c.mode, threads});
        break;
      case Op::subtract_backward: sqdiff::subtract_backward(g, grad_a_arg, grad_b_arg, {c.mode, threads}); break;
      case Op::mean_squared_difference_backward:
        sqdiff::mean_squared_difference_backward(a, b, grad_a_arg, grad_b_arg, {c.mode, threads});
        break;
      case Op::quantized_squared_difference:
        sqdiff::quantized_squared_difference(a, c.qa, b, c.qb, out, c.qout, c.quantized_options(threads));
        break;
      case Op::quantized_subtract:
        sqdiff::quantized_subtract(a, c.qa, b, c.qb, out, c.qout, c.quantized_options(threads));
        break;
    }
  } catch (const sqdiff::Error& e) {
    return std::string(e.what());
  } catch (const std::exception& e) {
    fail(c.describe() + ": threw something other than sqdiff::Error: " + e.what());
  }
  return std::nullopt;
}

}  // namespace sqdiff_fuzz::api
