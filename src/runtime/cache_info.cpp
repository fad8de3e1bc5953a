#include "runtime/cache_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

namespace sqdiff::detail {
namespace {

std::string sysfs_cache_path(int index, const char* field) {
  return "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/" + field;
}

// .../indexN/size reads like "32768K"; 0 when there is no such cache.
std::size_t sysfs_cache_size(int index) {
  std::ifstream file(sysfs_cache_path(index, "size"));
  std::size_t value = 0;
  char unit = 0;
  if (!(file >> value)) return 0;
  file >> unit;
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  return value;
}

std::atomic<std::size_t> overridden_last_level_bytes{0};

constexpr int kMaxSysfsCaches = 8;
constexpr int kAnyLevel = 0;

// The largest cache in sysfs of `level` (data or unified; kAnyLevel: any
// level), or 0.
std::size_t largest_sysfs_cache(int level) {
  std::size_t largest = 0;
  for (int index = 0; index < kMaxSysfsCaches; ++index) {
    if (level != kAnyLevel) {
      std::ifstream level_file(sysfs_cache_path(index, "level"));
      int cache_level = 0;
      if (!(level_file >> cache_level) || cache_level != level) continue;
    }
    largest = std::max(largest, sysfs_cache_size(index));
  }
  return largest;
}

}  // namespace

// The kernel's sysfs sizes first: glibc's sysconf decodes CPUID itself and can
// be wrong under a hypervisor (on an AMD EPYC VM it reports a 320 MiB L3 where
// the kernel says 32 MiB, which kept every output from streaming).
std::size_t last_level_cache_bytes() {
  if (const std::size_t overridden = overridden_last_level_bytes.load(std::memory_order_relaxed); overridden > 0) {
    return overridden;
  }
  static const std::size_t bytes = [] {
    if (const std::size_t from_kernel = largest_sysfs_cache(kAnyLevel); from_kernel > 0) return from_kernel;
    long reported = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    reported = std::max(reported, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    reported = std::max(reported, sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
    return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{8} << 20;
  }();
  return bytes;
}

void override_last_level_cache_bytes(std::size_t bytes) {
  overridden_last_level_bytes.store(bytes, std::memory_order_relaxed);
}

std::size_t level2_cache_bytes() {
  static const std::size_t bytes = [] {
    if (const std::size_t from_kernel = largest_sysfs_cache(2); from_kernel > 0) return from_kernel;
    long reported = 0;
#ifdef _SC_LEVEL2_CACHE_SIZE
    reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{256} << 10;
  }();
  return bytes;
}

}  // namespace sqdiff::detail
