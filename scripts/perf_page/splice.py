"""Sections of an existing docs/PERFORMANCE.md: one replaced in place, and those that other scripts write
from runs of their own, carried over when the page is regenerated."""

QUANTIZED_BEGIN = "<!-- quantized:begin -->"
QUANTIZED_END = "<!-- quantized:end -->"


def insert_before_method(page, section):
    """`page` with `section` added before "## Method", where the sections generated from runs end."""
    at = page.index("## Method\n")
    return page[:at] + section + "\n" + page[at:]


def replace_section(page, section, heading):
    """`page` with its section under `heading` (up to the next heading) replaced by `section`, or with
    `section` added before "## Method" when it has none."""
    start = page.find(heading)
    if start < 0:
        return insert_before_method(page, section)
    following = page.find("\n## ", start + len(heading))
    end = len(page) if following < 0 else following + 1
    return page[:start] + section + "\n" + page[end:]


def write_section_into(path, section, heading):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(replace_section(page, section, heading))


def page_between(path, begin, end):
    """(page, index of `begin`, index past `end`) of the page at `path`, or None without both markers."""
    try:
        with open(path, encoding="utf-8") as f:
            page = f.read()
    except OSError:
        return None
    if begin not in page or end not in page:
        return None
    return page, page.index(begin), page.index(end) + len(end)


def kept_peer_speed_section(path):
    """The Python-level peers' section (scripts/peer_speed.sh writes it from a run of its own),
    carried over from the page being replaced, from its heading."""
    found = page_between(path, "<!-- peer-speed:begin -->", "<!-- peer-speed:end -->")
    if found is None:
        return ""
    page, begin, end = found
    return page[page.rfind("\n## ", 0, begin):end] + "\n"


def kept_quantized_section(path):
    """The quantized ops' section (scripts/quantized_perf_section.py writes it from a run of the quant/
    cases alone), carried over from the page being replaced, markers included."""
    found = page_between(path, QUANTIZED_BEGIN, QUANTIZED_END)
    if found is None:
        return ""
    page, begin, end = found
    return page[begin:end] + "\n\n"
