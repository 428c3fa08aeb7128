#!/bin/sh
#
# Run libFuzzer harnesses: run.sh SRCDIR FUZZDIR HARNESS...
# For each harness, first replay every input of
# SRCDIR/tests/fuzz/regressions/HARNESS (each once), then fuzz for
# FUZZ_SECONDS (default 10) seconds, or FUZZ_RUNS executions when that is
# set, over FUZZDIR/work/HARNESS/corpus (where new inputs go) and the
# committed seeds SRCDIR/tests/fuzz/corpus/HARNESS, with the dictionary
# SRCDIR/tests/fuzz/HARNESS.dict and the libFuzzer flags of
# SRCDIR/tests/fuzz/HARNESS.options when they exist.  A crash, leak,
# sanitizer report, time-out or broken invariant fails the harness: the
# input is left in FUZZDIR/work/HARNESS/ and the end of the log printed.
# One line per harness says what the run did; exits 1 if any failed.

set -u
src=$1
dir=$2
shift 2
seconds=${FUZZ_SECONDS:-10}
failed=0

# Reports name files and lines: Debian's llvm-14 has the symbolizer under
# a versioned name only.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
	for s in llvm-symbolizer llvm-symbolizer-14; do
		if command -v "$s" >/dev/null 2>&1; then
			ASAN_SYMBOLIZER_PATH=$(command -v "$s")
			export ASAN_SYMBOLIZER_PATH
			break
		fi
	done
fi

# Replays the regression inputs of harness $1; prints how many there were.
replay() {
	regs=$src/tests/fuzz/regressions/$1
	if [ ! -d "$regs" ] || [ -z "$(ls -A "$regs")" ]; then
		echo 0
		return 0
	fi
	# Given files, libFuzzer runs each once and fuzzes nothing.
	"$dir/fuzz_$1" "$regs"/* >"$dir/work/$1.log" 2>&1 || return 1
	find "$regs" -type f | wc -l
}

fuzz() {
	h=$1
	if [ -n "${FUZZ_RUNS:-}" ]; then
		set -- -runs="$FUZZ_RUNS"
	else
		set -- -max_total_time="$seconds"
	fi
	set -- "$@" -timeout=10 -print_final_stats=1 \
	    -artifact_prefix="$dir/work/$h/"
	if [ -f "$src/tests/fuzz/$h.dict" ]; then
		set -- "$@" -dict="$src/tests/fuzz/$h.dict"
	fi
	if [ -f "$src/tests/fuzz/$h.options" ]; then
		# shellcheck disable=SC2046 # one flag per word
		set -- "$@" $(cat "$src/tests/fuzz/$h.options")
	fi
	"$dir/fuzz_$h" "$@" "$dir/work/$h/corpus" "$src/tests/fuzz/corpus/$h" \
	    >"$dir/work/$h.log" 2>&1
}

# "N executions, cov C, ft F, corpus N/SIZE" from a run's log: its
# final stats and its last status line.
summary() {
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1")
	pat='.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([^ ]*\).*'
	grep -E '^#[0-9]+' "$1" | tail -n 1 |
	    sed -n "s/$pat/${runs:-?} executions, cov \1, ft \2, corpus \3/p"
}

for h in "$@"; do
	log=$dir/work/$h.log
	mkdir -p "$dir/work/$h/corpus"
	if [ ! -x "$dir/fuzz_$h" ]; then
		echo "fuzz_$h: FAILED: $dir/fuzz_$h was not built"
		failed=1
		continue
	fi
	if ! nregs=$(replay "$h"); then
		echo "fuzz_$h: FAILED on a regression input (log: $log):"
		tail -n 40 "$log"
		failed=1
		continue
	fi
	start=$(date +%s)
	if ! fuzz "$h"; then
		echo "fuzz_$h: FAILED (log: $log):"
		tail -n 40 "$log"
		failed=1
		continue
	fi
	echo "fuzz_$h: $(summary "$log") in $(($(date +%s) - start)) s;" \
	    "$nregs regression inputs replayed"
done
exit "$failed"
