#!/usr/bin/env bash
# Measures the real programs of crates/cli/benches/programs/ under QEMU beside the
# built-in workloads that claim to stand for them (docs/validation.md, "Real programs
# beside the built-in workloads"; issue 42 item 4).
#
#   PMU=target/release/pmu tools/calibration.sh
#
# Needs qemu-user and the cross compilers (docs/binaries.md) and `cargo build
# --release` (the plugin beside pmu). Each program is built as docs/binaries.md builds
# it and counted on the SPARC T4 model (loads, stores, branches, taken branches,
# mispredicts, D-cache misses) and on ARM1176 (branches, mispredicts), as many events
# a run as the PMU has counters, so nothing multiplexes; the workloads run on one hardware thread for CYCLES
# cycles. Output: one markdown row per program or workload.
set -euo pipefail

PMU=${PMU:-target/release/pmu}
CYCLES=${CYCLES:-1e8}
PROGRAMS=${PROGRAMS:-"compress sort matmul chase interp"}
WORKLOADS=${WORKLOADS:-"compute branchy fp chase"}
SRC=$(dirname "$0")/../crates/cli/benches/programs

[ -x "$PMU" ] || { echo "calibration.sh: no pmu binary at '$PMU' (set PMU=...)" >&2; exit 1; }
PLUGIN=$(dirname "$PMU")/libpmukit_qemu.so
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# counts PMU EVENTS (-w W | -- PROG): prints "EVENT=COUNT" words.
counts() {
    local pmu=$1 ev=$2
    shift 2
    "$PMU" stat --pmu "$pmu" -e "$ev" -x, --no-big-num --no-metrics -o "$TMP/out" "$@" > /dev/null
    awk -F, '$1 != "" && $3 != "" && $1 !~ /^#/ { printf "%s=%s ", $3, $1 }' "$TMP/out"
}

# tally PROG: prints "ARM_INSTRUCTIONS=N ARM_LOADS=N ARM_STORES=N", QEMU's view of the
# ARM program, started as `pmu stat -- PROG` starts QEMU.
tally() {
    printf 'pmu\0stat\0--pmu\0arm1176\0-o\0%s\0--\0%s\0' "$TMP/tally-out" "$1" > "$TMP/args"
    qemu-arm -cpu arm1176 -plugin "$PLUGIN,args=$TMP/args,status=$TMP/status,tally=$TMP/tally" "$1" > /dev/null
    python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
print("ARM_INSTRUCTIONS=%d ARM_LOADS=%d ARM_STORES=%d" % (t["instructions"], t["loads"], t["stores"]))' "$TMP/tally"
}

T4A=INSTR.ALL,INSTR.LOADS,INSTR.STORES,INSTR_SPECIAL.BRANCHES
T4B=INSTR.ALL,INSTR_SPECIAL.TAKEN_BRANCHES,BR_MISPREDICT.ALL,DC_MISS_ASYNC.ANY
ARMA=INSTR_EXEC,BR_EXEC
ARMB=INSTR_EXEC,BR_MISPREDICT

row() {
    local name=$1
    shift
    local t4a t4b arma armb arm=""
    [ "$1" = -- ] && arm=$(tally "${2/@ISA@/arm}")
    t4a=$(counts sparc-t4 "$T4A" "${@/@ISA@/sparc}")
    t4b=$(counts sparc-t4 "$T4B" "${@/@ISA@/sparc}")
    arma=$(counts arm1176 "$ARMA" "${@/@ISA@/arm}")
    armb=$(counts arm1176 "$ARMB" "${@/@ISA@/arm}")
    python3 - "$name" "$t4a $t4b $arma $armb $arm" <<'PY'
import sys
name, words = sys.argv[1], sys.argv[2].split()
c = {}
for w in words:
    k, v = w.split("=")
    c[k] = int(v)
i = c["INSTR.ALL"]
pct = lambda x, d: f"{100 * x / d:.1f} %" if d else "-"
per = lambda x, d: f"{1000 * x / d:.2f}" if d else "-"
print(f"| {name} | {i:,} | {pct(c['INSTR.LOADS'], i)} | {pct(c['INSTR.STORES'], i)} "
      f"| {pct(c['INSTR_SPECIAL.BRANCHES'], i)} | {pct(c['INSTR_SPECIAL.TAKEN_BRANCHES'], c['INSTR_SPECIAL.BRANCHES'])} "
      f"| {per(c['BR_MISPREDICT.ALL'], i)} | {per(c['DC_MISS_ASYNC.ANY'], i)} "
      f"| {pct(c.get('ARM_LOADS', 0), c.get('ARM_INSTRUCTIONS', 0))} | {pct(c.get('ARM_STORES', 0), c.get('ARM_INSTRUCTIONS', 0))} "
      f"| {pct(c['BR_EXEC'], c['INSTR_EXEC'])} | {per(c['BR_MISPREDICT'], c['INSTR_EXEC'])} |")
PY
}

echo "| run | T4 instructions | loads | stores | branches | taken | mispredicts /1,000 | D-cache misses /1,000 | ARM loads | ARM stores | ARM1176 branches | ARM1176 mispredicts /1,000 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for p in $PROGRAMS; do
    arm-linux-gnueabi-gcc -O2 -static -march=armv6kz -mtune=arm1176jzf-s -mfpu=vfp -mfloat-abi=softfp -marm \
        "$SRC/$p.c" -o "$TMP/$p-arm"
    sparc64-linux-gnu-gcc -O2 -static -mcpu=niagara2 "$SRC/$p.c" -o "$TMP/$p-sparc"
    row "\`$p\`" -- "$TMP/$p-@ISA@"
done
for w in $WORKLOADS; do
    row "workload \`$w\`" --threads 1 --cycles "$CYCLES" -w "$w"
done
