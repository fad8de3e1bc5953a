// The cache sizes decide when outputs stream and which calls count as within
// L2; they must come from the kernel, not from glibc's CPUID decoding (wrong
// under some hypervisors).
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <string>

#include "runtime/cache_info.hpp"

namespace {

// The largest /sys/.../cache/indexN/size, parsed here independently.
std::size_t largest_cache_from_sysfs() {
  std::size_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(file >> text) || text.empty()) continue;
    std::size_t multiplier = 1;
    if (text.back() == 'K') multiplier = std::size_t{1} << 10;
    if (text.back() == 'M') multiplier = std::size_t{1} << 20;
    if (multiplier != 1) text.pop_back();
    const std::size_t bytes = std::stoull(text) * multiplier;
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

TEST(CacheInfo, LastLevelCacheIsTheKernelsLargestCache) {
  const std::size_t from_sysfs = largest_cache_from_sysfs();
  if (from_sysfs > 0) {
    EXPECT_EQ(sqdiff::detail::last_level_cache_bytes(), from_sysfs);
  } else {
    EXPECT_GT(sqdiff::detail::last_level_cache_bytes(), 0u);  // no sysfs: sysconf or the default
  }
}

}  // namespace

namespace {

// The largest cache of level 2 in sysfs, parsed here independently; 0 if none.
std::size_t level2_cache_from_sysfs() {
  std::size_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level(dir + "level");
    std::ifstream size(dir + "size");
    std::string level_text;
    std::string size_text;
    if (!(level >> level_text) || level_text != "2" || !(size >> size_text) || size_text.empty()) continue;
    std::size_t multiplier = 1;
    if (size_text.back() == 'K') multiplier = std::size_t{1} << 10;
    if (size_text.back() == 'M') multiplier = std::size_t{1} << 20;
    if (multiplier != 1) size_text.pop_back();
    const std::size_t bytes = std::stoull(size_text) * multiplier;
    if (bytes > largest) largest = bytes;
  }
  return largest;
}

TEST(CacheInfo, Level2CacheIsTheKernelsLevel2) {
  const std::size_t from_sysfs = level2_cache_from_sysfs();
  if (from_sysfs > 0) {
    EXPECT_EQ(sqdiff::detail::level2_cache_bytes(), from_sysfs);
  } else {
    EXPECT_GT(sqdiff::detail::level2_cache_bytes(), 0u);  // no sysfs: sysconf or the default
  }
  EXPECT_LE(sqdiff::detail::level2_cache_bytes(), sqdiff::detail::last_level_cache_bytes());
}

}  // namespace
