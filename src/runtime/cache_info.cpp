#include "runtime/cache_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace sqdiff::detail {
namespace {

// /sys/devices/system/cpu/cpu0/cache/indexN/size reads like "32768K".
std::size_t largest_sysfs_cache() {
  std::size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::size_t value = 0;
    char unit = 0;
    if (!(file >> value)) continue;
    file >> unit;
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    largest = std::max(largest, value);
  }
  return largest;
}

}  // namespace

// The kernel's sysfs sizes first: glibc's sysconf decodes CPUID itself and can
// be wrong under a hypervisor (on an AMD EPYC VM it reports a 320 MiB L3 where
// the kernel says 32 MiB, which kept every output from streaming).
std::size_t last_level_cache_bytes() {
  static const std::size_t bytes = [] {
    if (const std::size_t from_kernel = largest_sysfs_cache(); from_kernel > 0) return from_kernel;
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

}  // namespace sqdiff::detail
