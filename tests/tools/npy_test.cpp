// .npy reading and writing: every dtype, header versions, C and Fortran
// order, atomic writes, and clear errors for malformed and truncated files.
#include "npy.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace sqdiff::tools {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sqdiff_npy_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Files in the directory (to check that nothing is left behind).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A .npy file as bytes, header dict given verbatim (padded to 64 bytes).
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t len = header.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header + data;
}

const std::byte* as_bytes(const std::string& text) { return reinterpret_cast<const std::byte*>(text.data()); }

// The error of reading `bytes` as a .npz member's .npy bytes (2-byte voids refused).
std::string error_reading(const std::shared_ptr<std::string>& bytes) {
  try {
    NpyArray::from_bytes("member", as_bytes(*bytes), bytes->size(), bytes);
  } catch (const sqdiff::Error& e) {
    return e.what();
  }
  return "no error";
}

std::string error_opening(const std::string& path, TwoByteVoid two_byte_void = TwoByteVoid::refuse) {
  try {
    NpyArray::open(path, two_byte_void);
  } catch (const sqdiff::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NpyDescr, Mapping) {
  EXPECT_EQ(dtype_from_npy_descr("<f2"), DType::f16);
  EXPECT_EQ(dtype_from_npy_descr("<f4"), DType::f32);
  EXPECT_EQ(dtype_from_npy_descr("<f8"), DType::f64);
  EXPECT_EQ(dtype_from_npy_descr("|i1"), DType::i8);
  EXPECT_EQ(dtype_from_npy_descr("<i2"), DType::i16);
  EXPECT_EQ(dtype_from_npy_descr("<i4"), DType::i32);
  EXPECT_EQ(dtype_from_npy_descr("<i8"), DType::i64);
  EXPECT_EQ(dtype_from_npy_descr("|u1"), DType::u8);
  EXPECT_EQ(dtype_from_npy_descr("<u2"), DType::u16);
  EXPECT_EQ(dtype_from_npy_descr("<u4"), DType::u32);
  EXPECT_EQ(dtype_from_npy_descr("<u8"), DType::u64);
  EXPECT_EQ(dtype_from_npy_descr("=f4"), DType::f32);
  EXPECT_EQ(dtype_from_npy_descr("f4"), DType::f32);
  EXPECT_EQ(dtype_from_npy_descr("<u1"), DType::u8);
  EXPECT_EQ(dtype_from_npy_descr(">u1"), DType::u8);  // byte order means nothing for one byte
  for (const char* bad : {">f4", ">i2", "|f4", "|b1", "<c8", "<c16", "<U3", "|S3", "|O", "<f16", "<V2", "", "<",
                          "<x4", "<M8[s]"}) {
    EXPECT_EQ(dtype_from_npy_descr(bad), std::nullopt) << bad;
  }
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    const auto back = dtype_from_npy_descr(npy_descr(dtype));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, dtype == DType::bf16 ? DType::u16 : dtype);
  }
}

TEST_F(NpyTest, RoundTripEveryDtype) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    const std::size_t item = dtype_size(dtype);
    const Shape shape{3, 5, 7};
    std::vector<unsigned char> bytes(3 * 5 * 7 * item);
    for (std::size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<unsigned char>(k * 37 + i);
    const std::string file = path(std::string(dtype_name(dtype)) + ".npy");
    write_npy(file, dtype, shape, bytes.data());
    const std::string raw = read_all(file);
    EXPECT_EQ(raw.size() % 64, bytes.size() % 64) << "data starts at a multiple of 64";
    EXPECT_NE(raw.find("'descr': '" + npy_descr(dtype) + "'"), std::string::npos);
    EXPECT_NE(raw.find("'shape': (3, 5, 7)"), std::string::npos);
    NpyArray array = NpyArray::open(file);
    EXPECT_EQ(array.dtype(), dtype == DType::bf16 ? DType::u16 : dtype);
    EXPECT_EQ(array.shape(), shape);
    EXPECT_EQ(array.strides(), (Shape{35, 7, 1}));
    EXPECT_FALSE(array.fortran_order());
    EXPECT_EQ(std::memcmp(array.data(), bytes.data(), bytes.size()), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(array.data()) % item, 0u);
    if (dtype == DType::bf16) {
      array.reinterpret_as(DType::bf16);
      EXPECT_EQ(array.dtype(), DType::bf16);
      EXPECT_EQ(array.view().dtype, DType::bf16);
    }
  }
}

// np.save writes an ml_dtypes.bfloat16 array as '<V2' (other writers mark a void '|V2'): its
// elements are bf16 bits when the caller says so (--dtype bf16), and an error that says to pass
// --dtype bf16 otherwise. Other voids, and big-endian ones, stay errors either way.
TEST_F(NpyTest, TwoByteVoidIsBf16WhenAskedFor) {
  const std::string data("\x80\x3f\x00\x40\x40\xc0", 6);  // bf16 bits of 1.0, 2.0, -3.0, little-endian
  for (const std::string descr : {"<V2", "|V2", "=V2", "V2"}) {
    const auto bytes = std::make_shared<std::string>(
        npy_bytes("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (3,), }", data));
    write_all(path("v.npy"), *bytes);
    const NpyArray array = NpyArray::open(path("v.npy"), TwoByteVoid::bf16);
    EXPECT_EQ(array.dtype(), DType::bf16) << descr;
    EXPECT_EQ(array.shape(), Shape{3}) << descr;
    EXPECT_EQ(static_cast<const uint16_t*>(array.data())[0], 0x3F80) << descr;
    EXPECT_EQ(static_cast<const uint16_t*>(array.data())[2], 0xC040) << descr;
    // A .npz member's bytes, the same.
    const NpyArray member = NpyArray::from_bytes("member", as_bytes(*bytes), bytes->size(), bytes, TwoByteVoid::bf16);
    EXPECT_EQ(member.dtype(), DType::bf16) << descr;
    EXPECT_EQ(static_cast<const uint16_t*>(member.data())[1], 0x4000) << descr;
    // Not asked for: refused, saying what reads it.
    for (const std::string& message : {error_opening(path("v.npy")), error_reading(bytes)}) {
      EXPECT_NE(message.find("unsupported dtype descr '" + descr + "' (void/raw bytes)"), std::string::npos)
          << message;
      EXPECT_NE(message.find("(np.save of an ml_dtypes.bfloat16 array writes '" + descr +
                             "'), pass --dtype bf16 to sqdiff run or sqdiff compare"),
                std::string::npos)
          << message;
    }
  }
  struct Case {
    std::string descr;
    std::size_t bytes;
    std::string expected;
  };
  for (const Case& c : {Case{"|V4", 12, "void/raw bytes"}, Case{"|V1", 3, "void/raw bytes"},
                        Case{"<V3", 9, "void/raw bytes"}, Case{">V2", 6, "big-endian"}}) {
    const std::string dict = "{'descr': '" + c.descr + "', 'fortran_order': False, 'shape': (3,), }";
    write_all(path("other.npy"), npy_bytes(dict, std::string(c.bytes, 'x')));
    for (const TwoByteVoid two_byte_void : {TwoByteVoid::refuse, TwoByteVoid::bf16}) {
      const std::string message = error_opening(path("other.npy"), two_byte_void);
      EXPECT_NE(message.find(c.expected), std::string::npos) << c.descr << ": " << message;
      EXPECT_EQ(message.find("--dtype bf16"), std::string::npos) << c.descr << ": " << message;
    }
  }
  // Read as bf16, the file is checked as any other: its size against the shape.
  write_all(path("short.npy"),
            npy_bytes("{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }", data.substr(0, 5)));
  EXPECT_NE(error_opening(path("short.npy"), TwoByteVoid::bf16)
                .find("truncated .npy file: shape [3] of <V2 needs 6 data bytes, the file holds 5"),
            std::string::npos);
}

TEST_F(NpyTest, ShapesOfEveryRank) {
  const float value = 2.5f;
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{0}, Shape{4, 0, 3}, Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    const std::string file = path("s.npy");
    std::vector<float> data(static_cast<std::size_t>(std::max<int64_t>(1, [&] {
      int64_t n = 1;
      for (auto d : shape) n *= d;
      return n;
    }())), value);
    write_npy(file, DType::f32, shape, data.data());
    NpyArray array = NpyArray::open(file);
    EXPECT_EQ(array.shape(), shape);
    EXPECT_NE(array.data(), nullptr);
    if (shape.empty()) {
      EXPECT_EQ(*static_cast<const float*>(array.data()), value);
      EXPECT_NE(read_all(file).find("'shape': ()"), std::string::npos);
    }
  }
  write_npy(path("one.npy"), DType::u8, {5}, "abcde");
  EXPECT_NE(read_all(path("one.npy")).find("'shape': (5,)"), std::string::npos);
}

TEST_F(NpyTest, HeaderVersionsAndSpellings) {
  const std::string data("\x01\x00\x02\x00\x03\x00", 6);
  const std::vector<std::pair<std::string, int>> cases = {
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 1},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 2},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 3},
      {"{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (3,)}", 1},
      {"{'shape': (3L,), 'fortran_order': False, 'descr': '<i2'}", 1},
      {"{'descr':'<i2','fortran_order':False,'shape':(3,)}", 1},
      {"{'descr': '<i2', 'fortran_order': True, 'shape': (3,), }", 1},
  };
  for (const auto& [dict, major] : cases) {
    write_all(path("v.npy"), npy_bytes(dict, data, major));
    NpyArray array = NpyArray::open(path("v.npy"));
    EXPECT_EQ(array.dtype(), DType::i16) << dict;
    EXPECT_EQ(array.shape(), Shape{3}) << dict;
    EXPECT_EQ(static_cast<const int16_t*>(array.data())[2], 3) << dict;
  }
}

TEST_F(NpyTest, FortranOrderIsReversedStrides) {
  std::string data;
  for (int k = 0; k < 24; ++k) data += static_cast<char>(k);
  write_all(path("f.npy"), npy_bytes("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3, 4), }", data));
  NpyArray array = NpyArray::open(path("f.npy"));
  EXPECT_TRUE(array.fortran_order());
  EXPECT_EQ(array.strides(), (Shape{1, 2, 6}));
  const ConstTensorView view = array.view();
  EXPECT_EQ(view.strides, (Shape{1, 2, 6}));
  // Element [1,2,3] is at 1 + 2*2 + 3*6 = 23 in column-major order.
  EXPECT_EQ(static_cast<const uint8_t*>(view.data)[1 * 1 + 2 * 2 + 3 * 6], 23);
}

TEST_F(NpyTest, MisalignedDataIsCopied) {
  // A hand-made header whose data starts at an odd offset.
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 8 != 3) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  const double values[2] = {1.5, -2.25};
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  write_all(path("m.npy"), bytes);
  NpyArray array = NpyArray::open(path("m.npy"));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(array.data()) % 8, 0u);
  EXPECT_EQ(static_cast<const double*>(array.data())[1], -2.25);
}

TEST_F(NpyTest, MoveOnly) {
  write_npy(path("a.npy"), DType::u8, {3}, "xyz");
  NpyArray a = NpyArray::open(path("a.npy"));
  NpyArray b = std::move(a);
  EXPECT_EQ(static_cast<const char*>(b.data())[1], 'y');
  NpyArray c = NpyArray::open(path("a.npy"));
  c = std::move(b);
  EXPECT_EQ(static_cast<const char*>(c.data())[2], 'z');
}

TEST_F(NpyTest, Errors) {
  const std::string good = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
  struct Case {
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "the file is empty"},
      {"hello world, not numpy", "bad magic"},
      {"\x93NUMPY", "truncated"},
      {std::string("\x93NUMPY\x04\x00\x10\x00", 10), "unsupported .npy format version 4.0"},
      {good.substr(0, 40), "truncated"},
      {good.substr(0, good.size() - 1), "truncated .npy file: shape [2] of <f4 needs 8 data bytes, the file holds 7"},
      {good + "x", "trailing bytes"},
      {npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')), "big-endian"},
      {npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "ab"), "bool"},
      {npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')), "complex"},
      {npy_bytes("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0')), "string"},
      {npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')), "object"},
      {npy_bytes("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')), "byte-order"},
      {npy_bytes("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')),
       "structured"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", std::string(8, '\0')), "True or False"},
      {npy_bytes("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')), "no 'fortran_order'"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False}", std::string(8, '\0')), "no 'shape'"},
      {npy_bytes("{'fortran_order': False, 'shape': (2,)}", std::string(8, '\0')), "no 'descr'"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""), "non-negative"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", std::string(8, '\0')),
       "unexpected key"},
      {npy_bytes("'descr': '<f4'", std::string(8, '\0')), "expected '{'"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", std::string(8, '\0')), "trailing"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""), "int64"},
      {npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""), "too large"},
      {npy_bytes("{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')), "malformed"},
  };
  for (const Case& c : cases) {
    write_all(path("bad.npy"), c.bytes);
    const std::string message = error_opening(path("bad.npy"));
    EXPECT_NE(message.find(path("bad.npy")), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << "expected \"" << c.expected << "\" in: " << message;
  }
  EXPECT_NE(error_opening(path("missing.npy")).find("No such file"), std::string::npos);
  EXPECT_NE(error_opening(dir_.string()).find("not a regular file"), std::string::npos);
}

// Every truncation and random corruption of valid files: an error or a
// consistent array, never a crash (the sanitizer build checks the reads).
TEST_F(NpyTest, FuzzTruncationsAndCorruptions) {
  std::vector<std::string> seeds;
  for (const auto& [dtype, shape] : std::vector<std::pair<DType, Shape>>{
           {DType::f32, {3, 4}}, {DType::u8, {5}}, {DType::f64, {}}, {DType::i16, {2, 0, 3}}, {DType::u64, {2, 2}}}) {
    std::vector<unsigned char> data(256, 0x5a);
    write_npy(path("seed.npy"), dtype, shape, data.data());
    seeds.push_back(read_all(path("seed.npy")));
  }
  std::mt19937 rng(2024);
  int opened = 0, rejected = 0;
  const auto check = [&](const std::string& bytes) {
    write_all(path("fuzz.npy"), bytes);
    try {
      NpyArray array = NpyArray::open(path("fuzz.npy"));
      int64_t count = 1;
      for (const int64_t d : array.shape()) count *= d;
      const std::size_t item = dtype_size(array.dtype());
      ASSERT_LE(static_cast<std::size_t>(count) * item, bytes.size());
      // Touch every byte: out-of-bounds reads would fault or be reported by ASan.
      unsigned sum = 0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(count) * item; ++k) {
        sum += static_cast<const unsigned char*>(array.data())[k];
      }
      (void)sum;
      ++opened;
    } catch (const sqdiff::Error& e) {
      EXPECT_NE(std::string(e.what()).find(path("fuzz.npy")), std::string::npos);
      ++rejected;
    }
  };
  for (const std::string& seed : seeds) {
    for (std::size_t n = 0; n < seed.size(); ++n) check(seed.substr(0, n));
    for (int trial = 0; trial < 400; ++trial) {
      std::string bytes = seed;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = rng() % bytes.size();
        bytes[at] = static_cast<char>(trial % 3 == 0 ? "0123456789(),:' {}<>|fiuTF"[rng() % 26] : rng() % 256);
      }
      check(bytes);
    }
  }
  EXPECT_GT(opened, 0);
  EXPECT_GT(rejected, 0);
}

// What np.load refuses is refused here too: a list or an int as the shape,
// and more dims than NumPy has.
TEST_F(NpyTest, ShapesNumPyRefusesAreRefused) {
  const std::string data(6, '\0');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<i2', 'fortran_order': False, 'shape': [3], }", "'shape' is not a tuple"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': [1, 3], }", "'shape' is not a tuple"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (3), }", "an int in parentheses, not a tuple"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': 3, }", "'shape' is not a tuple"},
  };
  for (const auto& [dict, reason] : cases) {
    write_all(path("s.npy"), npy_bytes(dict, data));
    EXPECT_NE(error_opening(path("s.npy")).find(reason), std::string::npos) << dict << ": " << error_opening(path("s.npy"));
  }
  const auto ones = [](std::size_t rank) {
    std::string shape = "(";
    for (std::size_t i = 0; i < rank; ++i) shape += "1, ";
    return "{'descr': '|u1', 'fortran_order': False, 'shape': " + shape + "), }";
  };
  write_all(path("r64.npy"), npy_bytes(ones(64), "x"));
  EXPECT_EQ(NpyArray::open(path("r64.npy")).shape().size(), 64u);
  write_all(path("r65.npy"), npy_bytes(ones(65), "x"));
  EXPECT_NE(error_opening(path("r65.npy")).find("more than 64 dims, which NumPy cannot read"), std::string::npos);
  EXPECT_THROW(write_npy(path("w65.npy"), DType::u8, Shape(65, 1), "x"), sqdiff::Error);
}

// As NumPy counts: an empty shape whose other dims overflow is refused, not
// passed on to overflow later in its strides.
TEST_F(NpyTest, EmptyShapeWithHugeDimsIsRefused) {
  write_all(path("e.npy"),
            npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807, 9223372036854775807), }",
                      ""));
  EXPECT_NE(error_opening(path("e.npy")).find("is too large"), std::string::npos) << error_opening(path("e.npy"));
  write_all(path("e2.npy"), npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1152921504606846976), }", ""));
  EXPECT_NE(error_opening(path("e2.npy")).find("is too large"), std::string::npos);  // 2^60 * 8 bytes
  write_all(path("e3.npy"), npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1048576), }", ""));
  EXPECT_EQ(NpyArray::open(path("e3.npy")).element_count(), 0);
  EXPECT_THROW(NpyWriter(path("w.npy"), DType::f32, {0, INT64_MAX, INT64_MAX}), sqdiff::Error);
}

TEST_F(NpyTest, WriterIsAtomic) {
  write_npy(path("out.npy"), DType::u8, {3}, "old");
  {
    NpyWriter writer(path("out.npy"), DType::u8, {3});
    std::memcpy(writer.region(0, 3), "new", 3);
    // Before commit the destination is untouched and a temporary exists next to it.
    EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("out.npy")).data()), 3), "old");
    EXPECT_EQ(listing().size(), 2u);
    EXPECT_EQ(fs::path(writer.temp_path()).parent_path(), dir_);
    writer.commit();
    EXPECT_EQ(listing(), std::vector<std::string>{"out.npy"});
  }
  EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("out.npy")).data()), 3), "new");
  // Not committed: the temporary goes away, the destination stays as it was.
  {
    NpyWriter writer(path("out.npy"), DType::u8, {3});
    std::memcpy(writer.region(0, 3), "bad", 3);
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"out.npy"});
  EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("out.npy")).data()), 3), "new");
  {
    NpyWriter writer(path("fresh.npy"), DType::f32, {2, 2});
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"out.npy"});
}

// SIGINT at a random moment of a writer's life, many times over: the process
// dies of the signal and leaves no temporary behind. The moment between
// creating the temporary and registering it for removal is a few hundred
// nanoseconds wide, so the iterations are many and their timing random.
TEST_F(NpyTest, InterruptAtAnyMomentLeavesNoTemporary) {
  std::mt19937 random(20261122);
  std::uniform_int_distribution<int> delay_us(0, 400);
  for (int round = 0; round < 400; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      install_fatal_signal_handlers();
      for (;;) NpyWriter writer(path("o.npy"), DType::f32, {16});
    }
    ::usleep(static_cast<useconds_t>(delay_us(random)));
    ::kill(child, SIGINT);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "round " << round << ", status " << status;
    ASSERT_EQ(listing(), std::vector<std::string>{}) << "round " << round;
  }
}

// Regions must come in order and cover the data; asking out of order is an
// error, not a silent hole in the file.
TEST_F(NpyTest, WriterRegionsComeInOrder) {
  NpyWriter writer(path("r.npy"), DType::u8, {6});
  std::memcpy(writer.region(0, 2), "ab", 2);
  EXPECT_THROW(writer.region(3, 1), sqdiff::Error);
  EXPECT_THROW(writer.region(2, 5), sqdiff::Error);
  std::memcpy(writer.region(2, 3), "cde", 3);
  EXPECT_THROW(writer.commit(), sqdiff::Error);  // one byte missing
  std::memcpy(writer.region(5, 1), "f", 1);
  writer.commit();
  EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("r.npy")).data()), 6), "abcdef");
}

// A symbolic link's target gets the data (the link stays a link), a dangling
// link's target is created, and a replaced file keeps its mode.
TEST_F(NpyTest, WriterFollowsLinksAndKeepsTheMode) {
  fs::create_directories(dir_ / "real");
  fs::create_symlink("real/target.npy", dir_ / "link.npy");
  write_npy(path("link.npy"), DType::u8, {2}, "hi");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.npy"));
  EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("real/target.npy")).data()), 2), "hi");
  write_npy(path("link.npy"), DType::u8, {2}, "yo");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.npy"));
  EXPECT_EQ(std::string(static_cast<const char*>(NpyArray::open(path("real/target.npy")).data()), 2), "yo");
  EXPECT_EQ(fs::directory_iterator(dir_ / "real")->path().filename(), "target.npy");  // no temporary left

  write_npy(path("private.npy"), DType::u8, {1}, "a");
  ASSERT_EQ(::chmod(path("private.npy").c_str(), 0600), 0);
  write_npy(path("private.npy"), DType::u8, {1}, "b");
  struct stat st {};
  ASSERT_EQ(::stat(path("private.npy").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// A legal file name of 240 bytes: the temporary's name beside it must not
// exceed the file system's 255-byte limit.
TEST_F(NpyTest, WriterTakesLongNames) {
  const std::string name = std::string(236, 'n') + ".npy";
  write_npy(path(name), DType::u8, {1}, "z");
  EXPECT_EQ(listing(), std::vector<std::string>{name});
}

// A device is written through, not replaced by a regular file. A node of our
// own (the null device's numbers) where we may make one, so that a writer
// that replaces devices breaks only this test's directory.
TEST_F(NpyTest, WriterWritesThroughDevices) {
  std::string device = "/dev/null";
  if (::geteuid() == 0 && ::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) device = path("null");
  struct stat before {};
  ASSERT_EQ(::stat(device.c_str(), &before), 0);
  write_npy(device, DType::f32, {2, 2}, std::string(16, '\0').data());
  struct stat after {};
  ASSERT_EQ(::stat(device.c_str(), &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(NpyTest, WriterPermissionsFollowUmask) {
  write_npy(path("p.npy"), DType::u8, {1}, "x");
  struct stat st {};
  ASSERT_EQ(::stat(path("p.npy").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(NpyTest, WriterErrors) {
  EXPECT_THROW(NpyWriter(path("no/such/dir/out.npy"), DType::f32, {2}), sqdiff::Error);
  write_all(path("file"), "x");
  try {
    NpyWriter writer(path("file/out.npy"), DType::f32, {2});
    FAIL();
  } catch (const sqdiff::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path("file/out.npy")), std::string::npos) << e.what();
  }
  EXPECT_THROW(NpyWriter(path("neg.npy"), DType::f32, {2, -1}), sqdiff::Error);
  EXPECT_THROW(NpyWriter(path("huge.npy"), DType::f32, {INT64_MAX / 2, 4}), sqdiff::Error);
  EXPECT_THROW(NpyWriter(path(""), DType::f32, {2}), sqdiff::Error);
  EXPECT_EQ(listing(), std::vector<std::string>{"file"});
}

// Version 2.0's 4-byte header length: read (NumPy writes it for a header
// beyond 65535 bytes, which no shape of at most 64 dims needs, so the writer
// itself stays at 1.0).
TEST_F(NpyTest, LargeVersion2HeaderIsRead) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }";
  dict.append(70000, ' ');
  const float value = 7;
  write_all(path("wide.npy"), npy_bytes(dict, std::string(reinterpret_cast<const char*>(&value), 4), 2));
  NpyArray array = NpyArray::open(path("wide.npy"));
  EXPECT_EQ(array.shape(), (Shape{1, 1}));
  EXPECT_EQ(*static_cast<const float*>(array.data()), 7.0f);
  write_npy(path("deep.npy"), DType::f32, Shape(64, 1), &value);
  EXPECT_EQ(read_all(path("deep.npy"))[6], 1);
}

}  // namespace
}  // namespace sqdiff::tools
