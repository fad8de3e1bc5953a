// A downstream program written only from the public API block of DESIGN.md:
// broadcast_shape, subtract, squared_difference, the views, Options and
// sqdiff::Error. It checks results that SPEC.md fixes and returns non-zero on
// any mismatch.

#include <sqdiff/sqdiff.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

std::string text(const sqdiff::Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(shape[i]);
  }
  s += "]";
  return s;
}

void expect_shape(const sqdiff::Shape& a, const sqdiff::Shape& b, sqdiff::Broadcast mode,
                  const sqdiff::Shape& expected) {
  const std::string what = std::string("broadcast_shape(") + text(a) + ", " + text(b) + ")";
  try {
    const sqdiff::Shape got = sqdiff::broadcast_shape(a, b, mode);
    check(got == expected, what + " gave " + text(got) + ", expected " + text(expected));
  } catch (const std::exception& e) {
    check(false, what + " threw: " + e.what());
  }
}

void expect_shape_error(const sqdiff::Shape& a, const sqdiff::Shape& b, sqdiff::Broadcast mode) {
  const std::string what = std::string("broadcast_shape(") + text(a) + ", " + text(b) + ")";
  try {
    const sqdiff::Shape got = sqdiff::broadcast_shape(a, b, mode);
    check(false, what + " gave " + text(got) + ", expected sqdiff::Error");
  } catch (const sqdiff::Error& e) {
    check(std::strlen(e.what()) > 0, what + " threw an Error without a message");
  }
}

template <typename T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// One-element op on dtype `dtype`, returning the output element.
template <typename T>
T one(bool squared, sqdiff::DType dtype, T a, T b) {
  T out{};
  const sqdiff::ConstTensorView va{&a, dtype, {}};
  const sqdiff::ConstTensorView vb{&b, dtype, {}};
  const sqdiff::TensorView vo{&out, dtype, {}};
  if (squared) {
    sqdiff::squared_difference(va, vb, vo);
  } else {
    sqdiff::subtract(va, vb, vo);
  }
  return out;
}

void shapes() {
  const sqdiff::Broadcast numpy{};
  const sqdiff::Broadcast none{sqdiff::BroadcastKind::none, -1};
  expect_shape({8, 1, 6, 1}, {7, 1, 5}, numpy, {8, 7, 6, 5});
  expect_shape({}, {}, numpy, {});
  expect_shape({2, 1, 5}, {4, 1}, numpy, {2, 4, 5});
  expect_shape({1, 0, 3}, {3}, numpy, {1, 0, 3});
  expect_shape({256, 56}, {256, 56}, none, {256, 56});
  expect_shape({2, 3, 4, 5}, {3, 1}, {sqdiff::BroadcastKind::pdpd, 1}, {2, 3, 4, 5});
  expect_shape({2, 3, 4, 5}, {}, {sqdiff::BroadcastKind::pdpd, -1}, {2, 3, 4, 5});
  expect_shape_error({3}, {2}, numpy);
  expect_shape_error({2, 3}, {3, 2}, numpy);
  expect_shape_error({3, 4}, {3, 1}, none);
  expect_shape_error({2, 4}, {1, 2, 4}, none);
  expect_shape_error({2, 3, 4, 5}, {3, 1}, {sqdiff::BroadcastKind::pdpd, -1});
  expect_shape_error({8, 1, 6, 1}, {7, 1, 5}, {sqdiff::BroadcastKind::pdpd, 1});
  expect_shape_error({2, -1}, {2}, numpy);
}

void f32_numpy_and_in_place() {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};  // [2,3]
  std::vector<float> b = {1, 0, -1};          // [3]
  std::vector<float> out(6);
  sqdiff::squared_difference({a.data(), sqdiff::DType::f32, {2, 3}}, {b.data(), sqdiff::DType::f32, {3}},
                             {out.data(), sqdiff::DType::f32, {2, 3}});
  check(out == std::vector<float>{0, 4, 16, 9, 25, 49}, "f32 squared_difference [2,3] with [3]");

  // In place on a, with b reversed through a negative stride.
  sqdiff::subtract({a.data(), sqdiff::DType::f32, {2, 3}}, {b.data() + 2, sqdiff::DType::f32, {3}, {-1}},
                   {a.data(), sqdiff::DType::f32, {2, 3}});
  check(a == std::vector<float>{2, 2, 2, 5, 5, 5}, "f32 subtract in place, b reversed");

  // The seed example [8,1,6,1] with [7,1,5]: out[n,c,h,w] = a[n,0,h,0] - b[c,0,w].
  std::vector<float> a4(48), b3(35), o4(8 * 7 * 6 * 5);
  for (std::size_t i = 0; i < a4.size(); ++i) a4[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < b3.size(); ++i) b3[i] = static_cast<float>(i) / 4;
  sqdiff::subtract({a4.data(), sqdiff::DType::f32, {8, 1, 6, 1}}, {b3.data(), sqdiff::DType::f32, {7, 1, 5}},
                   {o4.data(), sqdiff::DType::f32, {8, 7, 6, 5}});
  bool all = true;
  for (int n = 0; n < 8; ++n)
    for (int c = 0; c < 7; ++c)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 5; ++w)
          all = all && o4[static_cast<std::size_t>(((n * 7 + c) * 6 + h) * 5 + w)] ==
                           a4[static_cast<std::size_t>(n * 6 + h)] - b3[static_cast<std::size_t>(c * 5 + w)];
  check(all, "f32 subtract [8,1,6,1] with [7,1,5]");

  // pdpd: b [3] aligned with a's dim 1.
  std::vector<float> a3(12, 10.0f), b1 = {1, 2, 3}, o3(12);
  sqdiff::Options pdpd;
  pdpd.broadcast = {sqdiff::BroadcastKind::pdpd, 1};
  sqdiff::squared_difference({a3.data(), sqdiff::DType::f32, {2, 3, 2}}, {b1.data(), sqdiff::DType::f32, {3}},
                             {o3.data(), sqdiff::DType::f32, {2, 3, 2}}, pdpd);
  check(o3 == std::vector<float>{81, 81, 64, 64, 49, 49, 81, 81, 64, 64, 49, 49}, "f32 pdpd axis 1");

  // Empty output: nothing read or written, null pointers allowed.
  sqdiff::subtract({nullptr, sqdiff::DType::f32, {0, 3}}, {b.data(), sqdiff::DType::f32, {3}},
                   {nullptr, sqdiff::DType::f32, {0, 3}});
}

void arithmetic() {
  const float inf = std::numeric_limits<float>::infinity();
  check(std::isnan(one<float>(false, sqdiff::DType::f32, inf, inf)), "f32 inf - inf is NaN");
  check(same_bits(one<float>(true, sqdiff::DType::f32, -0.0f, 0.0f), 0.0f), "f32 (-0 - 0)^2 is +0");
  check(one<double>(true, sqdiff::DType::f64, 1.5, -2.5) == 16.0, "f64 (1.5 + 2.5)^2");

  // f16 by its bits: 1 - 2 = -1; (256 - 0)^2 = 65536 overflows to +inf.
  check(one<std::uint16_t>(false, sqdiff::DType::f16, 0x3C00, 0x4000) == 0xBC00, "f16 1 - 2");
  check(one<std::uint16_t>(true, sqdiff::DType::f16, 0x5C00, 0x0000) == 0x7C00, "f16 (256 - 0)^2 = inf");
  // bf16: 1 - 0.5 = 0.5.
  check(one<std::uint16_t>(false, sqdiff::DType::bf16, 0x3F80, 0x3F00) == 0x3F00, "bf16 1 - 0.5");

  // Integers wrap around.
  check(one<std::uint8_t>(false, sqdiff::DType::u8, 0, 1) == 255, "u8 0 - 1");
  check(one<std::uint8_t>(true, sqdiff::DType::u8, 0, 255) == 1, "u8 (0 - 255)^2");
  check(one<std::uint8_t>(true, sqdiff::DType::u8, 0, 16) == 0, "u8 (0 - 16)^2");
  check(one<std::int8_t>(true, sqdiff::DType::i8, -128, 127) == 1, "i8 (-128 - 127)^2");
  check(one<std::int32_t>(false, sqdiff::DType::i32, std::numeric_limits<std::int32_t>::min(), 1) ==
            std::numeric_limits<std::int32_t>::max(),
        "i32 INT32_MIN - 1");
  check(one<std::int64_t>(false, sqdiff::DType::i64, std::numeric_limits<std::int64_t>::min(), 1) ==
            std::numeric_limits<std::int64_t>::max(),
        "i64 INT64_MIN - 1");
}

void errors() {
  // The SPEC's message, and nothing written.
  std::vector<float> a(90, 1.0f), b(480, 2.0f), out(480, 7.0f);
  try {
    sqdiff::squared_difference({a.data(), sqdiff::DType::f32, {3, 5, 6}},
                               {b.data(), sqdiff::DType::f32, {4, 10, 12}},
                               {out.data(), sqdiff::DType::f32, {4, 10, 12}});
    check(false, "[3,5,6] with [4,10,12] did not throw");
  } catch (const sqdiff::Error& e) {
    const std::string expected =
        "squared_difference: cannot broadcast [3,5,6] with [4,10,12] (numpy): dimension 0 is 3 vs 4";
    check(e.what() == expected, std::string("message was: ") + e.what());
  }
  bool untouched = true;
  for (float v : out) untouched = untouched && v == 7.0f;
  check(untouched, "the output was written by a failing call");

  // sqdiff::Error is a std::invalid_argument; mixed types and a wrong output shape are errors.
  float x = 1, y = 2;
  double z = 3;
  try {
    sqdiff::subtract({&x, sqdiff::DType::f32, {}}, {&z, sqdiff::DType::f64, {}}, {&y, sqdiff::DType::f32, {}});
    check(false, "f32 with f64 did not throw");
  } catch (const std::invalid_argument&) {
  }
  try {
    sqdiff::subtract({a.data(), sqdiff::DType::f32, {3}}, {b.data(), sqdiff::DType::f32, {3}},
                     {out.data(), sqdiff::DType::f32, {1, 3}});
    check(false, "an output of another shape than the broadcast did not throw");
  } catch (const sqdiff::Error&) {
  }
  try {
    sqdiff::Options options;
    options.broadcast.kind = sqdiff::BroadcastKind::none;
    sqdiff::subtract({a.data(), sqdiff::DType::f32, {3, 4}}, {b.data(), sqdiff::DType::f32, {3, 1}},
                     {out.data(), sqdiff::DType::f32, {3, 4}}, options);
    check(false, "none with [3,4] and [3,1] did not throw");
  } catch (const sqdiff::Error&) {
  }
}

}  // namespace

int main() {
  try {
    shapes();
    f32_numpy_and_in_place();
    arithmetic();
    errors();
  } catch (const std::exception& e) {
    std::printf("FAILED: unexpected exception: %s\n", e.what());
    return 1;
  }
  if (failures != 0) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("sqdiff consumer: all checks passed\n");
  return 0;
}
