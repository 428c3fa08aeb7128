/*
 * A sandbox's figures (GET /v1/sandboxes/{id}/stats): what dockerd-proxy
 * read from Docker's one-shot stats and the workspace probe
 * (MSG_DOCKER_STATS_RESULT), relayed by managerd (MSG_SANDBOX_STATS_RESULT).
 * A group whose has_ flag is 0 is unknown: not running, not reported by
 * Docker, or (network) a sandbox without one.  Counts are at most
 * INT64_MAX (what JSON carries as an integer); the decoder refuses more,
 * a group known of a sandbox that does not run, and a percentage that is
 * not a finite number in [0, STATS_PERCENT_MAX].
 */
#ifndef AS_STATS_MSG_H
#define AS_STATS_MSG_H

#include <stdint.h>

#include "msg.h"

/* 100% per CPU, and no host has more than this many. */
#define STATS_PERCENT_MAX	(100.0 * 65536)

struct sandbox_stats {
	int		 running;
	int		 has_cpu;
	uint64_t	 cpu_ns;		/* used since the start */
	int		 has_cpu_percent;
	double		 cpu_percent;		/* of one CPU */
	int		 has_memory;
	uint64_t	 memory_bytes;		/* less inactive file cache */
	uint64_t	 memory_limit;
	int		 has_pids;
	uint64_t	 pids;
	int		 has_pids_limit;
	uint64_t	 pids_limit;
	int		 has_network;
	uint64_t	 rx_bytes;
	uint64_t	 tx_bytes;
	int		 has_workspace;
	uint64_t	 workspace_bytes;
};

void	msg_put_sandbox_stats(struct msgw *, const struct sandbox_stats *);
int	msg_get_sandbox_stats(const struct imsg *, struct sandbox_stats *);

#endif /* AS_STATS_MSG_H */
