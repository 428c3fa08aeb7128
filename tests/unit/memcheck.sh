#!/bin/sh
#
# make check's memory test: the unit tests again under valgrind's
# memcheck, so that a read of freed or uninitialised memory fails even
# where it happened to give the right answer (the plain run is built
# without sanitizers).  Left out, each for its reason:
#   test_imsg            valgrind holds descriptors of its own, which
#                        moves the descriptor-exhaustion cases it tests;
#   test_seccomp, test_privdrop, test_spawner, test_client_seccomp,
#   test_worker_tar, test_worker_upload, test_worker_zygote
#                        they load the real seccomp filters, which kill
#                        valgrind's own system calls (their code is
#                        fuzzed under ASan instead: docs/fuzzing.md).
# Skipped (77) without valgrind (apt-get install valgrind).

build=${AGENT_SANDBOX_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
skip=" test_imsg test_seccomp test_privdrop test_spawner test_client_seccomp "
skip="$skip test_worker_tar test_worker_upload test_worker_zygote "

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind not found (apt-get install valgrind); skipped"
	exit 77
fi
failed=0
ran=0
for t in ${UNIT_TESTS:?UNIT_TESTS is set by make check}; do
	name=${t##*/}
	case $skip in *" $name "*) continue ;; esac
	log=$build/tests/unit/memcheck-$name.log
	if valgrind -q --error-exitcode=99 --track-origins=yes \
	    "$build/$t" >"$log" 2>&1; then
		ran=$((ran + 1))
		continue
	fi
	echo "memcheck: $name failed under valgrind; the end of $log:"
	tail -n 60 "$log"
	failed=1
done
echo "memcheck: $ran unit tests clean under valgrind"
exit $failed
