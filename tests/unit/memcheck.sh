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
# Each program's output is in tests/unit/memcheck-<name>.log.
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
failed=0
ran=0
for t in ${UNIT_TESTS:?UNIT_TESTS is set by make check}; do
	name=${t##*/}
	log=$build/tests/unit/memcheck-$name.log
	if valgrind -q --error-exitcode=99 --track-origins=yes \
	    --leak-check=full --errors-for-leak-kinds=definite \
	    "$build/$t" >"$log" 2>&1; then
		ran=$((ran + 1))
		continue
	fi
	echo "memcheck: $name failed under valgrind; the end of $log:"
	tail -n 60 "$log"
	failed=$((failed + 1))
done
echo "memcheck: $ran unit test programs clean under valgrind, $failed not"
[ "$failed" -eq 0 ]
