// subtract_backward with one gradient skipped: the skipped input's shape is
// not known, so it must not constrain the call. In pdpd with an axis other
// than -1, b cannot have grad_out's shape (its window would not fit), which
// once made a legal call with grad_b skipped an error.
#include <gtest/gtest.h>

#include <vector>

#include "sqdiff/error.hpp"
#include "sqdiff/gradients.hpp"

namespace {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::ConstTensorView;
using sqdiff::DType;
using sqdiff::TensorView;

TEST(SkippedGradient, PdpdWithAnAxisNeedsNoShapeForASkippedB) {
  // a [2,3,4], b [3] at axis 1: pdpd never stretches a, so grad_a = grad_out.
  std::vector<float> g(24);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i) - 7.5f;
  std::vector<float> grad_a(24, -1.0f);
  const ConstTensorView grad_out{g.data(), DType::f32, {2, 3, 4}};
  const TensorView ga{grad_a.data(), DType::f32, {2, 3, 4}};
  sqdiff::Options options;
  options.broadcast = Broadcast{BroadcastKind::pdpd, 1};
  sqdiff::subtract_backward(grad_out, &ga, nullptr, options);
  EXPECT_EQ(grad_a, g);
}

TEST(SkippedGradient, PdpdWithAnAxisStillSumsTheGradientOfB) {
  std::vector<float> g(24, 1.0f);
  std::vector<float> grad_b(3, 99.0f);
  const ConstTensorView grad_out{g.data(), DType::f32, {2, 3, 4}};
  const TensorView gb{grad_b.data(), DType::f32, {3}};
  sqdiff::Options options;
  options.broadcast = Broadcast{BroadcastKind::pdpd, 1};
  sqdiff::subtract_backward(grad_out, nullptr, &gb, options);
  EXPECT_EQ(grad_b, (std::vector<float>{-8.0f, -8.0f, -8.0f}));
}

TEST(SkippedGradient, AnOutOfRangePdpdAxisIsStillAnError) {
  std::vector<float> g(24, 1.0f);
  std::vector<float> grad_a(24, 5.0f);
  const ConstTensorView grad_out{g.data(), DType::f32, {2, 3, 4}};
  const TensorView ga{grad_a.data(), DType::f32, {2, 3, 4}};
  sqdiff::Options options;
  options.broadcast = Broadcast{BroadcastKind::pdpd, 7};
  EXPECT_THROW(sqdiff::subtract_backward(grad_out, &ga, nullptr, options), sqdiff::Error);
  EXPECT_EQ(grad_a, std::vector<float>(24, 5.0f));
}

}  // namespace
