#!/bin/bash
# p16_checks.sh - the decision path, the tags and the drop-in's first calls at P ranks with a
# core per rank (docs/benchmarks.md, "The decision path, the tags and the first calls at
# P = 16"): the MPI check programs and papcoll-setup-cost of a build, one summary line each.
#
#   bench/p16_checks.sh BUILD_DIR PRELOAD_LIBRARY OUT_DIR [RANKS]    (RANKS: default 16)
#
# BUILD_DIR holds the programs (build/mpich), PRELOAD_LIBRARY is libpapcoll_pmpi.so; mpiexec
# is the one on PATH. Each run is cut at LIMIT seconds (default 60; 90 for the differential).
set -u
if [ $# -lt 3 ]; then echo "usage: $0 BUILD_DIR PRELOAD_LIBRARY OUT_DIR [RANKS]" >&2; exit 2; fi
build=$1 preload=$2 out=$3 ranks=${4:-16}
mkdir -p "$out"
run() {
    local name=$1; shift
    local started=$SECONDS
    timeout "${LIMIT:-60}" "$@" > "$out/$name.txt" 2>&1
    local code=$?
    echo "$name rc=$code $((SECONDS - started)) s | $(tail -1 "$out/$name.txt")" | tee -a "$out/summary.txt"
}
run decision_kinds mpiexec -n "$ranks" "$build/mpi_decision_kinds"
run tag_counter mpiexec -n "$ranks" "$build/mpi_tag_counter"
LIMIT=200 run tag_counter_limit env PAPCOLL_TAG_LIMIT=32767 mpiexec -n "$ranks" "$build/mpi_tag_counter"
run nonblocking mpiexec -n "$ranks" "$build/mpi_nonblocking"
run nonblocking_thread env PAPCOLL_PROGRESS=thread mpiexec -n "$ranks" "$build/mpi_nonblocking"
run first_calls env LD_PRELOAD="$preload" PAPCOLL_REPORT="$out/first_calls_report.json" \
    mpiexec -n "$ranks" "$build/pmpi_first_calls_unmodified"
for round in 1 2; do  # interleaved: plain, drop-in, plain, drop-in
    run "setup_cost_plain_$round" mpiexec -n "$ranks" "$build/papcoll-setup-cost" 300
    run "setup_cost_dropin_$round" env LD_PRELOAD="$preload" \
        mpiexec -n "$ranks" "$build/papcoll-setup-cost" 300
done
for call in nonblocking persistent; do
    LIMIT=90 run "differential_$call" mpiexec -n "$ranks" "$build/mpi_differential" \
        --matrix representative --call "$call" --counts 0,1,1009 --large-count 0
done
