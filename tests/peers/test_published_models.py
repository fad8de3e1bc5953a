"""`sqdiff tflite` on published models that the project did not write (issue 32, item 4): every
.tflite file of the mediapipe wheel pinned in requirements/published_models.txt, extracted by
scripts/converter_corpus.sh into $SQDIFF_PUBLISHED_DIR/models.

`sqdiff tflite MODEL` (the check) never crashes (exit 0 or 1, never a signal), names every
operator of subgraph 0 as LiteRT's schema does (no "builtin operator N" for a code the schema
names; CUSTOM with its custom code), reports what it cannot run in one line per kind, and exits
with 1 exactly when a model holds such an operator. The figures (operators, kinds, how many sqdiff
runs) are checked by test_compatibility.py, from the same run.

Run by scripts/compatibility.sh --check, in the venv of requirements/peers.txt.
"""

import collections
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import corpus_peer  # noqa: E402


@pytest.fixture(scope="module")
def published():
    return corpus_peer.collect()["published"]


def test_the_pinned_wheel_gave_its_models(published):
    pin = (ROOT / "requirements" / "published_models.txt").read_text().split("mediapipe==", 1)[1].split()[0]
    assert corpus_peer.versions()["published models"].startswith(f"mediapipe-{pin}-")
    assert len(published) >= 14
    assert all(record["operators"] > 0 for record in published.values())


def test_sqdiff_never_crashes(published):
    for name, record in published.items():
        assert record["exit"] in (0, 1), (name, record["exit"])


def test_every_operator_is_named_as_the_schema_names_it(published):
    for name, record in published.items():
        assert record["unnamed"] == [], (name, record["unnamed"])
        assert not any(kind.startswith("builtin operator ") for kind in record["kinds"]), name
        named = collections.Counter(record["sqdiff_checked"])
        for kind, counts in record["sqdiff_not_run"].items():
            named[kind] += sum(counts)
        # Every operator once, under the schema's name (CUSTOM "code" for custom operators).
        assert dict(named) == record["kinds"], (name, dict(named), record["kinds"])
        assert sum(named.values()) == record["operators"], name
        assert record["header"].endswith(f"{record['operators']} operator" + ("s" if record["operators"] != 1 else "")), (
            name, record["header"])


def test_the_report_is_one_line_per_kind_and_the_exit_status_says_whether_it_runs(published):
    for name, record in published.items():
        for kind, counts in record["sqdiff_not_run"].items():
            assert len(counts) == 1, (name, kind, counts)  # one line per kind
        runnable = not record["sqdiff_not_run"] and record["sqdiff_wrong"] == 0
        assert record["exit"] == (0 if runnable else 1), (name, record["exit"], record["last_error"])
        if record["sqdiff_not_run"]:
            assert "cannot run" in record["last_error"], (name, record["last_error"])
    customs = {kind for record in published.values() for kind in record["kinds"] if kind.startswith("CUSTOM ")}
    assert customs and all(kind.startswith('CUSTOM "') and kind.endswith('"') and len(kind) > 9 for kind in customs)


# --- sqdiff.verify in LiteRT on the published models (issue 32, item 4) ---------------------------

def _verify_all(resolver):
    """{model: VerifyReport}, and {model: error} for those LiteRT cannot run with this resolver."""
    import sqdiff
    reports, errors = {}, {}
    for path in corpus_peer.published_files():
        try:
            reports[path.name] = sqdiff.verify(str(path), random_seed=1, resolver=resolver)
        except RuntimeError as error:  # LiteRT's own refusal, passed on as it is
            errors[path.name] = str(error)
    return reports, errors


def test_verify_finds_the_reference_kernels_identical_to_sqdiff():
    """With LiteRT's reference kernels every operator sqdiff runs (their DEQUANTIZE of float16
    weights, MEAN, RELU) is recomputed from LiteRT's own input tensors and identical; the models
    LiteRT cannot run there are those with custom operators only the default resolver has."""
    reports, errors = _verify_all("reference")
    assert all("unresolved custom op" in e for e in errors.values()), errors
    assert len(reports) >= 10
    kinds = collections.Counter(op.kind for r in reports.values() for op in r.ops)
    assert kinds["DEQUANTIZE"] > 1000 and kinds["MEAN"] > 0, kinds
    for name, report in reports.items():
        assert report.passed, (name, [op.to_dict() for op in report.ops if op.differing][:3])
        assert not report.skipped, (name, report.skipped[:3])


def test_verify_finds_xnnpacks_means_a_last_place_apart():
    """With the default resolver (the XNNPACK delegate) the only differences are MEANs the delegate
    took, one last place apart (it adds in its own order and multiplies by 1/n, as the converter
    corpus shows too), and the DEQUANTIZE of static weights is skipped, named: the delegate folds it
    into the operators that read it and never writes its output."""
    reports, errors = _verify_all("default")
    assert all("unresolved custom op" in e for e in errors.values()), errors
    differing = [(name, op) for name, r in reports.items() for op in r.ops if op.differing]
    assert differing
    for name, op in differing:
        assert op.kind == "MEAN" and op.executed_as == "XNNPACK delegate" and op.unit == "ulps" and op.worst == 1, (
            name, op.to_dict())
    skipped = [s for r in reports.values() for s in r.skipped]
    assert skipped and all(s.kind == "DEQUANTIZE" and "folds the DEQUANTIZE" in s.reason for s in skipped)
    checked = collections.Counter(op.kind for r in reports.values() for op in r.ops)
    assert checked["MEAN"] > 0 and checked["MUL"] > 0, checked
