// The version, kept in one place: these three numbers. CMake's
// project(VERSION) and the Python package's metadata (pyproject.toml) read them
// from this file; sqdiff::kVersion (so `sqdiff --version` and
// sqdiff.__version__) is spelled from them here.
#pragma once

#define SQDIFF_VERSION_MAJOR 0
#define SQDIFF_VERSION_MINOR 1
#define SQDIFF_VERSION_PATCH 0

#define SQDIFF_VERSION_STRINGIFY_(x) #x
#define SQDIFF_VERSION_STRINGIFY(x) SQDIFF_VERSION_STRINGIFY_(x)

namespace sqdiff {
inline constexpr const char* kVersion = SQDIFF_VERSION_STRINGIFY(SQDIFF_VERSION_MAJOR) "." SQDIFF_VERSION_STRINGIFY(
    SQDIFF_VERSION_MINOR) "." SQDIFF_VERSION_STRINGIFY(SQDIFF_VERSION_PATCH);
}  // namespace sqdiff
