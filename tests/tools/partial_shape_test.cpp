// Partial shapes (SPEC section 5) and their text forms.
#include "partial_shape.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff::tools {
namespace {

constexpr Broadcast kNumpy{BroadcastKind::numpy, -1};
constexpr Broadcast kNone{BroadcastKind::none, -1};
Broadcast pdpd(int64_t axis) { return Broadcast{BroadcastKind::pdpd, axis}; }

PartialShape P(std::string_view text) { return parse_partial_shape(text); }

std::string bcast(std::string_view a, std::string_view b, Broadcast mode = kNumpy) {
  return format_partial_shape(broadcast_partial_shape("test", P(a), P(b), mode));
}

std::string error_of(std::string_view a, std::string_view b, Broadcast mode = kNumpy) {
  try {
    bcast(a, b, mode);
  } catch (const sqdiff::Error& e) {
    return e.what();
  }
  return "no error";
}

// --- text forms --------------------------------------------------------------

TEST(PartialShapeParse, Forms) {
  EXPECT_EQ(P("8,1,6,1").dims, (std::vector<Dim>{{8, 8}, {1, 1}, {6, 6}, {1, 1}}));
  EXPECT_EQ(P("[8,1,6,1]"), P("8,1,6,1"));
  EXPECT_EQ(P(" [ 8 , 1 ] "), P("8,1"));
  EXPECT_EQ(P("(3,)"), P("3"));
  EXPECT_EQ(P("?,3").dims, (std::vector<Dim>{{0, kUnbounded}, {3, 3}}));
  EXPECT_EQ(P("-1,3"), P("?,3"));
  EXPECT_EQ(P("2..7").dims, (std::vector<Dim>{{2, 7}}));
  EXPECT_EQ(P("1..").dims, (std::vector<Dim>{{1, kUnbounded}}));
  EXPECT_EQ(P("1..?"), P("1.."));
  EXPECT_EQ(P("..5").dims, (std::vector<Dim>{{0, 5}}));
  EXPECT_EQ(P("4..4").dims, (std::vector<Dim>{{4, 4}}));
  const PartialShape scalar = P("[]");
  EXPECT_FALSE(scalar.dynamic_rank);
  EXPECT_TRUE(scalar.dims.empty());
  EXPECT_EQ(P(""), scalar);
  EXPECT_TRUE(P("...").dynamic_rank);
  EXPECT_TRUE(P("[...]").dynamic_rank);
  EXPECT_EQ(P("0").dims, (std::vector<Dim>{{0, 0}}));
  EXPECT_EQ(P("9223372036854775807").dims[0].lo, INT64_MAX);
}

TEST(PartialShapeParse, Errors) {
  for (const char* bad : {"a", "3,,4", ",", "[3", "3]", "-2", "7..2", "1...", "3,...", "1.5", "99999999999999999999",
                          "2..x", "x..2", "+3", "?3"}) {
    EXPECT_THROW(P(bad), sqdiff::Error) << bad;
  }
  try {
    P("3,x");
    FAIL();
  } catch (const sqdiff::Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"3,x\""), std::string::npos) << e.what();
  }
}

TEST(PartialShapeFormat, Forms) {
  EXPECT_EQ(format_partial_shape(P("8,7,6,5")), "[8,7,6,5]");
  EXPECT_EQ(format_partial_shape(P("?,3")), "[?,3]");
  EXPECT_EQ(format_partial_shape(P("2..7")), "[2..7]");
  EXPECT_EQ(format_partial_shape(P("1..")), "[1..?]");
  EXPECT_EQ(format_partial_shape(P("...")), "[...]");
  EXPECT_EQ(format_partial_shape(P("[]")), "[]");
  EXPECT_EQ(format_dim(Dim{0, 5}), "0..5");
  EXPECT_EQ(format_dim(Dim{}), "?");
  EXPECT_EQ(format_dim(Dim::fixed(0)), "0");
  // Round trip.
  for (const char* text : {"[8,7,6,5]", "[?,3]", "[2..7]", "[1..?]", "[...]", "[]", "[0..5,?,0]"}) {
    EXPECT_EQ(format_partial_shape(P(text)), text);
  }
}

TEST(PartialShape, StaticConversions) {
  EXPECT_TRUE(P("2,3").is_static());
  EXPECT_FALSE(P("2,?").is_static());
  EXPECT_FALSE(P("...").is_static());
  EXPECT_EQ(P("2,3").to_shape(), (Shape{2, 3}));
  EXPECT_THROW(P("2..3").to_shape(), sqdiff::Error);
  EXPECT_EQ(PartialShape::from_shape({4, 0}), P("4,0"));
}

TEST(BroadcastKindText, ParseAndFormat) {
  EXPECT_EQ(parse_broadcast_kind("none"), BroadcastKind::none);
  EXPECT_EQ(parse_broadcast_kind("NumPy"), BroadcastKind::numpy);
  EXPECT_EQ(parse_broadcast_kind("pdpd"), BroadcastKind::pdpd);
  EXPECT_THROW(parse_broadcast_kind("explicit"), sqdiff::Error);
  EXPECT_EQ(format_broadcast(kNumpy), "(numpy)");
  EXPECT_EQ(format_broadcast(pdpd(1)), "(pdpd, axis 1)");
}

// --- SPEC section 5: numpy ------------------------------------------------

TEST(PartialNumpy, Section5Examples) {
  EXPECT_EQ(bcast("1..3", "1..5"), "[1..5]");  // both contain 1: hull
  EXPECT_EQ(bcast("?", "?"), "[?]");
  EXPECT_EQ(bcast("?", "1"), "[?]");
  EXPECT_EQ(bcast("1", "?"), "[?]");
  EXPECT_EQ(bcast("1..3", "2..7"), "[2..7]");  // only one contains 1: the other
  EXPECT_EQ(bcast("2..7", "1..3"), "[2..7]");
  EXPECT_EQ(bcast("?", "3"), "[3]");
  EXPECT_EQ(bcast("3", "?"), "[3]");
  EXPECT_EQ(bcast("8..16", "4..12"), "[8..12]");  // otherwise the intersection
  EXPECT_NE(error_of("0", "5").find("dimension 0 is 0 vs 5"), std::string::npos);
  EXPECT_EQ(bcast("...", "3"), "[...]");  // dynamic rank on either side
  EXPECT_EQ(bcast("2,3", "..."), "[...]");
  EXPECT_EQ(bcast("...", "..."), "[...]");
}

TEST(PartialNumpy, MoreIntervals) {
  EXPECT_EQ(bcast("?,3", "2..7,1"), "[2..7,3]");
  EXPECT_EQ(bcast("2..", "3..5"), "[3..5]");
  EXPECT_EQ(bcast("0..", "2..4"), "[2..4]");
  EXPECT_EQ(bcast("1..", "5"), "[5]");
  EXPECT_NE(error_of("2..3", "4..5").find("dimension 0 is 2..3 vs 4..5"), std::string::npos);
  EXPECT_EQ(bcast("?", "0"), "[0]");
  EXPECT_EQ(bcast("8,1,6,1", "?,1..,5"), "[8,?,6,5]");
  EXPECT_EQ(bcast("[]", "?,2"), "[?,2]");
}

// Every static row of SPEC section 3's numpy table, through partial shapes.
TEST(PartialNumpy, Section3Table) {
  EXPECT_EQ(bcast("[]", "[]"), "[]");
  EXPECT_EQ(bcast("2,3", "1"), "[2,3]");
  EXPECT_EQ(bcast("3", "2,3"), "[2,3]");
  EXPECT_EQ(bcast("2,3,5", "[]"), "[2,3,5]");
  EXPECT_EQ(bcast("2,1,5", "1,4,5"), "[2,4,5]");
  EXPECT_EQ(bcast("6,5", "2,1,5"), "[2,6,5]");
  EXPECT_EQ(bcast("2,1,5", "4,1"), "[2,4,5]");
  EXPECT_EQ(bcast("3,2,1,4", "5,4"), "[3,2,5,4]");
  EXPECT_EQ(bcast("1,5,3", "5,2,1,3"), "[5,2,5,3]");
  EXPECT_EQ(bcast("8,1,6,1", "7,1,5"), "[8,7,6,5]");
  EXPECT_EQ(bcast("1,0,3", "3"), "[1,0,3]");
  EXPECT_THROW(bcast("3", "2"), sqdiff::Error);
  EXPECT_THROW(bcast("3,1,5", "4,4,5"), sqdiff::Error);
  EXPECT_THROW(bcast("2,3", "3,2"), sqdiff::Error);
}

TEST(PartialNumpy, ErrorMessageNamesWhoShapesAndMode) {
  const std::string message = error_of("3,5,6", "4,10,12");
  EXPECT_EQ(message, "test: cannot broadcast [3,5,6] with [4,10,12] (numpy): dimension 0 is 3 vs 4");
  EXPECT_EQ(error_of("?,3", "2..4,5"), "test: cannot broadcast [?,3] with [2..4,5] (numpy): dimension 1 is 3 vs 5");
}

TEST(PartialNumpy, ElementCountOverflow) {
  EXPECT_THROW(bcast("4294967296,4294967296", "1"), sqdiff::Error);
  EXPECT_EQ(bcast("4294967296,?", "1"), "[4294967296,?]");  // ? may be 0 or 1
  EXPECT_THROW(bcast("4294967296,1", "4294967296"), sqdiff::Error);
  // Counted as NumPy and the library count: a 0 dim does not excuse the
  // other dims' product (found by fuzz_partial_shape; [0,2^63-1,4] was "ok").
  EXPECT_THROW(bcast("0,9223372036854775807,4", "1"), sqdiff::Error);
  EXPECT_THROW(bcast("0,4611686018427387904", "4"), sqdiff::Error);
  EXPECT_THROW(bcast("?,4294967296,4294967296", "1"), sqdiff::Error);
  EXPECT_EQ(bcast("0,4611686018427387904", "1"), "[0,4611686018427387904]");
}

// --- SPEC section 5: none --------------------------------------------------

TEST(PartialNone, Rules) {
  EXPECT_EQ(bcast("256,56", "256,56", kNone), "[256,56]");
  EXPECT_EQ(bcast("?,56", "256,?", kNone), "[256,56]");  // intersection
  EXPECT_EQ(bcast("2..10", "5..", kNone), "[5..10]");
  EXPECT_EQ(bcast("...", "2,3", kNone), "[2,3]");  // dynamic rank gives the other
  EXPECT_EQ(bcast("2,?", "...", kNone), "[2,?]");
  EXPECT_EQ(bcast("...", "...", kNone), "[...]");
  EXPECT_NE(error_of("2,4", "1,2,4", kNone).find("ranks differ, 2 vs 3"), std::string::npos);
  EXPECT_NE(error_of("3,4", "3,1", kNone).find("dimension 1 is 4 vs 1"), std::string::npos);
  EXPECT_NE(error_of("2..3", "5..", kNone).find("(none)"), std::string::npos);
  EXPECT_EQ(error_of("?", "1", kNone), "no error");
  EXPECT_EQ(bcast("?", "1", kNone), "[1]");
}

// --- SPEC section 5: pdpd --------------------------------------------------

TEST(PartialPdpd, Section3Table) {
  EXPECT_EQ(bcast("2,3,4,5", "3,4", pdpd(1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "3,1", pdpd(1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "4,5", pdpd(-1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "4,5", pdpd(2)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "1,3", pdpd(0)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "[]", pdpd(-1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "5", pdpd(-1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "5", pdpd(3)), "[2,3,4,5]");
  EXPECT_EQ(bcast("2,3,4,5", "3,1,5", pdpd(1)), "[2,3,4,5]");
  EXPECT_EQ(bcast("8,7,6,5", "7,1,5", pdpd(-1)), "[8,7,6,5]");
  EXPECT_NE(error_of("2,3,4,5", "3,1", pdpd(-1)).find("dimension 2 of a is 4 vs 3"), std::string::npos);
  EXPECT_NE(error_of("2,3,4,5", "3,1", pdpd(-2)).find("axis -2 is less than -1"), std::string::npos);
  EXPECT_NE(error_of("2,3,4,1", "2,3,4,5", pdpd(-1)).find("dimension 3 of a is 1 vs 5"), std::string::npos);
  EXPECT_NE(error_of("8,1,6,1", "7,1,5", pdpd(1)).find("(pdpd, axis 1)"), std::string::npos);
  EXPECT_NE(error_of("2,3", "1,2,3", pdpd(-1)).find("b has rank 3, more than rank 2 of a"), std::string::npos);
  EXPECT_NE(error_of("2,3,4", "3,4", pdpd(2)).find("exceeds rank 3 of a"), std::string::npos);
}

TEST(PartialPdpd, Section5Rules) {
  EXPECT_EQ(bcast("1", "4..8", pdpd(-1)), "[4..8]");  // a = 1 with b = 4..8 gives 4..8
  EXPECT_EQ(bcast("2,1,5", "4..8", pdpd(1)), "[2,4..8,5]");
  EXPECT_THROW(bcast("1", "4", pdpd(-1)), sqdiff::Error);  // both static: b larger than a
  EXPECT_EQ(bcast("?,?,?", "3,1", pdpd(1)), "[?,3,?]");   // dims outside the window are kept
  EXPECT_EQ(bcast("2..9,?", "4..12", pdpd(0)), "[4..9,?]");
  EXPECT_EQ(bcast("5,2..3", "?,1", pdpd(0)), "[5,2..3]");
  EXPECT_EQ(bcast("...", "3", pdpd(-1)), "[...]");  // dynamic rank on either side
  EXPECT_EQ(bcast("2,3", "...", pdpd(-1)), "[...]");
  EXPECT_THROW(bcast("2..3,?", "5..6", pdpd(0)), sqdiff::Error);
  EXPECT_THROW(bcast("...", "3", pdpd(-3)), sqdiff::Error);
}

// Static partial shapes give exactly the library's broadcast_shape, or an
// error when it throws.
TEST(PartialShape, StaticAgreesWithLibrary) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> rank_dist(0, 4), dim_dist(0, 4), kind_dist(0, 2), axis_dist(-2, 4);
  for (int trial = 0; trial < 20000; ++trial) {
    Shape a(static_cast<std::size_t>(rank_dist(rng))), b(static_cast<std::size_t>(rank_dist(rng)));
    for (auto& d : a) d = dim_dist(rng) == 0 ? 1 : dim_dist(rng);
    for (auto& d : b) d = dim_dist(rng) == 0 ? 1 : dim_dist(rng);
    const Broadcast mode{static_cast<BroadcastKind>(kind_dist(rng)), axis_dist(rng)};
    std::optional<Shape> expected;
    try {
      expected = sqdiff::broadcast_shape(a, b, mode);
    } catch (const sqdiff::Error&) {
    }
    std::optional<Shape> got;
    try {
      got = broadcast_partial_shape("t", PartialShape::from_shape(a), PartialShape::from_shape(b), mode).to_shape();
    } catch (const sqdiff::Error&) {
    }
    ASSERT_EQ(expected, got) << format_partial_shape(PartialShape::from_shape(a)) << " "
                             << format_partial_shape(PartialShape::from_shape(b)) << " " << format_broadcast(mode);
  }
}

}  // namespace
}  // namespace sqdiff::tools
