/*
 * Sandbox, snapshot and process ids (API.md §3.1): a prefix and 16 lowercase hex
 * digits from 8 random bytes.  Their shape is written down here only;
 * managerd and dockerd-proxy let an id reach a file name, a Docker name
 * or a label only once id_is_sandbox() or id_is_snapshot() accepted it.
 * apid checks no shape: any string is looked up, and an unknown one is
 * managerd's 404.
 */
#ifndef AS_IDS_H
#define AS_IDS_H

#include <stddef.h>

#define ID_HEX_LEN		16	/* hex digits after the prefix */
#define SANDBOX_ID_PREFIX	"sb_"
#define SANDBOX_ID_LEN		19	/* "sb_" + 16 hex */
#define SNAPSHOT_ID_PREFIX	"snap_"
#define SNAPSHOT_ID_LEN		21	/* "snap_" + 16 hex */
#define PROCESS_ID_PREFIX	"proc_"
#define PROCESS_ID_LEN		21	/* "proc_" + 16 hex */

/* 1 if id is exactly "sb_" and 16 lowercase hex digits; 0 also for NULL. */
int	id_is_sandbox(const char *id);
/* 1 if id is exactly "snap_" and 16 lowercase hex digits, else 0. */
int	id_is_snapshot(const char *id);
/* 1 if id is exactly "proc_" and 16 lowercase hex digits, else 0. */
int	id_is_process(const char *id);
/* 1 if id is a full Docker container id: 64 lowercase hex digits. */
#define CONTAINER_ID_LEN	64
int	id_is_container(const char *id);
/*
 * A new random id: prefix and ID_HEX_LEN lowercase hex digits, NUL
 * terminated.  -1 if len cannot hold it.
 */
int	id_make(char *buf, size_t len, const char *prefix);

/*
 * Docker's names for networks and runtimes, [a-zA-Z0-9][a-zA-Z0-9_.-]*
 * and at most 128 bytes; 0 also for NULL.  The configuration and
 * dockerd-proxy check the operator's with it.
 */
int	valid_docker_name(const char *name);
/*
 * A name the sandboxes' network may have: a Docker name that is none of
 * Docker's own networks (bridge, host, none, default).
 */
int	valid_sandbox_network_name(const char *name);

#endif /* AS_IDS_H */
