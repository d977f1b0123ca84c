# ctensor — the commands a user and CI need. Each target installs what is missing first.
CARGO ?= cargo

.PHONY: deps demo test bench lint fmt doc

deps:
	@bash scripts/ensure-deps.sh

## make demo: build and run the demo (a tour of the container for now).
demo: deps
	$(CARGO) run --release --example tour

## make test: every test of every crate (unit, integration, doc).
test: deps
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc

## make bench: kernel timings against direct OpenBLAS/LAPACK calls and plain loops;
## prints markdown tables and writes target/bench/kernels.md.
bench: deps
	$(CARGO) bench -p ctensor-kernels --bench kernels

## make lint: formatting, clippy with warnings as errors, and docs without warnings.
lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

fmt:
	$(CARGO) fmt --all
