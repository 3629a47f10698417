#!/usr/bin/env python3
"""Draft data/montecito/events.toml from the Montecito PMU spec, chapter 4.

Usage (from the repository root; stdlib only, run by hand, never by the build):

    tools/draft_montecito_table.py [SPEC] > draft.toml 2> crosscheck.txt

SPEC defaults to ../shared/spec/itanium2-montecito-performance-monitoring.md relative
to the repository root. The script reads

- section 4.15 "Performance Monitor Event List": one entry per event (Title, Category,
  IAR/DAR/OPC, Event Code, Max. Inc/Cyc, MT Capture Type, Definition, NOTE) and its
  "Unit Masks for ..." tables (several sheets are joined);
- Table 4-42 "All Performance Monitors Ordered by Code" (code, IAR/DAR/OPC, Max
  Inc/Cyc, Type);
- the per-category tables of sections 4.3-4.13 (Table 4-1 ... 4-41), including the L1D
  set tables (4-11 ... 4-16, under 4.8.2.x), the L2D set tables (4-21 ... 4-30, under
  4.8.4.x), Table 4-19's ".all capable" column and Table 4-31's "MESI filtering
  capability" marks;

cross-checks every event's name, code, IAR/DAR/OPC, Max Inc/Cyc, MT type, L1D/L2D set,
.all capability, thread attribution and MESI capability between those sources, prints
every disagreement to stderr, and prints a TOML draft to stdout.

The draft applies the decisions recorded in DECISIONS below (each with its
docs/ERRATA.md id, ME<n>); the printed disagreements say which value was taken. The
committed data/montecito/events.toml was reviewed by hand against the spec, row by row,
after drafting; compare a fresh draft with it to catch slips:

    tools/draft_montecito_table.py | diff - data/montecito/events.toml

Known limits: the conversion lost the PDF's layout, so entries are found by a name line
(a heading of any level, or a bold line) followed by a "- **Title:**" bullet, and a
Definition or NOTE runs until the next bullet, table caption or entry. Unit-mask
descriptions keep the spec's words with the HTML tags removed.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC = os.path.join(ROOT, "..", "shared", "spec", "itanium2-montecito-performance-monitoring.md")

# ------------------------------------------------------------------ decisions
# Spellings of one event in different places. The value is the name we use; every
# other spelling becomes an alias of the event (except the pure typos marked None).
NAME_VARIANTS = {
    # variant: (canonical, keep_as_alias, errata id)
    "ETB_EVENT": ("BRANCH_EVENT", True, "ME3"),
    "CYCLES_HALTED": ("CPU_OP_CYCLES_HALTED", True, "ME4"),
    "L2I_VICTIMIZATION": ("L2I_VICTIMIZATIONS", True, "ME5"),
    "BUS_RD_INVAL_HITM": ("BUS_RD_INVALID_HITM", True, "ME6"),
    "BUS_RD_INVAL_BST_HITM": ("BUS_RD_INVALID_BST_HITM", True, "ME6"),
    # Not an alias: Table 4-38 derives BUS_RD_INVALID_ALL_HITM = BIL + BRIL HITMs.
    "BUS_RD_INVAL_ALL_HITM": ("BUS_RD_INVALID_BST_HITM", False, "ME6"),
    "L2D_OZQ_CANCEL0": ("L2D_OZQ_CANCELS0", False, "ME7"),
    "L2D_OZQ_CANCEL1": ("L2D_OZQ_CANCELS1", False, "ME7"),
    "L2DBAD_LINES_SELECTED": ("L2D_BAD_LINES_SELECTED", False, "ME7"),
    "L2D_L3_ACCESS_CANCEL": ("L2D_L3ACCESS_CANCEL", True, "ME7"),
    "L1ITLB_INSERTS_HPWW": ("L1ITLB_INSERTS_HPW", False, "ME7"),
    "THREAD_SWITCH_STALLS": ("THREAD_SWITCH_STALL", True, "ME7"),
}

# Per-event decisions where the sources disagree or the text is garbled: field ->
# (value, errata id). Fields: code, iar, dar, opc, max_inc, mt, category, l1d_set,
# l2d_set, thread, all_capable.
DECISIONS = {
    "L2D_OZQ_FULL": {"code": (0xE1, "ME8")},
    "NOPS_RETIRED": {"iar": ("Y", "ME9"), "dar": ("N", "ME9"), "opc": ("Y", "ME9")},
    "DTLB_INSERTS_HPW": {"iar": ("Y", "ME10"), "dar": ("Y", "ME10"), "opc": ("Y", "ME10")},
    "HPW_DATA_REFERENCES": {"iar": ("Y", "ME10"), "dar": ("Y", "ME10"), "opc": ("Y", "ME10")},
    "L2D_FILL_MESI_STATE": {"iar": ("Y", "ME10"), "dar": ("Y", "ME10"), "opc": ("Y", "ME10")},
    "SPEC_LOADS_NATTED": {"opc": ("Y", "ME10"), "category": ("Speculation event", "ME13")},
    **{n: {"opc": ("Y", "ME11")} for n in (
        "L2I_READS", "L2I_UC_READS", "L2I_VICTIMIZATIONS", "L2I_RECIRCULATES", "L2I_L3_REJECTS",
        "L2I_HIT_CONFLICTS", "L2I_SPEC_ABORTS")},
    "L2I_SNOOP_HITS": {"iar": ("N", "ME11"), "opc": ("N", "ME11")},
    "CPU_OP_CYCLES_HALTED": {"max_inc": ("1", "ME4")},
    "L2D_BYPASS": {"max_inc": ("4", "ME26"), "thread": ("ActiveTrue", "ME20")},
    **{n: {"iar": ("Y", "ME27"), "dar": ("Y", "ME27"), "opc": ("Y", "ME27")} for n in (
        "L2D_INSERT_HITS", "L2D_INSERT_MISSES", "L3_INSERTS")},
    "ER_BKSNP_ME_ACCEPTED": {"max_inc": ("1", "ME12")},
    "ER_SNOOPQ_REQ_HI": {"max_inc": ("1", "ME12")},
    "SI_IOQ_LIVE_REQ_HI": {"max_inc": ("1", "ME12")},
    "SI_IOQ_LIVE_REQ_LO": {"max_inc": ("7", "ME12")},
    "SI_CCQ_COLLISIONS": {"max_inc": ("1", "ME12")},
    "SI_IOQ_COLLISIONS": {"max_inc": ("1", "ME12")},
    "SI_SCB_INSERTS": {"max_inc": ("1", "ME12")},
    "SI_WDQ_ECC_ERRORS": {"max_inc": ("1", "ME12")},
    "LOADS_RETIRED_INTG": {"category": ("Instruction Execution/L1D Cache Set 6", "ME13")},
    "L2D_OZQ_ACQUIRE": {"thread": ("ActiveApprox", "ME20")},
    "L2D_L3ACCESS_CANCEL": {"thread": ("TrueThrd", "ME21")},
    "L2D_FORCE_RECIRC": {"thread": ("ActiveTrue", "ME22")},
    "CPU_OP_CYCLES": {"all_capable": ("Y", "ME23")},
    "TAGGED_L2D_RETURN_PORT": {"l2d_set": ("6", "ME2")},
}

# Unit-mask rows whose Extension or pattern we correct: (event, spec name or pattern)
# -> replacement.
UMASK_RENAMES = {
    ("BR_MISPRED_DETAIL2", "RETURN.ALL_UNKNOWN_PATH_CORRECT_PRED"): ("RETURN.ALL_UNKNOWN_PRED", "ME15"),
    ("BR_MISPRED_DETAIL2", "NRETIND.ALL_UNKNOWN_PATH_CORRECT_PRED"): ("NRETIND.ALL_UNKNOWN_PRED", "ME15"),
}
# "---" ranges that overlap a named row: the first value(s) the named row owns are dropped.
RANGE_FIXES = {
    ("FE_LOST_BW", "b1101-b1111"): ("b1110-b1111", "ME16"),
    ("IDEAL_BE_LOST_BW_DUE_TO_FE", "b1101-b1111"): ("b1110-b1111", "ME16"),
    ("THREAD_SWITCH_STALL", "b1010 -b1111"): ("b1011-b1111", "ME16"),
}
# Events whose unit masks are independent bits ("Any combination ... is valid"), with
# the spec's words as umask_note.
COMBINATIONS_ANY = {"SYLL_NOT_DISPERSED": ("ME19", "NOTE: Any combination b0000-b1111 is valid.")}

# Events of Table 4-42 without a 4.15 entry (ME2): attributes come from Table 4-42.
ONLY_IN_4_42 = ("SI_L3T_TRACE_CACHE", "TAGGED_L2D_RETURN_PORT")

SUBEVENTS = {"IA64_INST_RETIRED": "IA64_TAGGED_INST_RETIRED"}

# Conversion artifacts in running text (ME24).
TEXT_FIXES = [
    ("ldc . c", "ld.c"),
    ("chk . a", "chk.a"),
    ("chk . s", "chk.s"),
    ("br .many", "br.many"),
    ("lfet ch", "lfetch"),
    ("BAhalted", "halted"),
    ("Id.s or Id.sa", "ld.s or ld.sa"),
]


def warn(msg):
    print(msg, file=sys.stderr)


def clean(text):
    """Spec text without markdown escapes, emphasis, HTML tags and link syntax."""
    t = text
    t = re.sub(r"\[([^\]]*)\]\(#\)", r"\1", t)
    t = re.sub(r"<sup>\s*([^<]*?)\s*</sup>", r"\1", t)
    t = re.sub(r"<sub>\s*([^<]*?)\s*</sub>", r"\1", t)
    t = re.sub(r"<[^>]+>", "", t)
    t = t.replace("\\_", "_").replace("\\*", "*").replace("\\ ", " ")
    t = t.replace("**", "").replace("`", "")
    t = t.replace("*.all*", ".all")
    for a, b in TEXT_FIXES:
        t = t.replace(a, b)
    t = re.sub(r"\s+", " ", t).strip()
    return t.replace(" ®", "®")


def event_name(line):
    """The event name a 4.15 entry line announces (heading of any level or bold), or None."""
    s = line.strip()
    s = re.sub(r"^#+\s*", "", s)
    s = s.replace("**", "").replace("\\_", "_").strip()
    return s if re.fullmatch(r"[A-Z][A-Z0-9_]+", s) else None


CAPTION = re.compile(r"^\**\s*Table (4-\d+)\.\s*(.*?)\s*\**\s*$")


def read_tables(lines, start, end):
    """Every tab-separated table between lines start and end: list of dicts with the
    caption number, title, header cells, rows (lists of cells), the line number of the
    caption and the last numbered heading (section) before it."""
    tables = []
    caption = None
    section = None
    i = start
    while i < end:
        line = lines[i]
        h = re.match(r"^#+\s*(4(?:\.\d+)+)\s+(.*)$", line)
        if h:
            section = (h.group(1), h.group(2).strip())
        m = CAPTION.match(line.strip())
        if m:
            caption = (m.group(1), clean(m.group(2)), i)
        elif "\t" in line and caption and (line.startswith("Symbol Name") or line.startswith("Extension")):
            header = [c.strip() for c in line.split("\t")]
            rows = []
            i += 1
            while i < end and "\t" in lines[i]:
                rows.append([c.strip() for c in lines[i].rstrip("\n").split("\t")])
                i += 1
            tables.append({"num": caption[0], "title": caption[1], "line": caption[2] + 1, "header": header,
                           "rows": rows, "section": section})
            continue
        i += 1
    return tables


def col(header, *names):
    norm = [re.sub(r"\s+", "", h).lower() for h in header]
    for n in names:
        n = re.sub(r"\s+", "", n).lower()
        for k, h in enumerate(norm):
            if h.startswith(n):
                return k
    return None


def monitor_rows(table):
    """(name, code text, iar, dar, opc, max, type, all, description) per row of a
    "Performance Monitors for ..." table."""
    h = table["header"]
    idx = {k: col(h, *names) for k, names in {
        "name": ("SymbolName",), "code": ("EventCode",), "iar": ("IAR",), "dar": ("DAR",), "opc": ("OPC",),
        "max": ("MaxInc",), "type": ("Type", "T"), "all": (".allcapable",), "desc": ("Description",)}.items()}
    if idx["type"] is not None and h[idx["type"]].replace(" ", "") not in ("T", "Type"):
        idx["type"] = None
    out = []
    for r in table["rows"]:
        r = r + [""] * (len(h) - len(r))
        get = lambda k: r[idx[k]].strip() if idx[k] is not None else None  # noqa: E731
        out.append({k: get(k) for k in idx})
    return out


def canon(name):
    return NAME_VARIANTS.get(name, (name, False, None))[0]


# ------------------------------------------------------------------ section 4.15
def parse_entries(lines, start):
    """The entries of section 4.15, in order."""
    entries = []
    i = start
    n = len(lines)
    while i < n:
        name = event_name(lines[i])
        j = i + 1
        while j < n and not lines[j].strip():
            j += 1
        if name and j < n and lines[j].startswith("- **Title:**"):
            e = {"name": name, "line": i + 1, "fields": {}, "umask_tables": [], "raw_heading": lines[i].strip()}
            k = j
            field = None
            while k < n:
                line = lines[k]
                nxt = event_name(line)
                if nxt and any(lines[m].startswith("- **Title:**") for m in range(k + 1, min(n, k + 4))):
                    break
                if line.strip() == "§":
                    break
                m = re.match(r"^- \*\*([A-Za-z. /]+):\*\*\s*(.*)$", line)
                cap = CAPTION.match(line.strip())
                if m:
                    field = m.group(1)
                    e["fields"][field] = m.group(2)
                elif cap:
                    field = None
                    if "Unit Masks for" in cap.group(2):
                        k2 = k + 1
                        while k2 < n and not lines[k2].startswith("Extension"):
                            k2 += 1
                        header = [c.strip() for c in lines[k2].split("\t")]
                        rows = []
                        k2 += 1
                        while k2 < n and "\t" in lines[k2]:
                            rows.append([c.strip() for c in lines[k2].split("\t")])
                            k2 += 1
                        e["umask_tables"].append({"num": cap.group(1), "title": clean(cap.group(2)), "header": header,
                                                  "rows": rows, "line": k + 1})
                        k = k2
                        continue
                elif field and line.strip():
                    e["fields"][field] += " " + line.strip()
                k += 1
            entries.append(e)
            i = k
            continue
        i += 1
    return entries


def parse_entry_fields(e):
    f = e["fields"]
    out = {"title": clean(f.get("Title", ""))}
    cat = f.get("Category", "")
    m = re.match(r"^(.*?)\s*\*\*IAR/DAR/OPC:\*\*\s*(\S+)\s*$", cat)
    out["category_raw"] = m.group(1) if m else cat
    out["category"] = clean(out["category_raw"])
    flags = m.group(2) if m else ""
    out["flags_raw"] = flags
    parts = flags.split("/")
    if len(parts) == 3 and all(p in ("Y", "N") for p in parts):
        out["iar"], out["dar"], out["opc"] = parts
    else:
        out["iar"] = out["dar"] = out["opc"] = None
    code = f.get("Event Code", "")
    m = re.match(r"^(0x[0-9a-fA-F]+),\s*\*\*Max\. Inc/Cyc:\*\*\s*(\S+),\s*\*\*MT Capture Type:\*\*\s*(\S+)", code)
    out["code"] = int(m.group(1), 16) if m else None
    out["max_inc"] = m.group(2) if m else None
    out["mt"] = m.group(3) if m else None
    out["definition"] = clean(f.get("Definition", ""))
    out["note"] = clean(f.get("NOTE", ""))
    return out


def expand_pattern(p):
    """[(value, ignored)] for a PMC.umask pattern: bxx01, b1001-b1111 (one per value),
    00xx (no b), b0 / b1 (one bit: umask[16], bits 19:17 ignored)."""
    p = p.replace(" ", "")
    m = re.fullmatch(r"b?([01x]+)(?:-b?([01x]+))?", p)
    if not m:
        raise ValueError(f"bad pattern {p!r}")
    lo, hi = m.group(1), m.group(2) or m.group(1)
    if len(lo) == 1:
        lo, hi = "xxx" + lo, "xxx" + hi
    if len(lo) != 4 or len(hi) != 4 or [c == "x" for c in lo] != [c == "x" for c in hi]:
        raise ValueError(f"bad pattern {p!r}")
    ignored = sum(1 << (3 - k) for k, c in enumerate(lo) if c == "x")
    v0 = int(lo.replace("x", "0"), 2)
    v1 = int(hi.replace("x", "0"), 2)
    return [(v, ignored) for v in range(v0, v1 + 1) if v & ignored == 0]


def invalid_kind(text):
    t = text.lower()
    if "nothing will be counted" in t or "none is counted" in t:
        return "nothing"
    if "illegal selection" in t:
        return "illegal"
    if "undefined" in t:
        return "undefined"
    return None


def umask_attrs(desc):
    attrs = []
    d = desc.lower()
    if "not .all capable" in d:
        attrs.append(("all_capable", "N"))
    elif "is .all capable" in d:
        attrs.append(("all_capable", "Y"))
    if "active thread is accurate" in d:
        attrs.append(("thread", "ActiveTrue"))
    elif "active thread is approximation" in d:
        attrs.append(("thread", "ActiveApprox"))
    return attrs


def parse_umasks(e):
    umasks, invalid = [], []
    name = e["name"]
    for t in e["umask_tables"]:
        for r in t["rows"]:
            if len(r) < 3:
                r = r + [""] * (3 - len(r))
            ext, pat, desc = r[0], r[1], clean(r[2])
            fix = RANGE_FIXES.get((name, pat))
            if fix:
                warn(f"[{fix[1]}] {name}: '---' range {pat!r} overlaps a named row; using {fix[0]!r}")
                pat = fix[0]
            vals = expand_pattern(pat)
            if ext in ("---", "—", "-"):
                kind = invalid_kind(desc)
                if kind is None:
                    warn(f"{name}: '---' row {pat} has no invalid kind: {desc!r}")
                    continue
                for v, ign in vals:
                    invalid.append({"value": v, "ignored": ign, "kind": kind, "note": desc})
            else:
                if len(vals) != 1:
                    warn(f"{name}: named row {ext} has a range {pat}")
                v, ign = vals[0]
                ren = UMASK_RENAMES.get((name, ext))
                if ren:
                    warn(f"[{ren[1]}] {name}: unit mask {ext} renamed {ren[0]}")
                    ext = ren[0]
                if not desc:
                    desc = "(no description in the spec's table)"
                umasks.append({"name": ext, "value": v, "ignored": ign, "description": desc, "attrs": umask_attrs(desc),
                               "pattern": pat})
    # checks: overlaps between named rows and --- rows, duplicates
    for u in umasks:
        for b in invalid:
            if (u["value"] & ~u["ignored"] & 0xF) == (b["value"] & ~u["ignored"] & 0xF) and \
               (u["value"] & ~b["ignored"] & 0xF) == (b["value"] & ~b["ignored"] & 0xF):
                warn(f"{name}: unit mask {u['name']} overlaps invalid {b['value']:#x}/{b['ignored']:#x}")
    seen = set()
    for u in umasks:
        if u["name"] in seen:
            warn(f"{name}: duplicate unit mask {u['name']}")
        seen.add(u["name"])
    return umasks, invalid


# ------------------------------------------------------------------ main
def main():
    spec = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SPEC
    with open(spec, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    ch4 = next(i for i, l in enumerate(lines) if l.startswith("# 4 Performance Monitor Events"))
    s415 = next(i for i, l in enumerate(lines) if re.match(r"^#+\s*4\.15 ", l))

    # --- category tables and Table 4-42
    tables = read_tables(lines, ch4, s415)
    cat_rows = defaultdict(list)  # canonical name -> [(table num, row, table)]
    t42 = {}
    t42_order = []
    spellings = defaultdict(set)  # canonical -> spellings seen (for aliases)
    for t in tables:
        if "Derived" in t["title"] or t["header"][:2] != ["Symbol Name", "Event Code"]:
            continue
        for r in monitor_rows(t):
            name = r["name"]
            c = canon(name)
            spellings[c].add(name)
            if t["num"] == "4-42":
                if c in t42:
                    warn(f"Table 4-42 lists {name} twice")
                t42[c] = r
                t42_order.append((c, name, r["code"]))
            else:
                cat_rows[c].append((t["num"], r, t))

    # --- section 4.15
    entries = parse_entries(lines, s415)
    ev = {}
    order415 = []
    for e in entries:
        f = parse_entry_fields(e)
        c = canon(e["name"])
        spellings[c].add(e["name"])
        f["name415"] = e["name"]
        f["line"] = e["line"]
        f["umasks"], f["invalid"] = parse_umasks(e)
        f["umask_titles"] = [t["title"] for t in e["umask_tables"]]
        f["heading"] = e["raw_heading"]
        if c in ev:
            warn(f"4.15 lists {c} twice")
        ev[c] = f
        order415.append(c)
    warn(f"# 4.15: {len(ev)} entries; Table 4-42: {len(t42_order)} rows; "
         f"category tables: {len(cat_rows)} names")

    # --- heading levels in 4.15 (cosmetic, reported once)
    levels = defaultdict(list)
    for c in order415:
        h = ev[c]["heading"]
        lv = "bold" if h.startswith("**") else h.split(" ")[0]
        if h.startswith("###") and "**" in h:
            lv = "### bold"
        levels[lv].append(c)
    warn("# [ME1] 4.15 entry headings: " + "; ".join(f"{k}: {len(v)}" for k, v in sorted(levels.items())))

    # --- names: spelled differently in different places
    for c, names in sorted(spellings.items()):
        if len(names) > 1:
            ids = sorted({NAME_VARIANTS[n][2] for n in names if n in NAME_VARIANTS})
            warn(f"[{','.join(ids)}] name spelled {sorted(names)}: using {c}")
    # unit-mask table titles naming another event
    for c in order415:
        for title in ev[c]["umask_titles"]:
            m = re.search(r"Unit Masks for (\S+)", title)
            if m and m.group(1) != ev[c]["name415"]:
                warn(f"[ME14] {c}: unit-mask table title says {m.group(1)!r}")

    # --- membership
    only415 = [c for c in order415 if c not in t42]
    only42 = [c for c, _, _ in t42_order if c not in ev]
    if only415:
        warn(f"in 4.15 but not Table 4-42: {only415}")
    if only42:
        warn(f"[ME2] in Table 4-42 but not 4.15: {only42}")
    for c in sorted(cat_rows):
        if c not in ev and c not in t42:
            warn(f"in a category table only: {c} ({[n for n, _, _ in cat_rows[c]]})")
    for c in order415:
        if c not in cat_rows:
            warn(f"in 4.15 but in no category table: {c}")

    # --- per-field cross-check
    def decided(c, field, value_415):
        d = DECISIONS.get(c, {}).get(field)
        return (d[0], d[1]) if d else (value_415, None)

    final = {}
    all_names = order415 + [c for c in only42]
    for c in all_names:
        f = ev.get(c)
        r42 = t42.get(c)
        cats = cat_rows.get(c, [])
        out = {}
        # code
        codes = {}
        if f:
            codes["4.15"] = f"{f['code']:#04x}"
        if r42:
            codes["4-42"] = r42["code"]
        for num, r, _ in cats:
            codes[f"4-{num[2:]}"] = r["code"]
        base = int(codes.get("4.15", codes.get("4-42")).split()[0], 16)
        val, eid = decided(c, "code", base)
        if len(set(codes.values())) > 1:
            warn(f"[{eid or '?'}] {c}: code {codes} -> {val:#04x}")
        out["code"] = val
        # flags and max inc
        for field, key in (("iar", "iar"), ("dar", "dar"), ("opc", "opc"), ("max_inc", "max")):
            vals = {}
            if f:
                vals["4.15"] = f[field] if field != "max_inc" else f["max_inc"]
            if r42:
                vals["4-42"] = r42[key]
            for num, r, _ in cats:
                vals[num] = r[key]
            v415 = vals.get("4.15") if f else vals.get("4-42")
            val, eid = decided(c, field, v415)
            distinct = {v for v in vals.values()}
            if len(distinct) > 1 or val != v415:
                warn(f"[{eid or '?'}] {c}: {field} {vals} -> {val}")
            out[field] = val
        if f and f["iar"] is None:
            warn(f"[ME9] {c}: IAR/DAR/OPC garbled: {f['flags_raw']!r}")
        # MT type
        types = {}
        if f:
            types["4.15"] = f["mt"]
        if r42:
            types["4-42"] = r42["type"] or "(blank)"
        for num, r, _ in cats:
            if r.get("type"):
                types[num] = r["type"]
        val, eid = decided(c, "mt", types.get("4.15", types.get("4-42")))
        if len(set(types.values())) > 1 or eid:
            warn(f"[{eid or 'ME17'}] {c}: MT type {types} -> {val}")
        out["mt"] = val
        final[c] = out

    # --- L1D / L2D sets
    l1d, l2d = {}, {}
    for c, rows in cat_rows.items():
        for num, r, t in rows:
            m = re.search(r"L1D Cache Set (\d+)", t["title"])
            if m:
                l1d[c] = m.group(1)
            m = re.search(r"L2 Data Cache Set (\d+)", t["title"])
            if m:
                l2d[c] = m.group(1)
    for c in order415:
        f = ev[c]
        cat_set1 = re.search(r"L1D Cache Set (\d+)", f["category"])
        note_set1 = re.search(r"restricted set (\d+) L1D", f["note"])
        cat_set2 = re.search(r"L2 Data Cache Set (\d+)", f["category"])
        note_set2 = re.search(r"restricted set (\d+) ?L2D", f["note"])
        s = {"table": l1d.get(c), "category": cat_set1 and cat_set1.group(1), "note": note_set1 and note_set1.group(1)}
        if len({v for v in s.values() if v}) > 1 or (any(s.values()) and not s["table"]):
            warn(f"[ME13] {c}: L1D set {s} -> {s['table']}")
        s = {"table": l2d.get(c), "category": cat_set2 and cat_set2.group(1), "note": note_set2 and note_set2.group(1)}
        if len({v for v in s.values() if v}) > 1 or (any(s.values()) and not s["table"]):
            warn(f"[ME18] {c}: L2D set {s} -> {s['table']}")
        if c in l2d and not note_set2:
            warn(f"[ME18] {c}: L2D set {l2d[c]} from its table; the 4.15 note says: {f['note'][:90]!r}")
    for c in DECISIONS:
        if "l2d_set" in DECISIONS[c]:
            l2d[c] = DECISIONS[c]["l2d_set"][0]
            warn(f"[{DECISIONS[c]['l2d_set'][1]}] {c}: L2D set inferred {l2d[c]}")
    sets_l2 = sorted({int(v) for v in l2d.values()})
    warn(f"[ME18] 4.8.4 says 'divided into 8 sets'; set tables number {sets_l2}")

    # --- .all capability, thread, MESI, exclusions
    allcap, thread, mesi, excludes = {}, {}, set(), defaultdict(set)
    for c, rows in cat_rows.items():
        for num, r, t in rows:
            if r.get("all"):
                allcap[c] = "Y" if r["all"] in ("Y", "Y/N") else r["all"]
                if r["all"] == "Y/N":
                    warn(f"[ME22,ME26] {c}: Table 4-19 .all capable 'Y/N' (umask dependent): event Y, umask overrides")
            if "MESI filtering capability" in (r.get("desc") or ""):
                mesi.add(c)
            if re.search(r"Set \d+$", t["title"]) and "L2 Data" in t["title"] or "Not Set Restricted" in t["title"]:
                d = r.get("desc") or ""
                tt = None
                if re.search(r"ActiveTrue or ActiveApprox", d):
                    tt = "ActiveTrue/ActiveApprox"
                elif re.search(r"ActiveApprox", d):
                    tt = "ActiveApprox"
                elif re.search(r"ActiveTrue", d):
                    tt = "ActiveTrue"
                elif re.search(r"TrueThr(?:ea)?d", d):
                    tt = "TrueThrd"
                if tt:
                    thread.setdefault(c, {})["table " + num] = tt
    for c in order415:
        note = ev[c]["note"]
        n = note.lower()
        if "qualified by mesi" in n:
            if c not in mesi:
                warn(f"{c}: 4.15 says MESI-qualified, Table 4-31 does not")
            mesi.add(c)
        elif c in mesi:
            warn(f"{c}: Table 4-31 says MESI filtering, 4.15 does not")
        if re.search(r"this event is not \.all capable|none of (these|the umasks in this) events? (are|is) \.all capable", n):
            if allcap.get(c, "N") != "N":
                warn(f"{c}: 4.15 says not .all capable, Table 4-19 says {allcap.get(c)}")
            if c not in allcap:
                warn(f"{c}: not .all capable per 4.15 only")
            allcap[c] = allcap.get(c, "N") if c in allcap else "N"
        if ".all field is ignored" in n:
            warn(f"[ME23] {c}: '.all field is ignored; counts as if .all is set': no all_capable attr")
        t = None
        if "depending on the umask" in n:
            t = "per umask"
        elif re.search(r"true thread id|its true thread|true tread", n) and "approximation" in n:
            t = "TrueThrd/ActiveApprox"
        elif re.search(r"approximation", n):
            t = "ActiveApprox"
        elif re.search(r"active thread is the true thread|active thread for a true thread", n):
            t = "ActiveTrue"
        elif re.search(r"true thread id", n):
            t = "TrueThrd"
        if t:
            thread.setdefault(c, {})["4.15"] = t
        m = re.search(r"only 1 of the 2 (\w+) events may be measured", n, re.I)
        if m:
            prefix = m.group(1).upper()
            others = [o for o in order415 if o.startswith(prefix) and o != c]
            excludes[c].update(others)
    thread_final = {}
    for c, srcs in sorted(thread.items()):
        d = DECISIONS.get(c, {}).get("thread")
        v = d[0] if d else srcs.get("4.15") or next(iter(srcs.values()))
        if len(set(srcs.values())) > 1 or d:
            warn(f"[{d[1] if d else '?'}] {c}: thread {srcs} -> {v}")
        thread_final[c] = v
    for c, d in DECISIONS.items():
        if "all_capable" in d:
            allcap[c] = d["all_capable"][0]
            warn(f"[{d['all_capable'][1]}] {c}: all_capable {d['all_capable'][0]} from the 4.15 text")
    for c in sorted(excludes):
        warn(f"[ME32] {c}: excludes {sorted(excludes[c])}")

    # --- emit
    print(header_comment())
    print('family = "montecito"')
    print('source = "Dual-Core Update to the Intel Itanium 2 Processor Reference Manual (Montecito), chapter 4: '
          'section 4.15 event list and unit-mask tables, Table 4-42 and the tables of sections 4.3-4.13"')
    by_code = sorted(all_names, key=lambda c: (final[c]["code"], c in SUBEVENTS, c))
    for c in by_code:
        f = ev.get(c)
        out = final[c]
        print()
        print("[[event]]")
        print(f"name = {q(c)}")
        print(f"code = {out['code']:#04x}")
        if f:
            desc = f["definition"]
        else:
            desc = clean(t42[c]["desc"]) + " (Table 4-42 only; no entry in section 4.15)"
        print(f"description = {q(desc)}")
        aliases = sorted(n for n in spellings[c] if n != c and NAME_VARIANTS.get(n, (None, False))[1])
        if aliases:
            print(f"aliases = [{', '.join(q(a) for a in aliases)}]")
        if c in SUBEVENTS:
            print(f"subevent_of = {q(SUBEVENTS[c])}")
        if c in mesi:
            print('modifiers = ["mesi"]')
        attrs = []
        if f:
            attrs.append(("title", f["title"]))
            cat = DECISIONS.get(c, {}).get("category", (f["category"],))[0]
            attrs.append(("category", cat))
        for k in ("iar", "dar", "opc", "max_inc", "mt"):
            v = out[k]
            if k == "max_inc" and not re.fullmatch(r"\d+", v or ""):
                warn(f"[ME2] {c}: max_inc {v!r} is not a number: attr left out")
                continue
            attrs.append((k, v))
        if c in l1d:
            attrs.append(("l1d_set", l1d[c]))
        if c in l2d:
            attrs.append(("l2d_set", l2d[c]))
        if c in allcap:
            attrs.append(("all_capable", allcap[c]))
        if c in thread_final and "/" not in thread_final[c] and thread_final[c] != "per umask":
            attrs.append(("thread", thread_final[c]))
        if c in excludes:
            attrs.append(("excludes", ",".join(sorted(excludes[c]))))
        print("attrs = [")
        for k, v in attrs:
            print(f"  {{ key = {q(k)}, value = {q(v)} }},")
        print("]")
        if f and f["umasks"]:
            umasks = f["umasks"]
            names = [u["name"] for u in umasks]
            dflt = "ALL" if "ALL" in names else "THIS" if "THIS" in names else None
            print(f"umask_combinations = {q('any' if c in COMBINATIONS_ANY else 'listed')}")
            if c in COMBINATIONS_ANY:
                print(f"umask_note = {q(COMBINATIONS_ANY[c][1])}")
            print("umasks = [")
            for u in umasks:
                parts = [f"name = {q(u['name'])}", f"value = {u['value']:#x}"]
                if u["ignored"]:
                    parts.append(f"ignored = {u['ignored']:#x}")
                if u["name"] == dflt:
                    parts.append("default = true")
                parts.append(f"description = {q(u['description'])}")
                ua = [(k, v) for k, v in u["attrs"] if not (k == "thread" and c == "L2D_L3ACCESS_CANCEL" and v == "ActiveTrue")]
                ua = [(k, v) for k, v in ua if not (k == "thread" and thread_final.get(c) == v)]
                ua = [(k, v) for k, v in ua if not (k == "all_capable" and allcap.get(c) == v)]
                if ua:
                    parts.append("attrs = [" + ", ".join(f"{{ key = {q(k)}, value = {q(v)} }}" for k, v in ua) + "]")
                print("  { " + ", ".join(parts) + " },")
            print("]")
        if f and f["invalid"]:
            print("invalid_umasks = [")
            for b in f["invalid"]:
                parts = [f"value = {b['value']:#x}"]
                if b["ignored"]:
                    parts.append(f"ignored = {b['ignored']:#x}")
                parts += [f"kind = {q(b['kind'])}", f"note = {q(b['note'])}"]
                print("  { " + ", ".join(parts) + " },")
            print("]")


def q(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


HEADER = """\
# Intel Itanium 2 "Montecito" (dual-core) performance monitor events: the event codes
# written to PMC4-15.es (bits 15:8) and the unit masks written to PMC.umask (bits 19:16).
#
# Source: "Dual-Core Update to the Intel Itanium 2 Processor Reference Manual", chapter
# 4 "Performance Monitor Events" (shared/spec/itanium2-montecito-performance-
# monitoring.md, converted from the PDF): section 4.15 "Performance Monitor Event List"
# (one entry per event, with its "Unit Masks for ..." table), Table 4-42 "All
# Performance Monitors Ordered by Code" (section 4.14) and the per-category tables of
# sections 4.3-4.13 (Tables 4-1 ... 4-41, with the L1D set tables 4-11 ... 4-16 and the
# L2D set tables 4-21 ... 4-30).
#
# Events: one [[event]] per 4.15 entry (169), plus the two monitors only Table 4-42
# lists (SI_L3T_TRACE_CACHE 0x9d, TAGGED_L2D_RETURN_PORT 0xee; ME2): 171, in code order.
# name = the spec's symbol name. Where the sources spell it differently, section 4.15
# wins unless the prose or both other tables agree against it (ME3-ME7); the other
# spellings a user may meet in the spec are aliases. code = Event Code. description =
# the 4.15 Definition (Table 4-42's description for the two 4-42-only monitors), in
# the spec's words without markdown; conversion artifacts such as "ldc . c" are mended
# (ME24). IA64_INST_RETIRED is IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33 under another
# name ("a sub event"): subevent_of, same code 0x08 (ME34).
#
# Unit masks: one per row of the event's 4.15 table whose Extension is a name, named
# verbatim (dots included: BR_MISPRED_DETAIL.ALL.ALL_PRED; two garbled names mended,
# ME15). value = the PMC.umask[19:16] pattern with x read as 0; ignored = the x
# (don't-care) bits: bxx01 is value 0x1, ignored 0xc; the one-bit patterns of the
# "PMC.umask [16]" tables (b0, b1) are bit 16 with bits 19:17 ignored (ME33). Rows whose
# Extension is "---" are invalid_umasks, one entry per value of a range (b1001-b1111 is
# seven entries), kind from the words: "nothing will be counted" and "None is counted"
# -> nothing (ME28), "illegal selection" -> illegal, "count is undefined" -> undefined;
# note = the spec's words. Three ranges overlapping a named row are shortened (ME16). A
# named row stays a unit mask even where its description says "(* meaningless for this
# event *)" or "None is counted" (ME28, ME29).
# umask_combinations = "listed" everywhere (the values are enumerated, not bit sets),
# except SYLL_NOT_DISPERSED ("Any combination b0000-b1111 is valid": "any", ME19).
# Default unit mask (used when an event string names none): the one named ALL, else the
# one named THIS, else none -- the event string must then name a unit mask (for
# example the BUS_* events, whose masks are EITHER/IO/SELF/ANY, or L3_READS' ALL.ALL).
#
# Attributes (attrs; all values are strings):
#   title        the 4.15 Title.
#   category     the 4.15 Category text (two garbled ones mended, ME13).
#   iar dar opc  "Y"/"N": can the event be constrained by the Instruction Address Range,
#                Data Address Range and Opcode Match registers (4.15 "IAR/DAR/OPC"
#                cross-checked with Table 4-42 and the category tables; ME9-ME11, ME27).
#   max_inc      Max. Inc/Cyc, decimal (ME4, ME12, ME26); absent where the spec has n/a.
#   mt           MT capture type (4.15; Table 4-42 "Type"; section 4.2.1): A Active
#                (only while its thread is active), F Floating (belongs to a thread, may
#                occur in the background), S Self Floating (Floating with the .SELF unit
#                mask, else Causal), C Causal (belongs to no thread, credited to the
#                active one). Only duplicated counters (PMC4-9) should count F, S and C
#                events, CPU_OP_CYCLES excepted (ME17).
#   l1d_set      "0"-"4", "6": the L1D set (section 4.8.2.x tables 4-11 ... 4-16; set 5
#                is reserved); one set at a time, selected through PMC5 (ME13, ME35).
#   l2d_set      "0"-"8": the L2D set (section 4.8.4.x tables 4-21 ... 4-29); two sets
#                at a time, through PMC4 and PMC6. Absent for the L2D events that are not
#                set restricted (L2D_MISSES, L2D_INSERT_MISSES, L2D_INSERT_HITS; 4.8.4.10)
#                and for every non-L2D event (ME18; TAGGED_L2D_RETURN_PORT inferred, ME2).
#   all_capable  "Y"/"N": may the event be counted with .all (both threads)? Table 4-19's
#                column, the 4.15 notes and the unit-mask notes; a unit mask that differs
#                carries its own attrs (L2D_BYPASS, L2D_FORCE_RECIRC; ME22, ME23, ME26).
#   thread       L2D events: ActiveTrue, ActiveApprox or TrueThrd (section 4.8.4), from
#                the 4.15 notes and the set tables; per unit mask where they differ
#                (ME20-ME22).
#   excludes     events that cannot be measured at the same time as this one
#                (L2D_OZQ_CANCELS0/1: "Only 1 of the 2 L2D_OZQ_CANCEL events may be
#                measured at any given time"; ME32).
# modifiers = ["mesi"]: the event may be qualified by PMC.MESI (bits 30:27; Table 4-31
# "MESI filtering capability" and the 4.15 notes): the four L3 events so marked.
#
# Every disagreement between the sources, and every ambiguity we decided, is a row of
# docs/ERRATA.md (ME ids); crates/arch/tests/montecito_tables.rs pins the table.
# First draft: tools/draft_montecito_table.py (prints the cross-check to stderr).
"""


def header_comment():
    return HEADER


if __name__ == "__main__":
    main()
