#!/usr/bin/env python3
"""Draft data/arm11/events.toml from the ARM11 application note's Table 2.

Usage: tools/draft_arm11_table.py ../shared/spec/arm11-performance-monitor-unit.txt > draft.toml

The draft carries each row's code, the spec's description and the availability the
description states ("ARM1156 only", "ARM1176 only", "unused on ARM1156"). Names are
left as EVENT_0xNN: the committed table uses Linux perf's names, chosen by hand, and
every row was reviewed against the spec. Compare a fresh draft with the committed
table to catch transcription slips:

    tools/draft_arm11_table.py SPEC | diff - <(...)   # or read side by side
"""
import re
import sys


def rows(text):
    start = text.index("Table 2. Performance Monitor Event Types")
    end = text.index("Other values", start)
    lines = [l.strip() for l in text[start:end].splitlines()]
    code, desc = None, []
    for line in lines:
        if re.fullmatch(r"0x[0-9A-Fa-f]+", line):
            if code is not None:
                yield code, " ".join(desc)
            code, desc = int(line, 16), []
        elif code is not None and line and not line.startswith("Table 2"):
            desc.append(line)
    if code is not None:
        yield code, " ".join(desc)


def availability(desc):
    if "ARM1156 only" in desc:
        return 'only_on = ["arm1156"]\n'
    if "ARM1176 only" in desc:
        return 'only_on = ["arm1176"]\n'
    if "unused on ARM1156" in desc:
        return 'unused_on = ["arm1156"]\n'
    return ""


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    out = ['family = "arm11"\nsource = "ARM DAI 0195B, Table 2"\n']
    for code, desc in rows(text):
        out.append(
            f'\n[[event]]\nname = "EVENT_{code:#04x}"\ncode = {code:#04x}\n'
            f"description = {desc!r}\n{availability(desc)}".replace("'", '"')
        )
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
