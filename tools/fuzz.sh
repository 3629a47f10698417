#!/usr/bin/env bash
# Run the fuzz targets with cargo-fuzz (nightly; `cargo install cargo-fuzz`), one after
# another on one core, and print each run's executions, time and coverage. The targets
# are built optimized with debug assertions (so an arithmetic overflow is a crash) and
# without a sanitizer: the code under test is safe Rust, and the sanitizer cost 5-10x
# in executions.
#
#   tools/fuzz.sh RUNS [TARGET...]
#
# RUNS is libFuzzer's -runs (executions per target, e.g. 10000000); every target when
# none is named. MAX_TIME=SECONDS in the environment also stops each run after that
# long (libFuzzer's -max_total_time). New inputs go to fuzz/work/TARGET (not committed); the committed
# corpus fuzz/corpus/TARGET and the grammar's dictionary fuzz/dict/TARGET.dict (if
# any) seed each run. Crashes land in fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
runs=${1:?executions per target}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
for t in "${targets[@]}"; do
    mkdir -p "work/$t"
    dict=()
    [ -f "dict/$t.dict" ] && dict=("-dict=dict/$t.dict")
    start=$(date +%s)
    log="work/$t.log"
    cargo +nightly fuzz run -O -a -s none "$t" "work/$t" "corpus/$t" -- -runs="$runs" -max_total_time="${MAX_TIME:-0}" \
        -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 "${dict[@]}" >"$log" 2>&1 || {
        echo "$t: FAILED after $(($(date +%s) - start)) s, see fuzz/$log"
        continue
    }
    execs=$(grep -aE "^stat::number_of_executed_units" "$log" | awk '{print $2}' || true)
    cov=$(grep -aoE "cov: [0-9]+ ft: [0-9]+" "$log" | tail -1 || true)
    echo "$t: $execs executions in $(($(date +%s) - start)) s, $cov, no crash"
done
