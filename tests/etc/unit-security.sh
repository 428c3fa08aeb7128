#!/bin/sh
#
# The systemd unit stays fenced: systemd-analyze's exposure score of
# etc/agent-sandbox.service, offline, is at most 3.3, and the unit
# verifies.  What is left exposed is explained in the unit itself.  (It
# was 3.0 until egress policies: the egress proxy connects out to the
# Internet, so the unit has no IP allow list, and the netns-helper needs
# CAP_SYS_PTRACE; the two cost 0.4.)  Skips
# (77) where systemd-analyze is missing.

set -u
unit=${AGENT_SANDBOX_SRCDIR:-.}/etc/agent-sandbox.service
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: no systemd-analyze"
	exit 77
fi
out=$(systemd-analyze security --offline=true "$unit" 2>&1)
score=$(printf '%s\n' "$out" |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "exposure: ${score:-?}"
if [ -z "$score" ]; then
	printf '%s\n' "$out"
	echo "FAIL: no exposure level in systemd-analyze's output"
	exit 1
fi
# Tenths, compared as integers.
tenths=$(echo "$score" | awk '{ printf "%d", $1 * 10 + 0.5 }')
if [ "$tenths" -gt 33 ]; then
	printf '%s\n' "$out" | grep '✗'
	echo "FAIL: exposure $score is above 3.3"
	exit 1
fi
echo "PASS: exposure $score"
