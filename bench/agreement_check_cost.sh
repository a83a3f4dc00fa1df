#!/usr/bin/env bash
# The cost of the agreement check (PAPCOLL_CHECK=1, docs/mpi.md): papcoll-bench with the check
# off and on, interleaved run by run, balanced arrivals, P = 2 and 4, 8 B / 64 KiB / 4 MiB.
# Prints one JSON line per (round, P, check, count) with papcoll-bench's median; the table in
# docs/benchmarks.md is the median of those over rounds. Run after `make build`.
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-mpich}
for round in 1 2 3 4 5; do
  for ranks in 2 4; do
    for check in 0 1; do
      PAPCOLL_CHECK=$check timeout 300 .venv/bin/mpiexec -n "$ranks" "build/$MPI/papcoll-bench" \
          --algorithms ring --counts 2,16K,1M --mode one-late --max-delays-ms 0 \
          --iterations 30 --warmup 3 --compute-ms 1 --json - 2>/dev/null |
        .venv/bin/python -c "
import json, sys
for row in json.load(sys.stdin):
    print(json.dumps({'round': $round, 'ranks': $ranks, 'check': $check,
                      'count': row['count'], 'median_ms': row['median_ms']}))"
    done
  done
done
