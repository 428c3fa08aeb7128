#!/bin/sh
#
# The unit tests again under valgrind's memcheck, so that a read of freed
# or uninitialised memory fails even where it happened to give the right
# answer, and so does a block nothing points to any more (a definite
# leak) at the exit of any process a test forks: make check runs it, and
# make check-valgrind runs it alone.  Every unit test program runs;
# under valgrind (tests/unit/memcheck.c says why):
#   the programs that load the real seccomp filters build them but do
#   not load them, and the tests whose subject is the kill skip;
#   test_imsg's MSG_CTRUNC test skips (valgrind emulates RLIMIT_NOFILE);
#   test_privdrop's Landlock tests skip as on a kernel without it
#   (valgrind 3.19 does not know landlock_create_ruleset).
# Each program's output is in tests/unit/memcheck-<name>.log; as many run
# at once as there are CPUs.
# Skipped (77) without valgrind (apt-get install valgrind), or in a build
# configured without its header (then nothing knows it runs under it).

build=${AGENT_SANDBOX_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not found (apt-get install valgrind); skipped"
	exit 77
fi
if ! grep -q '^#define HAVE_VALGRIND_VALGRIND_H 1' \
    "$build/build_config.h" 2>/dev/null; then
	echo "built without valgrind/valgrind.h (re-run configure); skipped"
	exit 77
fi
# One program (the script runs itself so for each, as many at a time as
# there are CPUs: valgrind is CPU-bound and the programs are independent):
# a marker file says it failed.
if [ "${1:-}" = --one ]; then
	name=${2##*/}
	log=$build/tests/unit/memcheck-$name.log
	rm -f "${log%.log}.failed"
	valgrind -q --error-exitcode=99 --track-origins=yes \
	    --leak-check=full --errors-for-leak-kinds=definite \
	    "$build/$2" >"$log" 2>&1 || : >"${log%.log}.failed"
	exit 0
fi
jobs=$(nproc 2>/dev/null || echo 1)
rm -f "$build"/tests/unit/memcheck-*.log "$build"/tests/unit/memcheck-*.failed
printf '%s\n' ${UNIT_TESTS:?UNIT_TESTS is set by make check} |
	xargs -P "$jobs" -n 1 "$0" --one
failed=0
ran=0
for t in $UNIT_TESTS; do
	name=${t##*/}
	log=$build/tests/unit/memcheck-$name.log
	if [ ! -f "$log" ]; then
		echo "memcheck: $name did not run"
		failed=$((failed + 1))
	elif [ -f "${log%.log}.failed" ]; then
		echo "memcheck: $name failed under valgrind; the end of $log:"
		tail -n 60 "$log"
		failed=$((failed + 1))
	else
		ran=$((ran + 1))
	fi
done
echo "memcheck: $ran unit test programs clean under valgrind, $failed not"
[ "$failed" -eq 0 ]
