# ctensor — the commands a user and CI need. Each target installs what is missing first.
CARGO ?= cargo
# Every cargo call of `make test` selects the same packages, so that cargo resolves one set
# of features for the shared dependencies and builds them once: a call with `-p` alone
# resolves that package's own set and rebuilds the crates below it (about 3 min a call on
# the 2-core machine). The MPI calls add only the MPI features, which rebuild the facade
# and what depends on it.
WORKSPACE := --workspace --exclude ctensor-bench --exclude ctensor-python
MPI_FEATURES := ctensor/mpi,ctensor-pw/mpi

.PHONY: deps demo test bench lint fmt doc header c-tests link-flags check-cuda wheel array-api-tests

deps:
	@bash scripts/ensure-deps.sh

## make demo: the main job: a self-consistent Kohn-Sham LDA calculation of silicon
## (ctensor-pw, pw/; HGH pseudopotential, shifted 4x4x4 k-mesh, ecut 10 Ha; the numbers
## match ABINIT 9.6.2, pw/tests/abinit.rs), then band structures from the
## Cohen-Bergstresser model (examples/silicon_bands/; --help lists the options), then the
## container tour.
demo: deps
	dir=$$(bash scripts/build-programs.sh) && mkdir -p "$$dir/pw" && \
	"$$dir/release/ctensor-pw" run pw/examples/si.json --output "$$dir/pw/si.json" --plot "$$dir/pw/si-bands.svg" && \
	"$$dir/release/examples/silicon_bands" && \
	"$$dir/release/examples/tour"

## make test: every test of every crate (unit, integration, doc; the .npy tests against
## NumPy from target/py-venv, scripts/py-env.sh; the MPI crate's tests under mpirun -n 2
## and -n 3), the tensor FFT tests and ctensor-pw's ABINIT comparison again with the FFTW
## backend, the demo and ctensor-pw under
## mpirun against one process (the `mpi` feature),
## then the C, C++ and Fortran clients of the C ABI against the static library
## (tests/c/run.sh), then the Python package built with maturin and its pytest suite
## against NumPy/SciPy (scripts/py-test.sh).
test: deps
	@bash scripts/ensure-deps.sh mpi
	py=$$(bash scripts/py-env.sh) && CTENSOR_PYTHON=$$py CTENSOR_REQUIRE_PYTHON=1 \
	$(CARGO) test $(WORKSPACE) --all-targets
	$(CARGO) test $(WORKSPACE) --doc
	CTENSOR_FFT=fftw CTENSOR_FFTW_PLANNER=estimate $(CARGO) test $(WORKSPACE) --test fft --test abinit
	$(CARGO) test $(WORKSPACE) --features $(MPI_FEATURES) --example silicon_bands mpi_
	$(CARGO) test $(WORKSPACE) --features $(MPI_FEATURES) --test mpi
	bash tests/c/run.sh
	bash scripts/py-test.sh

## make bench: kernels and ops against direct OpenBLAS/LAPACK calls (cuBLAS/cuSOLVER and
## copy bandwidth on a GPU, when one is usable), plain loops and
## peer libraries (faer, ndarray; NumPy and SciPy from PyPI in target/py-venv,
## scripts/py-env.sh, for the stacked eigh); prints markdown tables, writes target/bench/bench.md;
## then ctensor-pw against ABINIT (bench/pw-vs-abinit.sh) and Quantum ESPRESSO (bench/pw-vs-qe.sh), the block Davidson example against dense eigh (n = 2000 random, the 14 materials),
## and the demo's k-points/s (Si and GaAs; dense in double and mixed precision, with and
## without the crystal's symmetry, Davidson + FFT)
## against NumPy/SciPy's dense eigh (bench/demo-vs-numpy.sh).
## The peers live in the bench-only crate bench/, which make test does not build.
bench: deps
	@bash scripts/ensure-deps.sh bench mpi
	CTENSOR_BENCH_PYTHON=$$(bash scripts/py-env.sh) $(CARGO) run --release -p ctensor-bench
	"$$(bash scripts/build-programs.sh)/release/examples/davidson" --random 2000
	@echo "== ctensor-pw vs ABINIT 9.6.2 (Si, shifted 4x4x4 mesh, ecut 10/20/30 Ha, 1 and 2 threads)"
	bash bench/pw-vs-abinit.sh
	@echo "== ctensor-pw vs Quantum ESPRESSO 6.7's pw.x (Si, 4x4x4 mesh shifted by 1/2, ecut 10/20/30 Ha, 1 and 2 cores; GaAs with a GGA)"
	bash bench/pw-vs-qe.sh
	@echo "== the larger cells (8-atom cubic Si at 4x4x4, 64-atom supercell at Gamma, 15 Ha; minutes): bash bench/pw-vs-abinit.sh --large"
	"$$(bash scripts/build-programs.sh)/release/examples/davidson" --material all
	@echo "== the demo's k-points/s (Si and GaAs; dense in double and mixed precision, with and without symmetry, Davidson + FFT) vs NumPy/SciPy's dense eigh on the same H"
	bash bench/demo-vs-numpy.sh

## make wheel: the Python package as a wheel in target/wheels (maturin, from the venv of
## scripts/py-env.sh): symbols stripped, OpenBLAS and its Fortran runtime bundled and the
## manylinux tag the binary's glibc symbols allow, so it installs without Rust or OpenBLAS.
wheel: deps
	py=$$(bash scripts/py-env.sh) && venv=$$(dirname "$$(dirname "$$py")") && \
	VIRTUAL_ENV="$$venv" PATH="$$venv/bin:$$PATH" maturin build --release -m python/Cargo.toml -o target/wheels
	@ls -l target/wheels

## make array-api-tests ARRAY_API_TESTS=PATH: the public array API conformance suite
## (a checkout of github.com/data-apis/array-api-tests, cloned with --recursive; it is not
## on PyPI, so make test cannot fetch it) against ctensor.array_api; prints the pass count
## per file (scripts/array-api-tests.sh; minutes).
array-api-tests: deps
	bash scripts/array-api-tests.sh "$(ARRAY_API_TESTS)"

## make lint: formatting, clippy with warnings as errors, and docs without warnings.
lint: deps
	@bash scripts/ensure-deps.sh mpi
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --workspace --all-targets --features $(MPI_FEATURES) -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

fmt:
	$(CARGO) fmt --all

## make check-cuda: compiles every CUDA C source (kernels/src/gpu/cuda) to PTX with NVRTC
## and checks that every kernel the Rust side launches is in it. No GPU needed: NVRTC
## comes from PyPI into a virtual environment under target/ (scripts/nvrtc-env.sh).
## Then the prelude's 16-bit float rounding, and the kernels emulated so far
## (kernels/tests/cuda_emulation.rs), run on the host (a C++ compiler required).
check-cuda: deps
	lib=$$(bash scripts/nvrtc-env.sh) && \
	LD_LIBRARY_PATH="$$lib$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}" CTENSOR_REQUIRE_NVRTC=1 \
	$(CARGO) test $(WORKSPACE) --test cuda_sources -- --nocapture
	CTENSOR_REQUIRE_CXX=1 $(CARGO) test $(WORKSPACE) --test prelude_host --test cuda_emulation -- --nocapture

## make header: regenerate include/ctensor.h from src/ffi (cbindgen) after an ABI change.
header:
	CTENSOR_WRITE_HEADER=1 $(CARGO) test --test header
	CTENSOR_WRITE_HEADER=1 $(CARGO) test --test fortran_module

## make link-flags: what a C/C++/Fortran program links with besides libctensor.a.
link-flags:
	@echo "target/release/libctensor.a $$(pkg-config --libs openblas) -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
