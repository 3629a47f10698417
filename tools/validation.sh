#!/usr/bin/env bash
# Regenerates the simulated columns of docs/validation.md.
#
#   PMU=target/release/pmu tools/validation.sh            # all chips
#   PMU=... tools/validation.sh arm t4 kt t1 mt            # some of them
#
# Every figure comes from `pmu stat -x,` counts (and, for Montecito's load latency,
# `pmu record` + `pmu report --json`) on the built-in workloads, seed 1, CYCLES
# cycles each. Events are grouped so that no run multiplexes: every count is exact.
# The simulation is deterministic, so counts of one workload taken in different runs
# belong to the same execution. Output: one markdown table per chip, a row per
# figure and a column per workload, as docs/validation.md shows them.
set -euo pipefail

PMU=${PMU:-target/release/pmu}
CYCLES=${CYCLES:-1e8}
ONCE_CYCLES=${ONCE_CYCLES:-1e7}   # the concurrent SPARC engine simulates every cycle
WORKLOADS=${WORKLOADS:-"compute branchy fp stream chase"}
CHIPS=${*:-"arm t4 kt t1 mt"}
RAW=${RAW:-}                      # RAW=1 also prints every count the figures come from

[ -x "$PMU" ] || { echo "validation.sh: no pmu binary at '$PMU' (set PMU=...)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "validation.sh: python3 is needed for Montecito's latency histograms" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
COUNTS=$TMP/counts
: > "$COUNTS"
printf '[core]\nstrands_at_once = true\n' > "$TMP/at-once.toml"

# [LEN=N] count KEY WORKLOAD PMU EVENTS [pmu stat options...]
# Appends "KEY WORKLOAD EVENT COUNT" lines, and the run's length (LEN, default
# CYCLES) as event "cycles".
count() {
    local key=$1 w=$2 pmu=$3 ev=$4 len=${LEN:-$CYCLES}
    shift 4
    "$PMU" stat --pmu "$pmu" -w "$w" --cycles "$len" "$@" -e "$ev" -x, --no-big-num --no-metrics 2> >(grep -v 'is undefined for this run' >&2) |
        awk -F, -v k="$key" -v w="$w" -v len="$len" '
            NR == 1 { printf "%s %s cycles %.0f\n", k, w, len }
            $1 != "" && $3 != "" {
                if ($5 != "100.00") { print "validation.sh: " $3 " was multiplexed" > "/dev/stderr"; exit 1 }
                print k, w, $3, $1
            }' >> "$COUNTS"
}

# latency KEY WORKLOAD PMU: Montecito data EAR histogram, as "KEY WORKLOAD LAT_<level> share"
latency() {
    local key=$1 w=$2 pmu=$3
    "$PMU" record --pmu "$pmu" -e DATA_EAR_CACHE_LAT4 -c 200 -w "$w" --cycles "$CYCLES" \
        -o "$TMP/rec.json" >/dev/null
    "$PMU" report --json "$TMP/rec.json" | python3 -c '
import json, sys
key, w = sys.argv[1], sys.argv[2]
d = json.load(sys.stdin)["dear"]
total = sum(l["samples"] for l in d["latency"])
print(key, w, "LAT_samples", total)
for l in d["latency"]:
    lo = min(b["from"] for b in l["buckets"])
    hi = max(b["to"] for b in l["buckets"])
    print(key, w, "LAT_" + l["level"], "%.1f%%@%d-%d" % (100.0 * l["samples"] / total, lo, hi - 1))
' "$key" "$w" >> "$COUNTS"
}

for chip in $CHIPS; do
    for w in $WORKLOADS; do
        case $chip in
        arm)  # ARM1176: CCNT plus two event counters a run
            for pair in INSTR_EXEC,BR_EXEC BR_MISPREDICT,ICACHE_MISS DCACHE_ACCESS,DCACHE_HIT \
                        DCACHE_MISS,DCACHE_WBACK DDEP_STALL,EXPL_D_ACCESS; do
                count arm "$w" arm1176 "CPU_CYCLES,$pair"
            done ;;
        t4)   # SPARC T4: four PICs per strand, summed over the eight strands; two DRAM counters
            count t4 "$w" sparc-t4 INSTR.ALL,CYCLES,INSTR.LOADS,INSTR.BRANCHES,sparc-t4-dram::ALL_READS,sparc-t4-dram::ALL_WRITES
            count t4 "$w" sparc-t4 DC_MISS_ASYNC.ANY,DC_MISS_ASYNC.LOCAL_MEM_HIT,DC_MISS_ASYNC.REMOTE_HIT,BR_MISPREDICT.ALL,sparc-t4-dram::READ_QUEUE_LATENCY,sparc-t4-dram::READS
            count t4 "$w" sparc-t4 IC_MISS_ASYNC.ANY,L2_EVENT.CLEAN_EVICT,L2_EVENT.DIRTY_EVICT,DC_MISS_ASYNC.L2_L3_HIT
            count t4one "$w" sparc-t4 INSTR.ALL,CYCLES --threads 1
            LEN=$ONCE_CYCLES count t4once "$w" sparc-t4 INSTR.ALL,CYCLES --machine-config "$TMP/at-once.toml" ;;
        kt)   # SPARC KT: one L2-miss counter a strand, four DRAM counters
            count kt "$w" sparc-kt L2_MISSES,sparc-kt-dram::ALL_READS,sparc-kt-dram::ALL_WRITES,sparc-kt-dram::READ_QUEUE_LATENCY,sparc-kt-dram::READS
            count kt "$w" sparc-kt L2_MISSES_REMOTE ;;
        t1)   # Niagara: the hypervisor's MMU statistics only
            count t1 "$w" niagara IMMU_TSB_HITS.ALL,IMMU_TSB_TICKS.ALL,DMMU_TSB_HITS.ALL,DMMU_TSB_TICKS.ALL ;;
        mt)   # Montecito, two hardware threads (montecito) and one (montecito-st)
            count mt "$w" montecito IA64_INST_RETIRED.THIS,CPU_OP_CYCLES.ALL,BR_MISPRED_DETAIL.ALL.ALL_PRED,BR_MISPRED_DETAIL.ALL.CORRECT_PRED,L1D_READ_MISSES.ALL,L1D_READS_SET1,BUS_MEM_READ.BRL.SELF,BUS_MEM_READ.BRIL.SELF,BUS_WR_WB.EQ_128BYTE.SELF,L3_MISSES,L3_REFERENCES
            count mt "$w" montecito NOPS_RETIRED,L2D_REFERENCES.ALL,L2D_INSERT_MISSES,L2D_MISSES,L2I_DEMAND_READS,L2I_PREFETCHES,L1I_READS,L1I_PREFETCHES
            count mtst "$w" montecito-st IA64_INST_RETIRED.THIS,CPU_OP_CYCLES.ALL,NOPS_RETIRED
            latency mt "$w" montecito ;;
        *) echo "validation.sh: unknown chip '$chip' (arm t4 kt t1 mt)" >&2; exit 2 ;;
        esac
    done
done

if [ -n "$RAW" ]; then echo "# raw counts: key workload event count"; sort "$COUNTS"; fi

# Derive the figures. Clocks are the chips' own (docs/machines.md, ERRATA MSP16, MMC24;
# 700 MHz for the Raspberry Pi's ARM1176); pmu's own time base is 1 GHz.
awk -v chips="$CHIPS" -v workloads="$WORKLOADS" '
function v(k, w, e) { if (!((k, w, e) in c)) { missing = 1; return 0 } return c[k, w, e] }
function div(a, b) { return b == 0 ? "n/a" : a / b }
function f(x, fmt) { return x == "n/a" ? "n/a" : sprintf(fmt, x) }
function row(label, name,    i, line, val) {
    line = "| " label
    for (i = 1; i <= nw; i++) { missing = 0; val = fig(name, W[i]); line = line " | " (missing ? "-" : val) }
    print line " |"
}
function header(title,    i, line, sep) {
    print ""; print "### " title; print ""
    line = "| figure"; sep = "|---"
    for (i = 1; i <= nw; i++) { line = line " | " W[i]; sep = sep "|---:" }
    print line " |"; print sep "|"
}
# ARM1176
function arm_ipc(w) { return f(div(v("arm", w, "INSTR_EXEC"), v("arm", w, "CPU_CYCLES")), "%.2f") }
function arm_dmiss(w,   m) { m = v("arm", w, "DCACHE_MISS") - (v("arm", w, "DCACHE_ACCESS") - v("arm", w, "DCACHE_HIT")); if (m < 0) m = 0
                             return f(div(100 * m, v("arm", w, "DCACHE_HIT")), "%.1f%%") }
function arm_dmiss_raw(w) { return f(div(100 * v("arm", w, "DCACHE_MISS"), v("arm", w, "DCACHE_HIT")), "%.1f%%") }
function arm_impki(w) { return f(div(1000 * v("arm", w, "ICACHE_MISS"), v("arm", w, "INSTR_EXEC")), "%.2f") }
function arm_br(w) { return f(div(100 * v("arm", w, "BR_MISPREDICT"), v("arm", w, "BR_EXEC")), "%.2f%%") }
function arm_bytes(w,   m) { m = v("arm", w, "DCACHE_MISS") - (v("arm", w, "DCACHE_ACCESS") - v("arm", w, "DCACHE_HIT")); if (m < 0) m = 0
                             return 32 * (m + v("arm", w, "ICACHE_MISS")) + 16 * v("arm", w, "DCACHE_WBACK") }
function arm_bpc(w) { return f(div(arm_bytes(w), v("arm", w, "CPU_CYCLES")), "%.3f") }
function arm_gbs(w) { return f(div(arm_bytes(w) * 0.7, v("arm", w, "CPU_CYCLES")), "%.2f") }
function arm_ddep(w,   m) { m = v("arm", w, "DCACHE_MISS") - (v("arm", w, "DCACHE_ACCESS") - v("arm", w, "DCACHE_HIT"))
                            return f(div(v("arm", w, "DDEP_STALL"), m), "%.1f") }
# SPARC T4
function t4_core(w) { return f(div(v("t4", w, "INSTR.ALL"), v("t4", w, "cycles")), "%.3f") }
function t4_strand(w) { return f(div(v("t4", w, "INSTR.ALL"), v("t4", w, "CYCLES")), "%.3f") }
function t4_one(w) { return f(div(v("t4one", w, "INSTR.ALL"), v("t4one", w, "CYCLES")), "%.3f") }
function t4_once(w) { return f(div(v("t4once", w, "INSTR.ALL"), v("t4once", w, "cycles")), "%.3f") }
function t4_l1d(w) { return f(div(100 * v("t4", w, "DC_MISS_ASYNC.ANY"), v("t4", w, "INSTR.LOADS")), "%.2f%%") }
function t4_impki(w) { return f(div(1000 * v("t4", w, "IC_MISS_ASYNC.ANY"), v("t4", w, "INSTR.ALL")), "%.2f") }
function t4_mem(w) { return f(div(100 * (v("t4", w, "DC_MISS_ASYNC.LOCAL_MEM_HIT") + v("t4", w, "DC_MISS_ASYNC.REMOTE_HIT")), v("t4", w, "DC_MISS_ASYNC.ANY")), "%.1f%%") }
function t4_l2ev(w) { return f(div(1000 * (v("t4", w, "L2_EVENT.CLEAN_EVICT") + v("t4", w, "L2_EVENT.DIRTY_EVICT")), v("t4", w, "INSTR.ALL")), "%.1f") }
function t4_br(w) { return f(div(100 * v("t4", w, "BR_MISPREDICT.ALL"), v("t4", w, "INSTR.BRANCHES")), "%.2f%%") }
function t4_bpc(w) { return f(div(64 * (v("t4", w, "ALL_READS") + v("t4", w, "ALL_WRITES")), v("t4", w, "cycles")), "%.3f") }
function t4_gbs(w) { return f(div(64 * 2.85 * (v("t4", w, "ALL_READS") + v("t4", w, "ALL_WRITES")), v("t4", w, "cycles")), "%.2f") }
function t4_rq(w) { return f(div(v("t4", w, "READ_QUEUE_LATENCY"), v("t4", w, "READS")), "%.1f") }
# SPARC KT
function kt_l2k(w) { return f(div(1000 * v("kt", w, "L2_MISSES"), v("kt", w, "cycles")), "%.2f") }
function kt_remote(w) { return f(div(100 * v("kt", w, "L2_MISSES_REMOTE"), v("kt", w, "L2_MISSES")), "%.1f%%") }
function kt_bpc(w) { return f(div(64 * (v("kt", w, "ALL_READS") + v("kt", w, "ALL_WRITES")), v("kt", w, "cycles")), "%.3f") }
function kt_gbs(w) { return f(div(64 * 1.65 * (v("kt", w, "ALL_READS") + v("kt", w, "ALL_WRITES")), v("kt", w, "cycles")), "%.2f") }
function kt_rq(w) { return f(div(v("kt", w, "READ_QUEUE_LATENCY"), v("kt", w, "READS")), "%.1f") }
# Niagara
function t1_itlb(w) { return f(div(1e6 * v("t1", w, "IMMU_TSB_HITS.ALL"), v("t1", w, "cycles")), "%.1f") }
function t1_dtlb(w) { return f(div(1e6 * v("t1", w, "DMMU_TSB_HITS.ALL"), v("t1", w, "cycles")), "%.1f") }
function t1_iticks(w) { return f(div(v("t1", w, "IMMU_TSB_TICKS.ALL"), v("t1", w, "IMMU_TSB_HITS.ALL")), "%.1f") }
function t1_dticks(w) { return f(div(v("t1", w, "DMMU_TSB_TICKS.ALL"), v("t1", w, "DMMU_TSB_HITS.ALL")), "%.1f") }
# Montecito
function mt_ipc(w) { return f(div(v("mt", w, "IA64_INST_RETIRED.THIS"), v("mt", w, "cycles")), "%.2f") }
function mt_ipc_nonop(w) { return f(div(v("mt", w, "IA64_INST_RETIRED.THIS") - v("mt", w, "NOPS_RETIRED"), v("mt", w, "cycles")), "%.2f") }
function mt_st(w) { return f(div(v("mtst", w, "IA64_INST_RETIRED.THIS"), v("mtst", w, "CPU_OP_CYCLES.ALL")), "%.2f") }
function mt_st_nonop(w) { return f(div(v("mtst", w, "IA64_INST_RETIRED.THIS") - v("mtst", w, "NOPS_RETIRED"), v("mtst", w, "CPU_OP_CYCLES.ALL")), "%.2f") }
function mt_gain(w) { return f(div(v("mt", w, "IA64_INST_RETIRED.THIS") * v("mtst", w, "cycles"), v("mtst", w, "IA64_INST_RETIRED.THIS") * v("mt", w, "cycles")), "%.2fx") }
function mt_l1d(w) { return f(div(100 * v("mt", w, "L1D_READ_MISSES.ALL"), v("mt", w, "L1D_READS_SET1")), "%.1f%%") }
function mt_l1i(w) { return f(div(100 * (v("mt", w, "L2I_DEMAND_READS") + v("mt", w, "L2I_PREFETCHES")), v("mt", w, "L1I_READS") + v("mt", w, "L1I_PREFETCHES")), "%.2f%%") }
function mt_l2d(w) { return f(div(100 * v("mt", w, "L2D_INSERT_MISSES"), v("mt", w, "L2D_REFERENCES.ALL")), "%.2f%%") }
function mt_l2d_primary(w) { return f(div(100 * v("mt", w, "L2D_MISSES"), v("mt", w, "L2D_REFERENCES.ALL")), "%.2f%%") }
function mt_l3(w) { return f(div(100 * v("mt", w, "L3_MISSES"), v("mt", w, "L3_REFERENCES")), "%.1f%%") }
function mt_br(w) { return f(div(100 * (v("mt", w, "BR_MISPRED_DETAIL.ALL.ALL_PRED") - v("mt", w, "BR_MISPRED_DETAIL.ALL.CORRECT_PRED")), v("mt", w, "BR_MISPRED_DETAIL.ALL.ALL_PRED")), "%.2f%%") }
function mt_bytes(w) { return 128 * (v("mt", w, "BUS_MEM_READ.BRL.SELF") + v("mt", w, "BUS_MEM_READ.BRIL.SELF") + v("mt", w, "BUS_WR_WB.EQ_128BYTE.SELF")) }
function mt_bpc(w) { return f(div(mt_bytes(w), v("mt", w, "cycles")), "%.3f") }
function mt_gbs(w) { return f(div(mt_bytes(w) * 1.6, v("mt", w, "cycles")), "%.2f") }
function mt_lat_n(w) { return v("mt", w, "LAT_samples") }
function mt_lat_l2(w) { return ((("mt", w, "LAT_L2") in c) ? c["mt", w, "LAT_L2"] : "0%") }
function mt_lat_l3(w) { return ((("mt", w, "LAT_L3") in c) ? c["mt", w, "LAT_L3"] : "0%") }
function mt_lat_mem(w) { return ((("mt", w, "LAT_memory") in c) ? c["mt", w, "LAT_memory"] : "0%") }
function fig(n, w) {
    if (n == "arm_ipc") return arm_ipc(w)
    if (n == "arm_dmiss") return arm_dmiss(w)
    if (n == "arm_dmiss_raw") return arm_dmiss_raw(w)
    if (n == "arm_impki") return arm_impki(w)
    if (n == "arm_br") return arm_br(w)
    if (n == "arm_bytes") return arm_bytes(w)
    if (n == "arm_bpc") return arm_bpc(w)
    if (n == "arm_gbs") return arm_gbs(w)
    if (n == "arm_ddep") return arm_ddep(w)
    if (n == "t4_core") return t4_core(w)
    if (n == "t4_strand") return t4_strand(w)
    if (n == "t4_one") return t4_one(w)
    if (n == "t4_once") return t4_once(w)
    if (n == "t4_l1d") return t4_l1d(w)
    if (n == "t4_impki") return t4_impki(w)
    if (n == "t4_mem") return t4_mem(w)
    if (n == "t4_l2ev") return t4_l2ev(w)
    if (n == "t4_br") return t4_br(w)
    if (n == "t4_bpc") return t4_bpc(w)
    if (n == "t4_gbs") return t4_gbs(w)
    if (n == "t4_rq") return t4_rq(w)
    if (n == "kt_l2k") return kt_l2k(w)
    if (n == "kt_remote") return kt_remote(w)
    if (n == "kt_bpc") return kt_bpc(w)
    if (n == "kt_gbs") return kt_gbs(w)
    if (n == "kt_rq") return kt_rq(w)
    if (n == "t1_itlb") return t1_itlb(w)
    if (n == "t1_dtlb") return t1_dtlb(w)
    if (n == "t1_iticks") return t1_iticks(w)
    if (n == "t1_dticks") return t1_dticks(w)
    if (n == "mt_ipc") return mt_ipc(w)
    if (n == "mt_ipc_nonop") return mt_ipc_nonop(w)
    if (n == "mt_st") return mt_st(w)
    if (n == "mt_st_nonop") return mt_st_nonop(w)
    if (n == "mt_gain") return mt_gain(w)
    if (n == "mt_l1d") return mt_l1d(w)
    if (n == "mt_l1i") return mt_l1i(w)
    if (n == "mt_l2d") return mt_l2d(w)
    if (n == "mt_l2d_primary") return mt_l2d_primary(w)
    if (n == "mt_l3") return mt_l3(w)
    if (n == "mt_br") return mt_br(w)
    if (n == "mt_bytes") return mt_bytes(w)
    if (n == "mt_bpc") return mt_bpc(w)
    if (n == "mt_gbs") return mt_gbs(w)
    if (n == "mt_lat_n") return mt_lat_n(w)
    if (n == "mt_lat_l2") return mt_lat_l2(w)
    if (n == "mt_lat_l3") return mt_lat_l3(w)
    if (n == "mt_lat_mem") return mt_lat_mem(w)
    print "validation.sh: no figure " n > "/dev/stderr"; exit 1
}
{ c[$1, $2, $3] = $4 }
END {
    nw = split(workloads, W, " ")
    if (chips ~ /arm/) {
        header("ARM1176 (arm1176, one thread, 700 MHz assumed)")
        row("IPC", "arm_ipc")
        row("L1D miss ratio, cacheable estimate", "arm_dmiss")
        row("L1D miss ratio, AN195 estimate (MISS/HIT)", "arm_dmiss_raw")
        row("L1I misses per 1000 instructions", "arm_impki")
        row("branch mispredict rate", "arm_br")
        row("memory traffic, bytes/cycle (estimate)", "arm_bpc")
        row("memory traffic, GB/s at 700 MHz", "arm_gbs")
        row("DDEP_STALL cycles per D-miss (latency proxy)", "arm_ddep")
    }
    if (chips ~ /t4/) {
        header("SPARC T4 (sparc-t4, sparc-t4-dram; 8 strands; 2.85 GHz)")
        row("core IPC, 8 strands in turns", "t4_core")
        row("per-strand IPC, 8 strands in turns", "t4_strand")
        row("IPC, 1 strand", "t4_one")
        row("core IPC, 8 strands at once (1e7 cycles)", "t4_once")
        row("L1D misses per load", "t4_l1d")
        row("L1I misses per 1000 instructions", "t4_impki")
        row("L1D misses served by memory (L2+L3 miss)", "t4_mem")
        row("L2 evictions per 1000 instructions", "t4_l2ev")
        row("branch mispredict rate", "t4_br")
        row("DRAM traffic, bytes/cycle", "t4_bpc")
        row("DRAM traffic, GB/s at 2.85 GHz", "t4_gbs")
        row("DRAM read queue latency, cycles", "t4_rq")
    }
    if (chips ~ /kt/) {
        header("SPARC KT / T3 (sparc-kt, sparc-kt-dram; 8 strands; 1.65 GHz)")
        row("L2 misses per 1000 cycles", "kt_l2k")
        row("L2 misses from remote memory", "kt_remote")
        row("DRAM traffic, bytes/cycle", "kt_bpc")
        row("DRAM traffic, GB/s at 1.65 GHz", "kt_gbs")
        row("DRAM read queue latency, cycles", "kt_rq")
    }
    if (chips ~ /t1/) {
        header("Niagara / T1 (niagara MMU statistics; 4 strands; 1.2 GHz)")
        row("ITLB misses (IMMU TSB hits) per 10^6 cycles", "t1_itlb")
        row("DTLB misses (DMMU TSB hits) per 10^6 cycles", "t1_dtlb")
        row("ticks per IMMU TSB hit", "t1_iticks")
        row("ticks per DMMU TSB hit", "t1_dticks")
    }
    if (chips ~ /mt/) {
        header("Montecito (montecito: 2 threads, montecito-st: 1; 1.6 GHz)")
        row("core IPC, 2 threads", "mt_ipc")
        row("core IPC without nops, 2 threads", "mt_ipc_nonop")
        row("IPC, 1 thread", "mt_st")
        row("IPC without nops, 1 thread", "mt_st_nonop")
        row("2-thread throughput / 1-thread", "mt_gain")
        row("L1D read miss ratio", "mt_l1d")
        row("L1I miss ratio", "mt_l1i")
        row("L2D miss ratio (INSERT_MISSES, with secondary)", "mt_l2d")
        row("L2D primary misses per reference", "mt_l2d_primary")
        row("L3 miss ratio", "mt_l3")
        row("branch mispredict rate", "mt_br")
        row("bus traffic, bytes/cycle", "mt_bpc")
        row("bus traffic, GB/s at 1.6 GHz", "mt_gbs")
        row("D-EAR load-miss samples (>= 4 cycles)", "mt_lat_n")
        row("  served by L2D: share @ cycles", "mt_lat_l2")
        row("  served by L3: share @ cycles", "mt_lat_l3")
        row("  served by memory: share @ cycles", "mt_lat_mem")
    }
}' "$COUNTS"
