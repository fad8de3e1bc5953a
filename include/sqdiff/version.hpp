// The library version, kept in one place (CMake reads it from here).
#pragma once

#define SQDIFF_VERSION_MAJOR 0
#define SQDIFF_VERSION_MINOR 1
#define SQDIFF_VERSION_PATCH 0

namespace sqdiff {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace sqdiff
