#!/usr/bin/env python3
"""Checks that the project's documentation citations and links resolve.

    python3 scripts/check_doc_links.py

Fails (exit status 1, one line per problem: file:line, the citation, what is missing) when

- a tracked file outside bench/results/ and external/ cites `docs/<name>.md` or `docs/<name>.md#<anchor>`
  and the document, or a heading with that anchor in it, does not exist;
- a Markdown link in README.md or docs/*.md to a local file or `#anchor` does not resolve (the
  file, or the heading in the linked Markdown file);
- a tracked file outside bench/results/ cites the founding sketch by its old name (the design of
  record is docs/design.md);
- README.md is longer than 400 lines.

Anchors follow GitHub's rule for headings: lower case, punctuation other than '-' and '_' removed,
spaces turned into '-', and a repeated heading gets -1, -2, ... Prints a one-line summary when
everything resolves. Python 3 standard library only.
"""
import os
import re
import subprocess
import sys

README_MAX_LINES = 400
EXCLUDED_DIRS = ("bench/results/", "external/")
OLD_SKETCH = "DESIGN" + ".md"  # spelled in two parts so that this file does not cite it

# docs/<name>.md, optionally #<anchor>; not part of a longer name (xdocs/..., my-docs/...).
CITATION = re.compile(r"(?<![\w-])docs/([\w.-]+?\.md)(?:#([\w-]+))?")
OLD_SKETCH_RE = re.compile(r"(?<![\w-])" + re.escape(OLD_SKETCH))
# [text](target) and ![alt](target), with an optional "title".
MD_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)


def repo_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(here)


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (a source archive): every file under the root.
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")]
            for n in names:
                files.append(os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/"))
        return files


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def slugify(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fenced = None
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fenced is None:
                fenced = m.group(1)
            elif m.group(1) == fenced:
                fenced = None
            continue
        if fenced is None:
            yield no, line


def anchors_of(text):
    anchors, seen = set(), {}
    prev = None
    for _, line in markdown_lines(text):
        title = None
        m = ATX.match(line)
        if m:
            title = m.group(2)
        elif prev is not None and prev.strip() and SETEXT.match(line) and not ATX.match(prev) \
                and "|" not in prev:
            title = prev.strip()
        if title is not None:
            slug = slugify(title)
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else "%s-%d" % (slug, n))
        for a in HTML_ANCHOR.findall(line):
            anchors.add(a)
        prev = line
    return anchors


def strip_code_spans(line):
    return re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def main():
    root = repo_root()
    files = tracked_files(root)
    anchor_cache = {}

    def anchors(rel):
        if rel not in anchor_cache:
            text = read_text(os.path.join(root, rel))
            anchor_cache[rel] = anchors_of(text) if text is not None else set()
        return anchor_cache[rel]

    problems = []  # (file, line, citation, what is missing)
    seen = set()
    citations = links = 0

    def problem(f, no, cite, why):
        key = (f, no, cite)
        if key not in seen:
            seen.add(key)
            problems.append((f, no, cite, why))

    def check_target(f, no, cite, rel, anchor):
        """rel: a path relative to the root (or None: the citing file itself)."""
        target = rel if rel is not None else f
        path = os.path.join(root, target)
        if rel is not None and not os.path.exists(path):
            problem(f, no, cite, "no file %s" % target)
            return
        if anchor:
            if not target.endswith(".md") or os.path.isdir(path):
                return
            if anchor not in anchors(target):
                problem(f, no, cite, "no heading with anchor '#%s' in %s" % (anchor, target))

    for f in files:
        if f.startswith("bench/results/"):
            continue
        text = read_text(os.path.join(root, f))
        if text is None:
            continue
        for no, line in enumerate(text.splitlines(), 1):
            if OLD_SKETCH_RE.search(line):
                problem(f, no, OLD_SKETCH, "cites the founding sketch; cite docs/design.md#<heading> instead")
        if f.startswith(EXCLUDED_DIRS):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                citations += 1
                check_target(f, no, m.group(0), "docs/" + m.group(1), m.group(2))

    markdown = ["README.md"] + sorted(f for f in files if re.fullmatch(r"docs/[^/]+\.md", f))
    for f in markdown:
        text = read_text(os.path.join(root, f))
        if text is None:
            if f == "README.md":
                problem(f, 0, f, "no README.md")
            continue
        base = os.path.dirname(f)
        for no, line in markdown_lines(text):
            for m in MD_LINK.finditer(strip_code_spans(line)):
                target = m.group(1)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                links += 1
                path, _, anchor = target.partition("#")
                if not path:
                    check_target(f, no, target, None, anchor)
                    continue
                rel = os.path.normpath(os.path.join(base, path)).replace(os.sep, "/")
                if rel.startswith("../"):
                    problem(f, no, target, "points outside the repository")
                    continue
                check_target(f, no, target, rel, anchor)

    readme = read_text(os.path.join(root, "README.md")) or ""
    readme_lines = len(readme.splitlines())
    if readme_lines > README_MAX_LINES:
        problem("README.md", readme_lines, "README.md",
                "%d lines, at most %d (move detail into docs/)" % (readme_lines, README_MAX_LINES))

    if problems:
        for f, no, cite, why in problems:
            print("%s:%d: %s: %s" % (f, no, cite, why))
        print("doc links: %d problem(s)" % len(problems), file=sys.stderr)
        return 1
    print("doc links: %d citations of docs/ and %d Markdown links resolve; README.md has %d lines (at most %d)"
          % (citations, links, readme_lines, README_MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
