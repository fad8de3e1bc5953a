// The cache sizes decide when outputs stream and which calls count as within
// L2; they must come from the kernel, not from glibc's CPUID decoding (wrong
// under some hypervisors).
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <string>

#include "runtime/cache_info.hpp"

namespace {

// The largest /sys/.../cache/indexN/size among the caches whose level is
// `level` (any level: 0), parsed here independently; 0 if there is none.
std::size_t largest_cache_from_sysfs(int level = 0) {
  std::size_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level");
    std::ifstream size_file(dir + "size");
    int cache_level = 0;
    std::string text;
    if (level != 0 && (!(level_file >> cache_level) || cache_level != level)) continue;
    if (!(size_file >> text) || text.empty()) continue;
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

TEST(CacheInfo, AnOverrideHoldsUntilCleared) {
  const std::size_t machine = sqdiff::detail::last_level_cache_bytes();
  sqdiff::detail::override_last_level_cache_bytes(12345);
  EXPECT_EQ(sqdiff::detail::last_level_cache_bytes(), 12345u);
  sqdiff::detail::override_last_level_cache_bytes(0);
  EXPECT_EQ(sqdiff::detail::last_level_cache_bytes(), machine);
}

TEST(CacheInfo, Level2CacheIsTheKernelsLevel2) {
  const std::size_t from_sysfs = largest_cache_from_sysfs(2);
  if (from_sysfs > 0) {
    EXPECT_EQ(sqdiff::detail::level2_cache_bytes(), from_sysfs);
  } else {
    EXPECT_GT(sqdiff::detail::level2_cache_bytes(), 0u);  // no sysfs: sysconf or the default
  }
  EXPECT_LE(sqdiff::detail::level2_cache_bytes(), sqdiff::detail::last_level_cache_bytes());
}

}  // namespace
