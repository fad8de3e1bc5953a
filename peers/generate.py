"""Runs sqdiff and every peer on the same inputs and writes docs/COMPATIBILITY.md and
docs/compatibility.json (what tests/peers/test_compatibility.py compares against).

    scripts/compatibility.sh            # venv, install the pinned peers, run, write both files
    PYTHONPATH=build/python:peers build-peers/venv/bin/python peers/generate.py [--peers openvino,...]
"""

import argparse
import json
import os
import pathlib
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import sqdiff  # noqa: E402

import notes  # noqa: E402
from cases import DTYPES, SEED  # noqa: E402
from compare import CATEGORY_TEXT  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
PEERS = ["openvino", "onnxruntime", "arrays", "litert", "openvino_ir", "litert_quantized", "tflite_corpus"]
MODULES = {"openvino": "openvino_peer", "onnxruntime": "onnxruntime_peer", "arrays": "array_peers",
           "litert": "litert_peer", "openvino_ir": "openvino_ir",
           "litert_quantized": "litert_quantized_peer", "tflite_corpus": "corpus_peer"}
SIGNATURE_KEYS = ("result", "elements", "differing", "categories", "max_ulps", "refused_cases")


def cpu_flags():
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    wanted = {"avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "f16c"}
    return sorted(wanted & set(line.split(":", 1)[-1].split()))


def collect(peers=PEERS):
    """{"versions": {peer: {...}}, "results": {config: {"op dtype mode": record}}, ...}."""
    import importlib
    out = {"sqdiff": {"version": sqdiff.__version__, "simd_target": sqdiff.simd_target()},
           "machine": {"cpu_flags": cpu_flags(), "python": platform.python_version(),
                       "numpy": np.__version__},
           "seed": SEED, "versions": {}, "results": {}, "facts": {}, "extra": {}}
    for peer in peers:
        module = importlib.import_module(MODULES[peer])
        out["versions"][peer] = module.versions()
        # run(): {config: Groups}, and for checks that are not op x type x mode tables,
        # "extra": {"signature": {...}, "markdown": "..."}.
        for config, groups in module.run().items():
            if config == "extra":
                out["extra"][peer] = groups
            else:
                out["results"][config] = {" ".join(key): record for key, record in groups.records().items()}
                facts = groups.facts()
                if facts:
                    out["facts"][config] = facts
    return out


def _leaves(prefix, value):
    """{"prefix: key: ...: key": leaf} of nested dicts: a change shows as the one figure changed."""
    if not isinstance(value, dict) or not value:
        return {prefix: value}
    out = {}
    for key, inner in value.items():
        out.update(_leaves(f"{prefix}: {key}", inner))
    return out


def signature(summary):
    """What the test compares: each group's classification, without the free text."""
    sig = {}
    for config, groups in summary["results"].items():
        for key, record in groups.items():
            sig[f"{config}: {key}"] = {k: record[k] for k in SIGNATURE_KEYS if k in record}
    for config, facts in summary.get("facts", {}).items():
        sig.update(_leaves(f"{config}: facts", facts))
    for peer, extra in summary.get("extra", {}).items():
        for key, value in extra.get("signature", {}).items():
            sig[f"{peer}: {key}"] = value
    return sig


SHORT = {"rounding": "rounding", "nan_bits": "NaN bits", "nan_vs_number": "NaN vs number",
         "zero_sign": "sign of 0", "flush_to_zero": "flush to 0", "overflow": "overflow",
         "saturation": "saturation", "narrowed": "narrower type", "integer_other": "other integer", "inf_sign": "sign of inf"}


def _cell(record, footnotes):
    if record is None:
        return "—"
    if record["result"] == "rejected":
        footnotes.setdefault(record["reason"], len(footnotes) + 1)
        return f"refused [{footnotes[record['reason']]}]"
    if record["result"] == "identical":
        text = "**identical**"
    else:
        parts = [f"{SHORT[c]} {n}" for c, n in record["categories"].items()]
        text = f"{record['differing']}/{record['elements']} differ: " + ", ".join(parts)
        if "max_ulps" in record:
            ulps = record["max_ulps"]
            text += f" (max {ulps} ulps)" if ulps < 10**6 else f" (max {ulps:.1e} ulps)"
    if record.get("refused_cases"):
        footnotes.setdefault(record["reason"], len(footnotes) + 1)
        text += f"; {record['refused_cases']} cases refused [{footnotes[record['reason']]}]"
    return text


def _anchor(title):
    """GitHub's anchor of a heading."""
    return "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c in "-_")


def markdown(summary):
    lines = ["# Compatibility with other runtimes", "",
             "Generated by `scripts/compatibility.sh` (peers/generate.py) from a run of the real peers: do "
             "not edit by hand. `tests/peers/test_compatibility.py` reruns them and fails when any "
             "classification below changes (docs/compatibility.json holds the figures).", "",
             notes.INTRO, "",
             f"sqdiff {summary['sqdiff']['version']} ({summary['sqdiff']['simd_target']}), "
             f"Python {summary['machine']['python']}, NumPy {summary['machine']['numpy']}, "
             f"CPU flags: {', '.join(summary['machine']['cpu_flags'])}; seed {summary['seed']}.", "",
             "Each cell: **identical** (every element has the same bits, NaN payloads included), or how "
             "many elements differ and how:", ""]
    for category, text in CATEGORY_TEXT.items():
        lines.append(f"- *{SHORT[category]}*: {text}")
    lines.append("")
    order = [c for c in notes.TITLES if c in summary["results"]]
    order += [c for c in summary["results"] if c not in order]
    lines += ["| peer | identical | differ | refused (whole op x type x mode) |", "|---|---|---|---|"]
    for config in order:
        results = [r["result"] for r in summary["results"][config].values()]
        lines.append(f"| [{notes.TITLES.get(config, config)}](#{_anchor(notes.TITLES.get(config, config))}) | "
                     f"{results.count('identical')} | {results.count('differs')} | {results.count('rejected')} |")
    lines.append("")
    for config in order:
        groups = summary["results"][config]
        peer = notes.PEER_OF.get(config, config)
        lines += [f"## {notes.TITLES.get(config, config)}", ""]
        version = summary["versions"].get(peer, {})
        if version:
            lines += ["Versions: " + "; ".join(f"{k} {v}" for k, v in version.items()) + ".", ""]
        modes = [m for m in ("none", "numpy", "pdpd") if any(k.endswith(" " + m) for k in groups)]
        ops = [o for o in ("squared_difference", "subtract") if any(k.startswith(o + " ") for k in groups)]
        header = ["type"] + [f"{op} {mode}" for op in ops for mode in modes]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        footnotes = {}
        for dtype in DTYPES:
            cells = [_cell(groups.get(f"{op} {dtype} {mode}"), footnotes) for op in ops for mode in modes]
            if all(c == "—" for c in cells):
                continue
            lines.append(f"| {dtype} | " + " | ".join(cells) + " |")
        lines.append("")
        for reason, number in footnotes.items():
            lines.append(f"[{number}] `{reason}`  ")
        if footnotes:
            lines.append("")
        examples = [(key, cat, text) for key, record in groups.items()
                    for cat, text in record.get("examples", {}).items()]
        if examples:
            lines += ["<details><summary>One element of each kind of difference</summary>", ""]
            lines += [f"- {key}, {SHORT[cat]}: {text}" for key, cat, text in examples]
            lines += ["", "</details>", ""]
        if config in notes.NOTES:
            lines += [notes.note(config, groups, summary.get("facts", {}).get(config, {})), ""]
    for peer, extra in summary.get("extra", {}).items():
        if "markdown" in extra:
            lines += [extra["markdown"], ""]
        if peer in notes.NOTES:
            lines += [notes.note(peer, {}, {}), ""]
    lines += [notes.NOT_DONE, ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated: " + ",".join(PEERS))
    parser.add_argument("--json", default=str(ROOT / "docs" / "compatibility.json"))
    parser.add_argument("--markdown", default=str(ROOT / "docs" / "COMPATIBILITY.md"))
    args = parser.parse_args()
    summary = collect([p for p in args.peers.split(",") if p])
    # The page is made from the JSON as written (sorted keys), as the test remakes it.
    text = json.dumps(summary, indent=1, sort_keys=True) + "\n"
    summary = json.loads(text)
    pathlib.Path(args.json).write_text(text)
    pathlib.Path(args.markdown).write_text(markdown(summary))
    print(f"wrote {args.json} and {args.markdown}")


if __name__ == "__main__":
    main()
