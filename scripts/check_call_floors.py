#!/usr/bin/env python3
"""Fails when a call inside the library goes up its floors instead of down.

src/ is built in floors (HACKING.md, "How a call flows"): api/ holds the entry
points; beneath it the op families (elementwise/, reduce/, quantized/,
compare/), which may call one another; beneath them shape/ and kernels/; and
runtime/ beneath everything. A function defined on one floor may be called from
its own floor or from above, never from below: a helper every family needs
belongs on the floor beneath the families, not in api/.

Calls are read from the compiled objects rather than from the includes, since a
public header can declare what api/ defines (sqdiff/dtype.hpp's dtype_name was
one such arrow): for each object, the symbols it leaves undefined (nm -u) that
another folder's object defines (strong definitions only: inline functions and
templates are defined wherever they are used). Includes of "api/..." from below
are refused as well.

Usage: check_call_floors.py OBJECT_DIR [--objects A.o:B.o:...] [--source-root DIR]
  OBJECT_DIR: the library target's object directory, whose subfolders are src/'s
  (CMake: BUILD/src/CMakeFiles/sqdiff.dir); --objects: the objects the library
  is linked from (CMake: $<TARGET_OBJECTS:sqdiff>), so that objects a renamed
  source left behind are not read; by default every object under OBJECT_DIR.
  Prints every arrow between folders, with a count of symbols, and exits 1 if
  any goes up.
"""

import argparse
import collections
import pathlib
import re
import subprocess
import sys

FLOORS = {
    "api": 3,
    "elementwise": 2,
    "reduce": 2,
    "quantized": 2,
    "compare": 2,
    "shape": 1,
    "kernels": 1,
    "runtime": 0,
}
STRONG_DEFINITION = set("TDBR")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def nm(arguments):
    return subprocess.run(["nm", *arguments], check=True, capture_output=True, text=True).stdout.splitlines()


def folder_of(object_dir: pathlib.Path, path: pathlib.Path) -> str:
    return path.relative_to(object_dir).parts[0]


def symbol_arrows(object_dir: pathlib.Path, objects):
    """{(from folder, to folder): [symbols]} for calls between folders."""
    if not objects:
        raise SystemExit(f"check_call_floors: no object files under {object_dir}")
    defined_in = {}
    for obj in objects:
        for line in nm(["--defined-only", "-g", str(obj)]):
            parts = line.split()
            if len(parts) == 3 and parts[1] in STRONG_DEFINITION:
                defined_in[parts[2]] = folder_of(object_dir, obj)
    arrows = collections.defaultdict(set)
    for obj in objects:
        here = folder_of(object_dir, obj)
        for line in nm(["-u", str(obj)]):
            symbol = line.split()[-1]
            there = defined_in.get(symbol)
            if there is not None and there != here:
                arrows[(here, there)].add(symbol)
    return arrows


def include_arrows(source_root: pathlib.Path):
    """[(file, include)] for files below api/ that include one of api/'s headers."""
    found = []
    for source in sorted(source_root.rglob("*")):
        if not source.is_file() or source.relative_to(source_root).parts[0] == "api":
            continue
        text = source.read_text(encoding="utf-8", errors="replace")
        found += [(source.relative_to(source_root), name) for name in INCLUDE.findall(text) if name.startswith("api/")]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("object_dir", type=pathlib.Path)
    parser.add_argument("--objects", help="the library's object files, separated by ':'")
    parser.add_argument("--source-root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent / "src")
    args = parser.parse_args()

    failures = []
    object_dir = args.object_dir.resolve()
    if args.objects:
        objects = sorted(pathlib.Path(name).resolve() for name in args.objects.split(":") if name)
    else:
        objects = sorted(object_dir.rglob("*.o"))
    arrows = symbol_arrows(object_dir, objects)
    for (here, there), symbols in sorted(arrows.items()):
        unknown = [name for name in (here, there) if name not in FLOORS]
        if unknown:
            failures.append(f"folder {unknown[0]}/ has no floor: add it to FLOORS in {pathlib.Path(__file__).name}")
            continue
        up = FLOORS[there] > FLOORS[here]
        print(f"{here}/ -> {there}/: {len(symbols)} symbols{'  (UP)' if up else ''}")
        if up:
            names = subprocess.run(["c++filt"], input="\n".join(sorted(symbols)[:5]), capture_output=True,
                                   text=True).stdout.split("\n")
            failures.append(f"{here}/ calls up into {there}/: " + "; ".join(name for name in names if name))
    for source, name in include_arrows(args.source_root):
        failures.append(f"src/{source} includes \"{name}\" (api/ is the entry, nothing below includes it)")

    for failure in failures:
        print(f"check_call_floors: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"check_call_floors: every call between {len(FLOORS)} folders goes down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
