#!/usr/bin/env python3
"""Draft data/sparc-t4/events.toml from the SPARC T4 Supplement's TABLE 10-2.

Usage: tools/draft_t4_table.py ../shared/spec/sparc-t4-performance-instrumentation.md > draft.toml

Reads the markdown table "TABLE 10-2 sl Field Settings" (pages 1-7 of 8 in the
converted text) and prints one [[event]] per sl value with:

- code = sl, and the precise / vp_specific flags of the group's first row;
- one [[event.umasks]] per mask value (a row listing several values, "03₁₆, 05₁₆,
  06₁₆", gives one per value), described as "Event: Description" in the spec's words,
  with a vp_specific / precise attr where the row differs from its group (a blank cell
  repeats the row above, as in the PDF);
- umask_note = the "Any other value" row, and umask_ignored from its "mask[5:4] is
  ignored" wording ("Any value" rows ignore the whole mask);
- the instruction lists of footnotes 6-9 as attr instructions on the rows citing them.

Names are left as SL_<n> and MASK_0x<nn>: the committed table's names, Solaris aliases,
combination rules, cross_strand attrs and the reconstructed sl 28 (page 8 is missing)
were chosen by hand and are documented in its header and in docs/ERRATA.md. Reserved
rows (sl 0 "Disabled", 12-15, 27) are skipped.

Known imperfections: the converted text is garbled in places and this script only
guesses. sl 6's rows are shifted into wrong columns (first one column right, then one
column left); the script finds the mask cell wherever it is and realigns the row, which
works for the current text but is a heuristic. The page 3 header is split over two
lines, and the "mask[5:3] is ignored" of sl 20 contradicts its own rows (the draft
copies the text, the committed table does not). Footnote markers are turned into
"(footnote n)"; markers lost in the conversion (12, 13) are not recovered. Compare a
fresh draft with the committed table to catch transcription slips:

    tools/draft_t4_table.py SPEC | diff - data/sparc-t4/events.toml   # or side by side
"""
import re
import sys

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
SUP_RUN = re.compile(r"\s*([⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
HEX16 = re.compile(r"([0-9A-Fa-f]{1,2})\s*₁₆")


def clean(cell):
    """Cell text with footnote markers as "(footnote n)" and "1F ₁₆" as "1F₁₆"."""
    cell = re.sub(r"<[^>]+>", "", cell).strip()
    cell = SUP_RUN.sub(lambda m: f" (footnote {m.group(1).translate(SUPERSCRIPTS)})", cell)
    cell = re.sub(r"\s+₁₆", "₁₆", cell)
    return re.sub(r"\s+([.,;])", r"\1", cell).strip()  # "(footnote 4) ." -> "(footnote 4)."


def footnotes_of(cell):
    return [int(m.group(1).translate(SUPERSCRIPTS)) for m in SUP_RUN.finditer(cell)]


def is_mask_cell(cell):
    c = cell.strip()
    return bool(HEX16.search(c)) or c in ("Any other value", "Any value")


def table_lines(text):
    """The markdown rows of TABLE 10-2's pages, in order."""
    out = []
    for page in re.finditer(r"TABLE 10-2 sl Field Settings \((\d) of 8\)", text):
        started = False
        for line in text[page.end():].splitlines():
            s = line.strip()
            if s.startswith("|"):
                started = True
                out.append(s)
            elif started or (s and not s.startswith("|")):
                break  # the page's table ends at its first non-table line
    return out


def rows(text):
    """(sl, masks, event, precise, vp, description, footnotes) for each data row."""
    sl = None
    for line in table_lines(text):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r"[-:\s]*", c) for c in cells):
            continue  # separator or empty row
        m = next((i for i, c in enumerate(cells) if is_mask_cell(c)), None)
        if m is None:
            # Reserved rows ("12-15 | — | …", "27 | — | …") and header lines.
            first = cells[0].translate(SUPERSCRIPTS)
            if re.match(r"\d", first):
                sl = None
            continue
        for c in cells[:m]:
            num = re.match(r"(\d+)", c.translate(SUPERSCRIPTS))
            if num and not re.search(r"\d+\s*-\s*\d+", c):
                sl = int(num.group(1))
        if sl is None or sl == 0:
            continue
        fields = cells[m + 1:]
        if m == 0 and fields and fields[0] == "":
            fields = fields[1:]  # garbled row shifted one column left (sl 6)
        fields += [""] * (4 - len(fields))
        event, precise, vp, desc = fields[:4]
        mask_cell = cells[m]
        masks = [int(h, 16) for h in HEX16.findall(mask_cell)] or [mask_cell.strip()]
        refs = footnotes_of(cells[0]) + footnotes_of(event) + footnotes_of(desc)
        yield sl, masks, clean(event), precise.strip(), vp.strip(), clean(desc), refs


def footnotes(text):
    """Footnotes 6-13 of TABLE 10-2 (after its page 7), by number."""
    start = text.index("TABLE 10-2 sl Field Settings (7 of 8)")
    notes = {}
    for m in re.finditer(r"^(\d+)\. (.*)$", text[start:], re.M):
        n = int(m.group(1))
        if 6 <= n <= 13 and n not in notes:
            notes[n] = m.group(2).strip()
    return notes


def instruction_list(note):
    """The mnemonics of footnotes 6-9 as one comma-separated list."""
    lst = note.split(": ", 1)[1]
    lst = lst.split(" Accesses to")[0]
    return lst.rstrip(".").replace(", and ", ", ")


def ignored_bits(text):
    if "mask field is ignored" in text:
        return 0x3F
    m = re.search(r"mask\[(\d)(?::(\d))?\] is ignored|mask bit (\d) is ignored", text)
    if not m:
        return 0
    if m.group(3):
        return 1 << int(m.group(3))
    hi = int(m.group(1))
    lo = int(m.group(2)) if m.group(2) else hi
    return sum(1 << b for b in range(lo, hi + 1))


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def yes_no(cell):
    return {"Yes": "yes", "No": "no"}.get(cell, "")


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    notes = footnotes(text)
    groups = {}
    for sl, masks, event, precise, vp, desc, refs in rows(text):
        g = groups.setdefault(sl, {"rows": [], "note": "", "precise": "", "vp": "", "last": ("", "")})
        last_p, last_v = g["last"]
        precise, vp = yes_no(precise) or last_p, yes_no(vp) or last_v
        g["last"] = (precise, vp)
        if not g["precise"]:
            g["precise"], g["vp"] = precise, vp
        if masks in (["Any other value"], ["Any value"]):
            g["note"] = ": ".join(x for x in (event.strip("— "), desc) if x)
            if masks == ["Any value"]:
                g["event"] = event
            continue
        for mask in masks:
            g["rows"].append((mask, event, desc, precise, vp, refs))
    out = [
        "# Draft of TABLE 10-2 by tools/draft_t4_table.py: review before committing.\n",
        'family = "sparc-t4"\nsource = "SPARC T4 Supplement (Draft D0.4), §10.2 TABLE 10-2"\n',
    ]
    for sl in sorted(groups):
        g = groups[sl]
        first = g["rows"][0][1] if g["rows"] else g.get("event", "")
        out.append(f"\n[[event]]\nname = \"SL_{sl}\"\ncode = {sl}\ndescription = {q(first)}\n")
        out.append(f'attrs = [{{ key = "precise", value = {q(g["precise"])} }}, {{ key = "vp_specific", value = {q(g["vp"])} }}]\n')
        ignored = ignored_bits(g["note"] + " " + " ".join(r[2] for r in g["rows"]))
        if g["note"] == "Ignored":  # sl 11: "Any other value: Ignored"
            used = 0
            for r in g["rows"]:
                used |= r[0]
            ignored = 0x3F & ~used
        if sl == 26:
            ignored = 0x3F
        out.append(f"umask_ignored = {ignored:#04x}\n")
        if g["note"]:
            out.append(f"umask_note = {q(g['note'])}\n")
        for mask, event, desc, precise, vp, refs in g["rows"]:
            text_ = ": ".join(x for x in (event, desc) if x)
            out.append(f"\n[[event.umasks]]\nname = \"MASK_{mask:#04x}\"\nvalue = {mask:#04x}\ndescription = {q(text_)}\n")
            attrs = []
            if vp and vp != g["vp"]:
                attrs.append(f'{{ key = "vp_specific", value = {q(vp)} }}')
            if precise and precise != g["precise"]:
                attrs.append(f'{{ key = "precise", value = {q(precise)} }}')
            for n in refs:
                if 6 <= n <= 9 and n in notes:
                    attrs.append(f'{{ key = "instructions", value = {q(instruction_list(notes[n]))} }}')
                elif n <= 5:
                    attrs.append(f'{{ key = "footnote_missing", value = "{n}" }}')
            if attrs:
                out.append("attrs = [" + ", ".join(attrs) + "]\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
