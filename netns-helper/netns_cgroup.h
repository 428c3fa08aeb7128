/*
 * The netns-helper's check that a pid is still the container's: the
 * kernel may have given a pid that Docker reported to another process
 * since, so before it enters that pid's network namespace the helper
 * reads /proc/<pid>/cgroup and requires every line to name the
 * container (docs/architecture.md "Egress policy (design)").
 */
#ifndef AS_NETNS_CGROUP_H
#define AS_NETNS_CGROUP_H

#include <stddef.h>

/* What the helper reads of /proc/<pid>/cgroup; more is refused. */
#define NETNS_CGROUP_MAX	4096

/*
 * 1 if text (len bytes, as read) is a cgroup file whose every line is
 * "hierarchy:controllers:path" with a path whose last component is the
 * 64-hex container id itself (Docker's cgroupfs driver: /docker/<id>)
 * or "docker-<id>.scope" (its systemd driver); 0 otherwise: no line, a
 * line without its newline, a NUL, another path, an id that is not 64
 * lowercase hex digits, more than NETNS_CGROUP_MAX bytes.
 */
int	netns_cgroup_names(const char *text, size_t len, const char *id);

#endif /* AS_NETNS_CGROUP_H */
