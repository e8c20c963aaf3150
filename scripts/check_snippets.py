#!/usr/bin/env python3
"""Checks that the documentation shows the code the repository has.

    python3 scripts/check_snippets.py [--root DIR]

Files checked: README.md and every docs/**/*.md.

Snippets. A fenced code block whose fence line directly follows a line

    <!-- snippet: PATH -->         the block equals the file PATH
    <!-- snippet: PATH#NAME -->    the block equals the region NAME of PATH
    <!-- snippet: none (reason) -->  a fragment that is not taken from a file

must match what it names. PATH is relative to the repository root. A region
is the lines strictly between a line containing `snippet-begin: NAME` and
the next line containing `snippet-end: NAME` (the markers sit in a comment
of the file's language, e.g. `// snippet-begin: NAME`); marker lines of
other regions inside it are left out. A block equals a region if its lines
equal the region's lines, or the region's lines with their common leading
indentation removed (a region inside a function may be shown unindented).
Trailing white space is ignored, as is a final empty line.

Every ```cpp, ```cuda or ```c++ block in README.md and docs/guide/ must
carry a snippet line (`none (reason)` for the few fragments that cannot be
compiled on their own).

Also checked: README.md has at most 250 lines; no cell of a Markdown table
in docs/results.md is longer than 120 characters (the page is read, so a
cell says one short thing); every relative link in
README.md and docs/ (Markdown links, images, reference definitions, HTML
src/href) names a file or folder that exists, and a #anchor into a Markdown
file names one of its headings (GitHub's rule for heading anchors).

Exit 0 with "N snippets checked, M links checked", else every problem on a
line of its own and exit 1. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import unicodedata
import urllib.parse
from pathlib import Path

README_MAX_LINES = 250
RESULTS_PAGE = "docs/results.md"
TABLE_CELL_MAX = 120
MARKER_LANGUAGES = {"cpp", "cuda", "c++"}
SNIPPET_RE = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
NONE_RE = re.compile(r"^none\s*\((.+)\)$")
FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
REGION_RE = re.compile(r"snippet-(begin|end):\s*(\S+)")
# [text](target "title"), ![alt](target); the target may be in <...>.
INLINE_LINK_RE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR_RE = re.compile(r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
INLINE_CODE_RE = re.compile(r"(`+)(?:(?!\1).)+?\1")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


class Problems:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: list[str] = []

    def add(self, path: Path, line: int, message: str) -> None:
        self.items.append(f"{path.relative_to(self.root)}:{line}: {message}")


def markdown_files(root: Path) -> list[Path]:
    files = [root / "README.md"]
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(p for p in docs.rglob("*.md") if p.is_file())
    return [f for f in files if f.is_file()]


def fenced_blocks(lines: list[str]):
    """Yields (fence line index, indent, language, content lines, closed)."""
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        content: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                closed = True
                break
            line = lines[i]
            # Content of an indented fence (in a list) loses the fence's indentation.
            if indent and line.startswith(indent):
                line = line[len(indent):]
            content.append(line)
            i += 1
        yield start, indent, lang, content, closed
        i += 1


def normalise(lines: list[str]) -> list[str]:
    out = [l.rstrip() for l in lines]
    while out and out[-1] == "":
        out.pop()
    return out


def dedent(lines: list[str]) -> list[str]:
    widths = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(widths) if widths else 0
    return [l[cut:] if l.strip() else "" for l in lines]


def region(text: str, name: str) -> tuple[list[str] | None, str]:
    """The lines of region `name`, or (None, why not)."""
    lines = text.splitlines()
    begins = [i for i, l in enumerate(lines)
              if any(k == "begin" and n == name for k, n in REGION_RE.findall(l))]
    if not begins:
        return None, f"no line with 'snippet-begin: {name}'"
    if len(begins) > 1:
        return None, f"'snippet-begin: {name}' appears {len(begins)} times"
    out: list[str] = []
    for l in lines[begins[0] + 1:]:
        found = REGION_RE.findall(l)
        if any(k == "end" and n == name for k, n in found):
            return out, ""
        if any(k == "begin" and n == name for k, n in found):
            return None, f"'snippet-begin: {name}' again before its end"
        if found:
            continue  # a marker of another region inside this one
        out.append(l)
    return None, f"no line with 'snippet-end: {name}' after its begin"


def check_snippets(path: Path, lines: list[str], root: Path, problems: Problems) -> int:
    checked = 0
    rel = path.relative_to(root).as_posix()
    needs_marker = rel == "README.md" or rel.startswith("docs/guide/")
    block_starts = set()
    for start, _indent, lang, content, closed in fenced_blocks(lines):
        block_starts.add(start)
        if not closed:
            problems.add(path, start + 1, "code block is not closed")
        marker = SNIPPET_RE.match(lines[start - 1]) if start > 0 else None
        if marker is None:
            if needs_marker and lang in MARKER_LANGUAGES:
                problems.add(path, start + 1,
                             f"```{lang} block without a '<!-- snippet: PATH#NAME -->' line before it")
            continue
        spec = marker.group(1)
        none = NONE_RE.match(spec)
        if none:
            if not none.group(1).strip():
                problems.add(path, start, "snippet: none needs a reason in parentheses")
            continue
        if spec.startswith("none"):
            problems.add(path, start, "write 'snippet: none (reason)'")
            continue
        file_part, _, name = spec.partition("#")
        target = (root / file_part).resolve()
        checked += 1
        try:
            target.relative_to(root)
        except ValueError:
            problems.add(path, start, f"snippet path {file_part} is outside the repository")
            continue
        if not target.is_file():
            problems.add(path, start, f"snippet file {file_part} does not exist")
            continue
        text = target.read_text(encoding="utf-8")
        if name:
            wanted, why = region(text, name)
            if wanted is None:
                problems.add(path, start, f"{file_part}: {why}")
                continue
        else:
            wanted = text.splitlines()
        shown = normalise(content)
        if shown != normalise(wanted) and shown != normalise(dedent(wanted)):
            expected = normalise(dedent(wanted))
            diff_at = next((k for k in range(min(len(shown), len(expected))) if shown[k] != expected[k]),
                           min(len(shown), len(expected)))
            got_line = shown[diff_at] if diff_at < len(shown) else "<end of block>"
            want_line = expected[diff_at] if diff_at < len(expected) else "<end of snippet>"
            problems.add(path, start + 2 + diff_at,
                         f"block differs from {spec} at its line {diff_at + 1}: "
                         f"shows {got_line!r}, the file has {want_line!r}")
    # A snippet line must introduce a code block.
    for i, l in enumerate(lines):
        if SNIPPET_RE.match(l) and (i + 1) not in block_starts:
            problems.add(path, i + 1, "snippet line not directly followed by a fenced code block")
    return checked


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, split as GitHub splits them: at every | not escaped as \\|."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    # The row's leading and trailing pipes leave empty strings at the ends.
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    return [c.strip() for c in cells]


def check_table_cells(path: Path, lines: list[str], problems: Problems) -> None:
    in_code = code_lines(lines)
    for i, line in enumerate(lines):
        if i in in_code or not line.lstrip().startswith("|"):
            continue
        for cell in table_cells(line.strip()):
            if len(cell) > TABLE_CELL_MAX:
                problems.add(path, i + 1, f"table cell of {len(cell)} characters, more than "
                                          f"{TABLE_CELL_MAX}: {cell[:60]!r}...")


def github_slug(heading: str) -> str:
    text = re.sub(r"<[^>]+>", "", heading)                        # HTML tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)        # links: their text
    text = text.replace("`", "").replace("*", "").replace("~~", "")
    out = []
    for ch in text.strip().lower():
        cat = unicodedata.category(ch)
        if ch in " -" or cat[0] in "LMN" or cat == "Pc":
            out.append("-" if ch == " " else ch)
    return "".join(out)


_anchor_cache: dict[Path, set[str]] = {}


def code_lines(lines: list[str]) -> set[int]:
    """Indices of the lines inside fenced code blocks, fences included."""
    in_code: set[int] = set()
    for start, _i, _l, content, _c in fenced_blocks(lines):
        in_code.update(range(start, start + len(content) + 2))
    return in_code


def anchors(path: Path) -> set[str]:
    if path not in _anchor_cache:
        seen: dict[str, int] = {}
        found: set[str] = set()
        lines = path.read_text(encoding="utf-8").splitlines()
        in_code = code_lines(lines)
        for i, l in enumerate(lines):
            if i in in_code:
                continue
            m = HEADING_RE.match(l)
            if not m:
                for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", l):
                    found.add(a)
                continue
            slug = github_slug(m.group(2))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check_links(path: Path, lines: list[str], root: Path, problems: Problems) -> int:
    checked = 0
    in_code = code_lines(lines)
    for i, raw in enumerate(lines):
        if i in in_code:
            continue
        line = INLINE_CODE_RE.sub("", raw)
        targets = [m.group(1) for m in INLINE_LINK_RE.finditer(line)]
        targets += [m.group(1) for m in HTML_ATTR_RE.finditer(line)]
        ref = REFERENCE_DEF_RE.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            target = target.strip("<>")
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # http:, https:, mailto: ...
            checked += 1
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            if file_part == "":
                dest = path
            elif file_part.startswith("/"):
                dest = root / file_part.lstrip("/")
            else:
                dest = path.parent / file_part
            dest = Path(os.path.normpath(dest))
            if not dest.exists():
                problems.add(path, i + 1, f"link target {target} does not exist")
                continue
            if anchor and dest.is_file() and dest.suffix.lower() == ".md":
                if urllib.parse.unquote(anchor).lower() not in anchors(dest):
                    problems.add(path, i + 1, f"link target {target}: no heading with anchor #{anchor}")
    return checked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="repository root (default: the folder above scripts/)")
    args = parser.parse_args()
    root = args.root.resolve()
    problems = Problems(root)
    snippets = links = 0
    readme = root / "README.md"
    if not readme.is_file():
        problems.items.append("README.md: missing")
    for path in markdown_files(root):
        lines = path.read_text(encoding="utf-8").splitlines()
        if path == readme and len(lines) > README_MAX_LINES:
            problems.add(path, len(lines), f"README.md has {len(lines)} lines, more than {README_MAX_LINES}")
        if path.relative_to(root).as_posix() == RESULTS_PAGE:
            check_table_cells(path, lines, problems)
        snippets += check_snippets(path, lines, root, problems)
        links += check_links(path, lines, root, problems)
    if problems.items:
        print("\n".join(problems.items))
        print(f"{len(problems.items)} problem(s); {snippets} snippets checked, {links} links checked")
        return 1
    print(f"{snippets} snippets checked, {links} links checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
