#!/usr/bin/env python3
"""Summarise a CSV file as Markdown: rows, columns, numeric ranges, empty cells."""

import argparse
import csv
import statistics
import sys


def numbers(values):
    out = []
    for value in values:
        try:
            out.append(float(value))
        except ValueError:
            return None
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--delimiter", default=",")
    args = parser.parse_args()
    with open(args.file, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle, delimiter=args.delimiter))
    if not rows:
        print("The file has a header and no rows.")
        return 0
    print(f"# {args.file}\n\n{len(rows)} rows, {len(rows[0])} columns\n")
    print("| column | kind | summary | empty |\n|---|---|---|---|")
    for column in rows[0]:
        cells = [row[column] for row in rows]
        filled = [c for c in cells if c.strip()]
        nums = numbers(filled)
        if nums:
            summary = f"{min(nums)} to {max(nums)}, mean {statistics.mean(nums):.2f}"
            kind = "numeric"
        else:
            summary = f"{len(set(filled))} distinct"
            kind = "text"
        print(f"| {column} | {kind} | {summary} | {len(cells) - len(filled)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
