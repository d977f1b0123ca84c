#!/usr/bin/env bash
# Builds the programs that `make demo` and the bench scripts run (ctensor-pw, the
# silicon_bands, tour and davidson examples) in release mode, in one cargo call, and
# prints the target directory they are in.
#
# One call, always with the same packages selected, so that cargo resolves one set of
# features and builds every dependency once: `cargo run -p ctensor-pw` and `cargo run
# --example silicon_bands` resolve two different sets (the examples' dev-dependencies add
# features) and each rebuilds everything below it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release ${CTENSOR_BUILD_QUIET:+-q} -p ctensor-pw -p ctensor --bin ctensor-pw \
  --example silicon_bands --example tour --example davidson >&2
cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4
