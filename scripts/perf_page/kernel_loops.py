"""Instructions per element of the reductions' kernels, counted in the benchmark binary.

This VM has no hardware counters (`perf stat` reports them unsupported), so the count is
static: the innermost loop of the kernel a case runs (for the SIMD target the run used), from
`objdump -d`, its instructions divided by the elements one pass of it handles. The pass's
elements are read off the loop itself: each pass holds one `anchor` instruction per vector of
f64 lanes (the FMA of a sum, the product of a double-double term or of a gradient).
"""

import collections
import re
import subprocess

# The f64 lanes of a vector, by Highway target.
TARGET_LANES = {"AVX3_SPR": 8, "AVX3_ZEN4": 8, "AVX3_DL": 8, "AVX3": 8, "AVX2": 4, "SSE4": 2, "SSSE3": 2}

# A reduce/ or grad/ case's kernel: (regex on the case name, function regex with {target}, the
# anchor's mnemonic without its packed-double suffix).
OPERANDS_VV, OPERANDS_VS = r"\(sqdiff::detail::Operands\)0", r"\(sqdiff::detail::Operands\)1"
CASE_KERNELS = [
    (r"^reduce/(all|rows)/(f32|[0-9x-]+/)", r"N_{target}::SquareRow<sqdiff::detail::N_{target}::WideF32, " + OPERANDS_VV,
     "vfmadd"),
    (r"^reduce/all/f16/", r"N_{target}::SquareRow<sqdiff::detail::N_{target}::WideF16, " + OPERANDS_VV, "vfmadd"),
    (r"^reduce/all/bf16/", r"N_{target}::SquareRow<sqdiff::detail::N_{target}::WideBF16, " + OPERANDS_VV, "vfmadd"),
    (r"^reduce/all/f64/", r"N_{target}::SquareRowDouble<sqdiff::detail::N_{target}::WideF64, " + OPERANDS_VV,
     "vmul"),
    (r"^reduce/per_channel/", r"N_{target}::SquareRow<sqdiff::detail::N_{target}::WideF32, " + OPERANDS_VS, "vfmadd"),
    (r"^reduce/columns/", r"N_{target}::SquareColumns<sqdiff::detail::N_{target}::WideF32, " + OPERANDS_VV, "vfmadd"),
    (r"^grad/same/f32/", r"N_{target}::DifferenceProductRow<sqdiff::detail::N_{target}::WideF32, "
                         r"sqdiff::detail::N_{target}::StoreF32, true>", "vmul"),
]


def _functions(binary):
    """{demangled name: [(address, mnemonic, operands)]} of every function in the binary."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary], capture_output=True, text=True,
                         check=True).stdout
    functions, body = {}, None
    for line in out.splitlines():
        head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if head:
            body = functions.setdefault(head.group(1), [])
            continue
        instruction = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if instruction and body is not None:
            body.append((int(instruction.group(1), 16), instruction.group(2), instruction.group(3)))
    return functions


def innermost_loops(body):
    """The innermost loops of a function (a backward jump and what it jumps over), each as a
    Counter of its mnemonics."""
    if not body:
        return []
    first = body[0][0]
    loops = set()
    for address, mnemonic, operands in body:
        target = re.match(r"([0-9a-f]+) <", operands)
        if mnemonic.startswith("j") and target and first <= int(target.group(1), 16) <= address:
            loops.add((int(target.group(1), 16), address))
    inner = [l for l in loops if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    return [collections.Counter(m for a, m, _ in body if start <= a <= end) for start, end in sorted(inner)]


class KernelLoops:
    """Instructions per element of each case's kernel in one binary, for one target."""

    def __init__(self, binary, target):
        self.lanes = TARGET_LANES.get(target)
        self.target = target
        self.functions = _functions(binary) if self.lanes else {}

    def per_element(self, case_name):
        """(instructions, elements per pass) of the case's main loop, or None where not known."""
        for case, function, anchor in CASE_KERNELS:
            if not re.search(case, case_name):
                continue
            pattern = re.compile(function.format(target=self.target))
            bodies = [body for name, body in self.functions.items() if pattern.search(name)]
            loops = [loop for body in bodies for loop in innermost_loops(body)]
            # The main loop: vectors only (the head and tail loops do scalar work), the most anchors.
            anchored = [(sum(c for m, c in loop.items() if re.fullmatch(anchor + r"[0-9]*pd", m)), loop)
                        for loop in loops if not any(re.search(r"(sd|ss)$", m) for m in loop)]
            anchored = [(vectors, loop) for vectors, loop in anchored if vectors > 0]
            if not anchored:
                return None
            vectors, loop = max(anchored, key=lambda pair: pair[0])
            return sum(loop.values()), vectors * self.lanes
        return None
