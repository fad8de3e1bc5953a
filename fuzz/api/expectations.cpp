// fuzz_api's expected results of a call, one function per kind of op: the
// scalar oracle (element-wise), the integer oracle (quantized), and the
// library's exact path on dense copies checked against the GMP oracle
// (reductions, gradients); and the comparison of the arena with them.
#include "api/expectations.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "fuzz_check.hpp"
#include "quantized/quantized_oracle.hpp"
#include "sqdiff/gradients.hpp"
#include "sqdiff/quantized.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff_fuzz::api {

void compare(const Call& c, const std::vector<unsigned char>& snapshot, const Arena& arena,
             const Expectation& expected, const std::optional<std::string>& error, const char* pass) {
  const std::string what = c.describe() + " (" + pass + ")";
  if (!expected.either) {
    if (expected.error && !error) fail(what + ": an invalid call succeeded");
    if (!expected.error && error) fail(what + ": a valid call failed: " + *error);
  }
  std::vector<unsigned char> want = snapshot;
  if (!error) {
    const std::vector<const View*> outputs = c.outputs();
    check(expected.results.size() == outputs.size(), what + ": no expected results for a call that succeeded");
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const View& out = *outputs[o];
      const std::string name = !is_gradient(c.op) ? "output" : &out == &c.out ? "grad_a" : "grad_b";
      std::size_t k = 0;
      for_each_element(out, [&](int64_t at) {
        const uint64_t expect = expected.results[o][k];
        const uint64_t actual = oracle::load_bits(arena.data() + at, out.dtype);
        if (!oracle::bits_match(out.dtype, expect, actual)) {
          fail(what + ": " + name + " element " + std::to_string(k) + " (arena byte " + std::to_string(at) + ") is " +
               oracle::hex_bits(out.dtype, actual) + ", expected " + oracle::hex_bits(out.dtype, expect));
        }
        oracle::store_bits(want.data() + at, out.dtype, actual);  // any NaN where a NaN is expected
        ++k;
      });
    }
  }
  if (std::memcmp(want.data(), arena.data(), want.size()) != 0) {
    std::size_t at = 0;
    while (want[at] == arena.data()[at]) ++at;
    fail(what + ": arena byte " + std::to_string(at) + " is " + std::to_string(arena.data()[at]) + ", expected " +
         std::to_string(want[at]) +
         (error ? " (the call failed, and must write nothing: " + *error + ")" : " (outside the outputs)"));
  }
}

std::vector<unsigned char> dense_copy(const View& v, const std::vector<unsigned char>& snapshot) {
  std::vector<unsigned char> bytes;
  for_each_element(v, [&](int64_t at) { bytes.insert(bytes.end(), &snapshot[at], &snapshot[at] + v.item()); });
  bytes.resize(std::max<std::size_t>(bytes.size(), 8));
  return bytes;
}

std::vector<unsigned char> dense_output(const View& v) {
  const std::size_t bytes = static_cast<std::size_t>(count_of(v.shape)) * v.item();
  return std::vector<unsigned char>(std::max<std::size_t>(bytes, 8), 0xA5);
}

std::vector<uint64_t> bits_of(const std::vector<unsigned char>& dense, const View& v) {
  std::vector<uint64_t> bits;
  for (int64_t k = 0; k < count_of(v.shape); ++k) {
    bits.push_back(oracle::load_bits(dense.data() + k * static_cast<int64_t>(v.item()), v.dtype));
  }
  return bits;
}

gmp::Input oracle_input(const View& v, const std::vector<unsigned char>& snapshot) {
  return {v.dtype, snapshot.data() + v.start, v.shape, v.strides};
}

namespace {

namespace qo = sqdiff_test::quantized_oracle;

// Expected results of subtract / squared_difference: the scalar oracle on the snapshot.
Expectation elementwise_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  const bool views_ok = c.a.strides_ok() && c.b.strides_ok() && c.out.strides_ok();
  const oracle::Op op = c.op == Op::subtract ? oracle::Op::subtract : oracle::Op::squared_difference;
  const auto result = views_ok ? oracle::compute(op, {snapshot.data() + c.a.start, c.a.dtype, c.a.shape, c.a.strides},
                                                 {snapshot.data() + c.b.start, c.b.dtype, c.b.shape, c.b.strides},
                                                 c.mode.kind, c.mode.axis)
                               : std::nullopt;
  e.error = !result || c.out.dtype != c.a.dtype || result->shape != c.out.shape || c.threads < 0;
  if (!e.error && !strides_nest(c.out)) {
    e.error = true;
    e.either = count_of(c.out.shape) == 0;
  }
  if (!e.error || e.either) e.results = {result->bits};
  return e;
}

// Calls f(a's byte offset, b's byte offset) in the arena for each element of
// the broadcast shape `full`, row-major: a's dims align with full's last
// ones, b's from full's dim b_dim on (as oracle::broadcast aligns them), and
// an input's dim of 1 stays at index 0.
template <typename F>
void for_each_broadcast_pair(const View& a, const View& b, const Shape& full, int64_t b_dim, F&& f) {
  const int64_t n = count_of(full);
  const Shape as = a.effective_strides(), bs = b.effective_strides();
  const std::size_t a_dim = full.size() - a.shape.size();
  const auto a_item = static_cast<int64_t>(a.item()), b_item = static_cast<int64_t>(b.item());
  std::vector<int64_t> index(full.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t ea = 0, eb = 0;
    for (std::size_t j = 0; j < a.shape.size(); ++j) {
      if (a.shape[j] != 1) ea += index[a_dim + j] * as[j];
    }
    for (std::size_t j = 0; j < b.shape.size(); ++j) {
      if (b.shape[j] != 1) eb += index[static_cast<std::size_t>(b_dim) + j] * bs[j];
    }
    f(a.start + ea * a_item, b.start + eb * b_item);
    for (std::size_t i = index.size(); i-- > 0;) {
      if (++index[i] < full[i]) break;
      index[i] = 0;
    }
  }
}

// The stored integer of a quantized type at p.
int64_t stored_integer(const unsigned char* p, DType dtype) {
  if (dtype == DType::i8) return static_cast<int8_t>(*p);
  if (dtype == DType::u8) return *p;
  int16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

uint64_t integer_bits(DType dtype, int64_t v) { return static_cast<uint64_t>(v) & sqdiff_test::values::mask_of(dtype); }

// The library on dense copies of the inputs, one thread, against the oracle:
// it must refuse exactly the calls the oracle refuses (`valid`: all checks
// but the threads and the output view's memory, which the dense call cannot
// get wrong), write
// nothing then, and otherwise give the oracle's elements (x, y: the stored
// inputs of each, for the message).
void check_quantized_dense(const Call& c, const std::vector<unsigned char>& snapshot, bool valid,
                           const std::vector<uint64_t>& expected, const std::vector<int64_t>& x,
                           const std::vector<int64_t>& y) {
  const std::string what = c.describe() + " (dense copies, 1 thread)";
  const std::vector<unsigned char> a = dense_copy(c.a, snapshot), b = dense_copy(c.b, snapshot);
  std::vector<unsigned char> out = dense_output(c.out);
  std::optional<std::string> error;
  try {
    const sqdiff::ConstTensorView av{a.data(), c.a.dtype, c.a.shape};
    const sqdiff::ConstTensorView bv{b.data(), c.b.dtype, c.b.shape};
    const sqdiff::TensorView ov{out.data(), c.out.dtype, c.out.shape};
    if (c.op == Op::quantized_subtract) {
      sqdiff::quantized_subtract(av, c.qa, bv, c.qb, ov, c.qout, c.quantized_options(1));
    } else {
      sqdiff::quantized_squared_difference(av, c.qa, bv, c.qb, ov, c.qout, c.quantized_options(1));
    }
  } catch (const sqdiff::Error& e) {
    error = e.what();
  } catch (const std::exception& e) {
    fail(what + ": threw something other than sqdiff::Error: " + e.what());
  }
  if (valid && error) fail(what + ": a valid call failed: " + *error);
  if (!valid && !error) fail(what + ": an invalid call succeeded");
  if (!valid) {
    check(std::all_of(out.begin(), out.end(), [](unsigned char v) { return v == 0xA5; }),
          what + ": a refused call wrote its output (" + *error + ")");
    return;
  }
  const std::vector<uint64_t> actual = bits_of(out, c.out);
  for (std::size_t k = 0; k < expected.size(); ++k) {
    if (actual[k] != expected[k]) {
      fail(what + ": element " + std::to_string(k) + " of stored inputs " + std::to_string(x[k]) + " and " +
           std::to_string(y[k]) + " is " + oracle::hex_bits(c.out.dtype, actual[k]) + ", the oracle's " +
           oracle::hex_bits(c.out.dtype, expected[k]));
    }
  }
}

// Expected results of the quantized ops: the integer oracle of
// tests/quantized/quantized_oracle.hpp (no library code) element by element
// over the broadcast shape, reading the snapshot, so any overlap gives the
// as-if-copied result; SPEC 9's refusals as the oracle says them, and the
// float ops' checks of types, shapes, strides and threads. The library on
// dense copies, one thread, is checked against the same here.
Expectation quantized_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  if (!c.a.strides_ok() || !c.b.strides_ok() || !c.out.strides_ok()) {  // no dense copy to make
    e.error = true;
    return e;
  }
  const DType dtype = c.a.dtype;
  const bool types_ok = (dtype == DType::i8 || dtype == DType::u8 || dtype == DType::i16) && c.b.dtype == dtype &&
                        c.out.dtype == dtype;
  const bool enums_ok = c.activation <= static_cast<uint8_t>(sqdiff::Activation::relu_n1_to_1) &&
                        c.rounding <= static_cast<uint8_t>(sqdiff::Requantize::single_rounding);
  qo::Config config;
  config.op = c.op == Op::quantized_subtract ? qo::Op::subtract : qo::Op::squared_difference;
  config.dtype = dtype;
  config.qa = c.qa;
  config.qb = c.qb;
  config.qout = c.qout;
  config.activation = static_cast<sqdiff::Activation>(c.activation);
  config.rounding = static_cast<sqdiff::Requantize>(c.rounding);
  config.pot_scale_int16 = c.pot_scale_int16;
  const qo::Prepared prepared = types_ok && enums_ok ? qo::prepare(config) : qo::Prepared{};
  const bool parameters_ok = types_ok && enums_ok && !prepared.refused;
  int64_t b_dim = 0;
  const std::optional<Shape> full = oracle::broadcast(c.a.shape, c.b.shape, c.mode.kind, c.mode.axis, &b_dim);
  const bool valid = parameters_ok && full && *full == c.out.shape;
  std::vector<uint64_t> bits;
  std::vector<int64_t> x, y;
  if (valid) {
    for_each_broadcast_pair(c.a, c.b, *full, b_dim, [&](int64_t at_a, int64_t at_b) {
      x.push_back(stored_integer(&snapshot[static_cast<std::size_t>(at_a)], dtype));
      y.push_back(stored_integer(&snapshot[static_cast<std::size_t>(at_b)], dtype));
      bits.push_back(integer_bits(dtype, qo::element(config, prepared, x.back(), y.back())));
    });
  }
  check_quantized_dense(c, snapshot, valid, bits, x, y);
  e.error = !valid || c.threads < 0;
  if (!e.error && !strides_nest(c.out)) {
    e.error = true;
    e.either = count_of(c.out.shape) == 0;
  }
  if (!e.error || e.either) e.results = {bits};
  return e;
}

// The library's exact path (the reference) against the GMP oracle, which
// shares no code with it: a wrong exact sum fails here even where the fast
// paths agree with it.
void check_against_gmp(const Call& c, const std::string& output, const std::vector<gmp::Expected>& oracle_values,
                       const std::vector<uint64_t>& reference, DType dtype) {
  check(oracle_values.size() == reference.size(), c.describe() + ": the GMP oracle has " +
                                                      std::to_string(oracle_values.size()) + " elements of " + output +
                                                      ", the exact path " + std::to_string(reference.size()));
  for (std::size_t k = 0; k < reference.size(); ++k) {
    if (oracle_values[k].error || !gmp::matches(dtype, oracle_values[k], reference[k])) {
      fail(c.describe() + ": the exact path's " + output + " element " + std::to_string(k) + " is " +
           gmp::describe(dtype, reference[k]) + ", the GMP oracle's " +
           (oracle_values[k].error ? std::string("an error") : gmp::describe(dtype, oracle_values[k].bits)));
    }
  }
}

// Expected results of a reduction: the library on dense copies, one thread,
// every output summed exactly; small ones checked against the GMP oracle.
Expectation reduction_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  const bool views_ok = c.a.strides_ok() && c.b.strides_ok() && c.out.strides_ok();
  if (!views_ok) {  // a strides list of the wrong length: no dense copy to make
    e.error = true;
    return e;
  }
  const std::vector<unsigned char> a = dense_copy(c.a, snapshot), b = dense_copy(c.b, snapshot);
  std::vector<unsigned char> out = dense_output(c.out);
  const std::optional<std::string> error = run_exact([&] {
    const sqdiff::ConstTensorView av{a.data(), c.a.dtype, c.a.shape};
    const sqdiff::ConstTensorView bv{b.data(), c.b.dtype, c.b.shape};
    const sqdiff::TensorView ov{out.data(), c.out.dtype, c.out.shape};
    if (c.op == Op::sum) {
      sqdiff::sum_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
    } else {
      sqdiff::mean_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
    }
  });
  if (!error) {
    e.results = {bits_of(out, c.out)};
    const gmp::Alignment al = gmp::align(c.a.shape, c.b.shape, c.mode);
    if (count_of(al.shape) <= kMaxOracleTerms) {
      const gmp::ExactReduction exact =
          gmp::exact_reduction(oracle_input(c.a, snapshot), oracle_input(c.b, snapshot), c.mode, c.axes, c.keepdims);
      check_against_gmp(c, "output", gmp::round_reduction(exact, c.op == Op::mean, c.out.dtype), e.results[0],
                        c.out.dtype);
    }
  }
  e.error = error.has_value() || c.threads < 0;
  if (!e.error && !strides_nest(c.out)) {
    e.error = true;
    e.either = count_of(c.out.shape) == 0;
  }
  return e;
}

// The byte extents of two views overlap (the check of grad_a against grad_b).
bool extents_overlap(const View& x, const View& y) {
  const auto [xl, xh] = reach(x);
  const auto [yl, yh] = reach(y);
  const int64_t x_begin = x.start + xl * static_cast<int64_t>(x.item());
  const int64_t x_end = x.start + (xh + 1) * static_cast<int64_t>(x.item());
  const int64_t y_begin = y.start + yl * static_cast<int64_t>(y.item());
  const int64_t y_end = y.start + (yh + 1) * static_cast<int64_t>(y.item());
  return x_begin < y_end && y_begin < x_end;
}

// Expected results of the gradients: the library on dense copies, one
// thread, every output summed exactly; small ones checked against the GMP
// oracle (the mean's with a grad_out of ones and the broadcast shape's count
// as the divisor, inside the one rounding). The checks of the views' memory,
// which dense copies do not have, are made here: a self-overlapping gradient,
// and grad_a and grad_b sharing bytes (both non-empty).
Expectation gradient_expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  Expectation e;
  for (const View* v : c.views()) {
    if (!v->strides_ok()) {  // a strides list of the wrong length: no dense copy to make
      e.error = true;
      return e;
    }
  }
  const bool subtract = c.op == Op::subtract_backward, mean = c.op == Op::mean_squared_difference_backward;
  const auto copy_if = [&](bool passed, const View& v) {
    return passed ? dense_copy(v, snapshot) : std::vector<unsigned char>(8);
  };
  const std::vector<unsigned char> a = copy_if(reads_inputs(c.op), c.a), b = copy_if(reads_inputs(c.op), c.b);
  const std::vector<unsigned char> g = copy_if(has_grad_out(c.op), c.g);
  std::vector<unsigned char> grad_a = dense_output(c.out), grad_b = dense_output(c.grad_b);
  const std::optional<std::string> error = run_exact([&] {
    const sqdiff::TensorView ga{grad_a.data(), c.out.dtype, c.out.shape};
    const sqdiff::TensorView gb{grad_b.data(), c.grad_b.dtype, c.grad_b.shape};
    const sqdiff::ConstTensorView gv{g.data(), c.g.dtype, c.g.shape};
    if (subtract) {
      sqdiff::subtract_backward(gv, c.want_a ? &ga : nullptr, c.want_b ? &gb : nullptr, {c.mode, 1});
    } else if (mean) {
      sqdiff::mean_squared_difference_backward({a.data(), c.a.dtype, c.a.shape}, {b.data(), c.b.dtype, c.b.shape},
                                               c.want_a ? &ga : nullptr, c.want_b ? &gb : nullptr, {c.mode, 1});
    } else {
      sqdiff::squared_difference_backward({a.data(), c.a.dtype, c.a.shape}, {b.data(), c.b.dtype, c.b.shape}, gv,
                                          c.want_a ? &ga : nullptr, c.want_b ? &gb : nullptr, {c.mode, 1});
    }
  });
  if (!error) {
    // subtract_backward's inputs have the gradients' shapes; a skipped one's
    // has grad_out's (b in pdpd: a scalar), as the library takes them.
    const Shape a_shape = c.want_a ? c.out.shape : c.g.shape;
    const Shape b_shape = c.want_b ? c.grad_b.shape : c.mode.kind == BroadcastKind::pdpd ? Shape{} : c.g.shape;
    // The terms: grad_out's shape, the broadcast shape (the mean has no
    // grad_out: for the oracle, ones of that shape through strides of 0).
    const Shape terms = mean ? gmp::align(c.a.shape, c.b.shape, c.mode).shape : c.g.shape;
    unsigned char one[8];
    if (mean) gmp::store_bits(one, gmp::size_of(c.a.dtype), float_bits(c.a.dtype, 1.0));
    const gmp::Input g_input = mean ? gmp::Input{c.a.dtype, one, terms, Shape(terms.size(), 0)}
                                    : oracle_input(c.g, snapshot);
    // Each exact sum divided by n inside the rounding; with n = 0 no divisor
    // (sums of no terms, +0).
    const int64_t divisor = mean ? count_of(terms) : 0;
    const bool small = count_of(terms) <= kMaxOracleTerms;
    for (int which = 0; which < 2; ++which) {
      if (!(which == 0 ? c.want_a : c.want_b)) continue;
      const View& out = which == 0 ? c.out : c.grad_b;
      e.results.push_back(bits_of(which == 0 ? grad_a : grad_b, out));
      if (!small) continue;
      const std::vector<gmp::Expected> oracle_values =
          subtract ? gmp::subtract_gradient(g_input, a_shape, b_shape, c.mode, which)
                   : gmp::squared_difference_gradient(oracle_input(c.a, snapshot), oracle_input(c.b, snapshot),
                                                      g_input, c.mode, which, divisor);
      check_against_gmp(c, which == 0 ? "grad_a" : "grad_b", oracle_values, e.results.back(), out.dtype);
    }
  }
  bool must_fail = error.has_value() || c.threads < 0;
  bool may_fail = false;
  for (const View* out : c.outputs()) {
    if (strides_nest(*out)) continue;
    (count_of(out->shape) > 0 ? must_fail : may_fail) = true;  // an empty output is not checked
  }
  if (c.want_a && c.want_b && count_of(c.out.shape) > 0 && count_of(c.grad_b.shape) > 0 &&
      extents_overlap(c.out, c.grad_b)) {
    must_fail = true;
  }
  e.error = must_fail || may_fail;
  e.either = !must_fail && may_fail;
  return e;
}

}  // namespace

Expectation expectation(const Call& c, const std::vector<unsigned char>& snapshot) {
  return is_reduction(c.op)   ? reduction_expectation(c, snapshot)
         : is_gradient(c.op)  ? gradient_expectation(c, snapshot)
         : is_quantized(c.op) ? quantized_expectation(c, snapshot)
                              : elementwise_expectation(c, snapshot);
}

}  // namespace sqdiff_fuzz::api
