#!/bin/sh
#
# make check's fuzz test: every harness of tests/fuzz/fuzz.mk for
# FUZZ_SECONDS (default 5) seconds, after its regression inputs (see
# run.sh).  Skipped (77) when configure found no clang with libFuzzer, so
# that no harness was built.

src=${AGENT_SANDBOX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${AGENT_SANDBOX_BUILDDIR:-$src}
harnesses=$(sed -n 's/^fuzz_\([a-z0-9_]*\)_SRCS.*/\1/p' \
    "$src/tests/fuzz/fuzz.mk")
for h in $harnesses; do
	if [ -x "$build/tests/fuzz/fuzz_$h" ]; then
		# shellcheck disable=SC2086 # one harness per word
		FUZZ_SECONDS=${FUZZ_SECONDS:-5} exec "$src/tests/fuzz/run.sh" \
		    "$src" "$build/tests/fuzz" $harnesses
	fi
done
echo "no fuzz harness was built: configure found no clang with libFuzzer" \
    "(apt-get install clang-14 libclang-rt-14-dev); skipped"
exit 77
