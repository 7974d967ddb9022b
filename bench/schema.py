#!/usr/bin/env python3
"""The project's tables, read from the C++ sources that define them, so that the scripts under
bench/ never keep a copy: the pipelines (src/core/pipeline_table.cpp), the stages of a step
(src/core/stages.h) and the benchmark CSV's columns (src/core/csv.cpp).

    python3 bench/schema.py          # prints the three lists; exit 1 if one cannot be read
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def _strings(block):
    return re.findall(r'"([^"]*)"', block)


def pipelines():
    """The simulator's pipelines in table order (the viewer's number keys 1, 2, ...)."""
    text = _read("src/core/pipeline_table.cpp")
    return re.findall(r'\{Pipeline::\w+,\s*"([a-z0-9-]+)",\s*\'', text)


def stages():
    """(name, CSV column) of every stage of a step, in the engines' order."""
    text = _read("src/core/stages.h")
    names = _strings(re.search(r"kStageNames\[kStageCount\]\s*=\s*\{(.*?)\};", text, re.S).group(1))
    cols = _strings(re.search(r"kStageColumns\[kStageCount\]\s*=\s*\{(.*?)\};", text, re.S).group(1))
    return list(zip(names, cols))


def bench_columns():
    """The benchmark CSV's columns, in file order."""
    text = _read("src/core/csv.cpp")
    return _strings(re.search(r"benchCsvColumns\(\)\s*\{.*?cols\s*=\s*\{(.*?)\};", text, re.S).group(1))


def stage_columns():
    """(column, name) of the stages the benchmark CSV has a column for, in the engines' order."""
    cols = set(bench_columns())
    return [(c, n) for n, c in stages() if c in cols]


def main():
    lists = {"pipelines": pipelines(), "stages": [n for n, _ in stages()], "bench columns": bench_columns()}
    bad = [k for k, v in lists.items() if not v]
    for k, v in lists.items():
        print(f"{k}: {' '.join(v)}")
    if len(lists["stages"]) != len(stages()) or not stage_columns():
        bad.append("stage columns")
    if bad:
        print("schema: could not read " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
