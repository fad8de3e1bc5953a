// tools/crc32.cpp against CRC-32's definition (bit by bit, the reflected
// polynomial 0xEDB88320) and against zlib: every length from 0 to past a few
// folding blocks, at every alignment, with and without a CRC to continue.
#include "crc32.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

uint32_t crc32_by_definition(uint32_t crc, const unsigned char* data, std::size_t size) {
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::vector<unsigned char> random_bytes(std::size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> bytes(size);
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng());
  return bytes;
}

TEST(Crc32, CheckValue) {
  const std::string text = "123456789";  // the catalogue's check value for CRC-32/ISO-HDLC
  EXPECT_EQ(sqdiff::tools::crc32(0, text.data(), text.size()), 0xCBF43926u);
  EXPECT_EQ(sqdiff::tools::crc32(0, nullptr, 0), 0u);
}

TEST(Crc32, EveryLengthAndAlignmentMatchesTheDefinition) {
  const std::vector<unsigned char> bytes = random_bytes(1024 + 16, 1);
  std::mt19937 rng(2);
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t size = 0; size <= 1024; ++size) {
      const uint32_t start = size % 3 == 0 ? 0 : rng();
      const unsigned char* data = bytes.data() + offset;
      ASSERT_EQ(sqdiff::tools::crc32(start, data, size), crc32_by_definition(start, data, size))
          << "offset " << offset << ", size " << size << ", start " << start;
    }
  }
}

TEST(Crc32, LargeBuffersMatchZlibAndContinue) {
  const std::vector<unsigned char> bytes = random_bytes((std::size_t{1} << 22) + 77, 3);
  const uLong zlib = ::crc32(0, bytes.data(), static_cast<uInt>(bytes.size()));
  EXPECT_EQ(sqdiff::tools::crc32(0, bytes.data(), bytes.size()), zlib);
  // Pieces of odd sizes, each continuing the last: the same CRC.
  uint32_t crc = 0;
  std::size_t at = 0;
  for (std::size_t piece = 1; at < bytes.size(); piece = piece * 7 + 13) {
    const std::size_t size = std::min(piece % 100003, bytes.size() - at);
    crc = sqdiff::tools::crc32(crc, bytes.data() + at, size);
    at += size;
  }
  EXPECT_EQ(crc, zlib);
  // One flipped bit anywhere changes it.
  std::vector<unsigned char> flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_NE(sqdiff::tools::crc32(0, flipped.data(), flipped.size()), zlib);
}

}  // namespace
