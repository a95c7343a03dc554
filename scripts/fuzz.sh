#!/usr/bin/env bash
# Fuzzes the domain crate with cargo-fuzz (libFuzzer): MPLP parsing and
# validation, plan layout, canonical JSON, decisions, token redemption and
# LangGraph threads (interrupts, answers, summary checks), each
# seeded from the vendored fixtures (fuzz/seeds/ for the small hand-made ones).
# Prints, per target, the inputs tried and what failed; exits non-zero on any
# panic, hang (a run over 10 s) or out-of-memory. A crash input is kept in
# fuzz/artifacts/<target>/: turn it into a regression test.
# Usage: scripts/fuzz.sh [seconds per target, default 10] [target...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-10}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(mplp layout canonical decision token interrupts)

fixtures=crates/domain/tests/fixtures
declare -A seeds=(
  [mplp]="$fixtures/mplp/golden $fixtures/mplp/negative $fixtures/mplp/examples $fixtures/spec-examples"
  [layout]="fuzz/seeds/layout"
  [canonical]="$fixtures/jcs/input"
  [decision]="fuzz/seeds/decision"
  [token]="fuzz/seeds/token"
  [interrupts]="fuzz/seeds/interrupts"
)

# No sanitizer: the domain crate forbids `unsafe`, so AddressSanitizer finds
# nothing there and costs most of the build and 8 of every 9 inputs tried. This
# also needs only the stable toolchain (sanitizers are nightly flags).
(cd fuzz && cargo fuzz build --sanitizer none)
failed=0
for target in "${targets[@]}"; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus" "fuzz/artifacts/$target"
  log=$(mktemp)
  # shellcheck disable=SC2086 # the seed folders are a list
  if (cd fuzz && cargo fuzz run --sanitizer none "$target" "corpus/$target" $(for s in ${seeds[$target]}; do echo "../$s"; done) -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="artifacts/$target/" -print_final_stats=1) >"$log" 2>&1; then
    outcome="0 failures"
  else
    outcome="FAILED: $(grep -m1 -E 'panicked|ERROR: libFuzzer|SUMMARY' "$log" || echo 'see the log')"
    failed=1
    tail -40 "$log"
  fi
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  corpus_size=$(find "$corpus" -type f | wc -l)
  printf 'fuzz %-10s %3s s: %10s inputs tried, corpus %5s, %s\n' "$target" "$seconds" "${runs:-?}" "$corpus_size" "$outcome"
  rm -f "$log"
done
exit $failed
