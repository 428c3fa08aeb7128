#!/bin/sh
#
# Every setting the configuration reads is documented: each
# AGENT_SANDBOX_* name (and DOCKER_HOST) that common/config*.c reads must
# be in man/agent-sandbox.env.5 and in docs/configuration.md.  Lists what
# is missing where, and fails if anything is; a setting added without its
# documentation is caught here.

set -u
src=${AGENT_SANDBOX_SRCDIR:-.}
man=$src/man/agent-sandbox.env.5
doc=$src/docs/configuration.md

# The names as the loader spells them: string literals in the sources.
names=$(cat "$src"/common/config*.c |
    grep -o '"\(AGENT_SANDBOX_[A-Z0-9_]*\|DOCKER_HOST\)"' | tr -d '"' |
    sort -u)
if [ -z "$names" ]; then
	echo "FAIL: no setting found in $src/common/config*.c"
	exit 1
fi
missing=0
count=0
for n in $names; do
	count=$((count + 1))
	# In the man page as an .It Ev line (several may share one line).
	if ! grep -q "^\.It .*Ev $n\( \|$\)" "$man"; then
		echo "missing from man/agent-sandbox.env.5: $n"
		missing=$((missing + 1))
	fi
	if ! grep -q "\`$n\`" "$doc"; then
		echo "missing from docs/configuration.md: $n"
		missing=$((missing + 1))
	fi
done
if [ "$missing" -gt 0 ]; then
	echo "FAIL: $missing missing"
	exit 1
fi
echo "PASS: $count settings documented in both"
