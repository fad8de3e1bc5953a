#!/usr/bin/env python3
"""Fails when a client of the library includes one of its internal headers.

The program (tools/) and the Python module (python/) use the library through
its public headers (include/sqdiff/) only, as any other user would: whatever
they need becomes public API (HACKING.md, "Beyond the library"). An include is
internal when it names a file under src/ (directly, as "src/...", or through
src/ on the include path, as "kernels/reduce_table.hpp") and no file of that
name lies next to the including file, in tools/ or python/src/, or in include/.

Files that still include internal headers are named, with those headers, in
an exception list (tests/scripts/public_headers_only.txt: "FILE HEADER" per
line): the check fails for an include the list does not name, and for a line
of the list that no longer matches an include, so that the list only shrinks.

Usage: check_public_headers.py [REPO_ROOT] [--exceptions FILE]
"""

import argparse
import pathlib
import re
import sys

CLIENT_DIRS = ("tools", "python")
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def internal_includes(root: pathlib.Path, source: pathlib.Path):
    """The includes of `source` that resolve to a header under src/."""
    text = source.read_text(encoding="utf-8", errors="replace")
    public_roots = [source.parent, root / "tools", root / "python" / "src", root / "include", root]
    for name in INCLUDE.findall(text):
        target = (source.parent / name).resolve()
        if (root / "src") in target.parents:  # "../../src/x.hpp"
            yield name
            continue
        if name.startswith("src/") or (root / "src" / name).is_file():
            if name.startswith("src/") or not any((base / name).is_file() for base in public_roots[:-1]):
                yield name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    parser.add_argument("--exceptions", type=pathlib.Path)
    args = parser.parse_args()
    root = args.root.resolve()
    exceptions_file = args.exceptions or root / "tests" / "scripts" / "public_headers_only.txt"
    allowed = set()
    for line in exceptions_file.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            file, header = line.split()
            allowed.add((file, header))

    found = set()
    for directory in CLIENT_DIRS:
        for source in sorted((root / directory).rglob("*")):
            if source.suffix in SOURCE_SUFFIXES and source.is_file():
                relative = source.relative_to(root).as_posix()
                found.update((relative, header) for header in internal_includes(root, source))

    failed = False
    for file, header in sorted(found - allowed):
        print(f"{file}: includes the library's internal header {header} (src/): use the public headers "
              f"(include/sqdiff/), or make what it needs public", file=sys.stderr)
        failed = True
    for file, header in sorted(allowed - found):
        print(f"{exceptions_file}: '{file} {header}' no longer matches an include: "
              f"remove the line (the list only shrinks)", file=sys.stderr)
        failed = True
    if not failed:
        print(f"public headers only: {len(found)} known exception(s) in {', '.join(CLIENT_DIRS)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
