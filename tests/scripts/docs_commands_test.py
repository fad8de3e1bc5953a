#!/usr/bin/python3
"""The shell commands README.md and docs/cli.md show work when a newcomer types them in order
(issue 24): no unquoted glob character (zsh, and bash with failglob, refuse `shape ?,3` when no
file matches; bash replaces it when one does), no example writes a file that another example
reads (a reader who made the documented inputs would find one replaced), and the README's
`sqdiff` session prints what it shows. Run by CTest (tests/scripts_tests.cmake) with the program's
path:

    docs_commands_test.py SQDIFF [unittest options]
"""

import os
import re
import shlex
import subprocess
import sys
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ("README.md", "docs/cli.md")
SQDIFF = None  # the program, from the command line


def read(relative):
    with open(os.path.join(REPO_ROOT, relative)) as f:
        return f.read()


def code_blocks(text):
    """[(info string, [lines])] of the fenced code blocks of a Markdown text."""
    return [(m.group(1), m.group(2).splitlines())
            for m in re.finditer(r"^```([^\n]*)\n(.*?)^```\s*$", text, re.S | re.M)]


def shown_commands(text):
    """Every `$ ` line of every code block: what a reader types."""
    return [line[2:] for _, lines in code_blocks(text) for line in lines if line.startswith("$ ")]


def shell_words(command):
    """The words of a command line as the shell splits them, quotes kept."""
    lexer = shlex.shlex(command, posix=False)
    lexer.whitespace_split = True
    return list(lexer)


def unquoted(word):
    """`word` without its quoted parts, escaped characters and special parameters ($?, $*): what
    the shell may expand as a file name pattern."""
    return re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.|\$[?*@#]", "", word)


def sqdiff_invocations(command):
    """The argument lists of the `sqdiff` programs a shown command line runs (the parts between
    `&&`, `;` and `|` that start with sqdiff or a path ending in /sqdiff)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    invocations, current = [], None
    for word in words:
        if word in ("&&", "||", ";", "|"):
            current = None
        elif current is None and (word == "sqdiff" or word.endswith("/sqdiff")):
            current = []
            invocations.append(current)
        elif current is not None:
            current.append(word)
    return invocations


def files_of(arguments):
    """(inputs, outputs): the files an sqdiff argument list reads and writes (`-o`, `--output`;
    `-` is standard output), by name."""
    inputs, outputs = set(), set()
    i = 0
    while i < len(arguments):
        word = arguments[i]
        if word in ("-o", "--output") and i + 1 < len(arguments):
            outputs.add(arguments[i + 1])
            i += 2
            continue
        if word.startswith("--output="):
            outputs.add(word.split("=", 1)[1])
        elif re.search(r"\.(npy|npz|xml)$", word):
            inputs.add(word.split("=", 1)[-1])  # `ir --input NAME=FILE.npy` too
        i += 1
    outputs.discard("-")
    return inputs, outputs


class DocsCommandsTest(unittest.TestCase):
    def test_glob_characters_are_quoted(self):
        for doc in DOCS:
            for command in shown_commands(read(doc)):
                for word in shell_words(command):
                    with self.subTest(doc=doc, command=command):
                        self.assertNotRegex(unquoted(word), r"[?*\[]", "%s: `%s`: quote %r (the shell expands "
                                            "?, * and [ ])" % (doc, command, word))

    def test_no_example_overwrites_another_ones_input(self):
        for doc in DOCS:
            reads, writes = {}, {}
            for command in shown_commands(read(doc)):
                for arguments in sqdiff_invocations(command):
                    inputs, outputs = files_of(arguments)
                    for name in inputs:
                        reads.setdefault(name, command)
                    for name in outputs:
                        writes.setdefault(name, command)
            for name in sorted(set(reads) & set(writes)):
                with self.subTest(doc=doc, file=name):
                    self.fail("%s: `%s` writes %s, which `%s` reads: give the output another name"
                              % (doc, writes[name], name, reads[name]))

    def test_readme_session_prints_what_it_shows(self):
        """README.md's `console` block of build/tools/sqdiff, run from the source directory with
        this build's program, by bash with failglob (an unquoted ? that matches nothing fails)."""
        blocks = [lines for info, lines in code_blocks(read("README.md"))
                  if info.strip() == "console" and any(l.startswith("$ build/tools/sqdiff") for l in lines)]
        self.assertEqual(len(blocks), 1)
        session = []  # [(command, [expected lines])]
        for line in blocks[0]:
            if line.startswith("$ "):
                session.append((line[2:], []))
            else:
                session[-1][1].append(line)
        self.assertGreaterEqual(len(session), 3)
        for command, expected in session:
            with self.subTest(command=command):
                self.assertTrue(command.startswith("build/tools/sqdiff "), command)
                program_command = shlex.quote(SQDIFF) + command[len("build/tools/sqdiff"):]
                result = subprocess.run(["bash", "-O", "failglob", "-c", program_command], cwd=REPO_ROOT,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout.splitlines(), expected)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    SQDIFF = os.path.abspath(sys.argv.pop(1))
    unittest.main()
