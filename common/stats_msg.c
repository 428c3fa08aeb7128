/*
 * The codec of struct sandbox_stats (stats_msg.h): each group a u8 flag
 * and its u64 fields (zero when the flag is 0), the percentage a double.
 */
#include <math.h>
#include <string.h>

#include "sandbox_msg.h"
#include "stats_msg.h"

static void
put_count(struct msgw *w, int has, uint64_t v)
{
	msgw_u64(w, has ? v : 0);
}

void
msg_put_sandbox_stats(struct msgw *w, const struct sandbox_stats *s)
{
	msgw_u8(w, s->running ? 1 : 0);
	msgw_u8(w, s->has_cpu ? 1 : 0);
	put_count(w, s->has_cpu, s->cpu_ns);
	msgw_u8(w, s->has_cpu_percent ? 1 : 0);
	msgw_double(w, s->has_cpu_percent ? s->cpu_percent : 0);
	msgw_u8(w, s->has_memory ? 1 : 0);
	put_count(w, s->has_memory, s->memory_bytes);
	put_count(w, s->has_memory, s->memory_limit);
	msgw_u8(w, s->has_pids ? 1 : 0);
	put_count(w, s->has_pids, s->pids);
	msgw_u8(w, s->has_pids_limit ? 1 : 0);
	put_count(w, s->has_pids_limit, s->pids_limit);
	msgw_u8(w, s->has_network ? 1 : 0);
	put_count(w, s->has_network, s->rx_bytes);
	put_count(w, s->has_network, s->tx_bytes);
	msgw_u8(w, s->has_workspace ? 1 : 0);
	put_count(w, s->has_workspace, s->workspace_bytes);
}

/* A u64 that is 0 unless has, and never past INT64_MAX. */
static uint64_t
get_count(struct msgr *r, int has)
{
	uint64_t	 v = msgr_u64(r);

	if (v > INT64_MAX || (!has && v != 0))
		r->error = 1;
	return v;
}

static int
stats_consistent(const struct sandbox_stats *s)
{
	if (s->has_cpu_percent && (!isfinite(s->cpu_percent) ||
	    s->cpu_percent < 0 || s->cpu_percent > STATS_PERCENT_MAX))
		return 0;
	/* One encoding: an unknown percentage is +0.0. */
	if (!s->has_cpu_percent && (s->cpu_percent != 0 ||
	    signbit(s->cpu_percent)))
		return 0;
	/* Only a running container has figures. */
	return s->running || (!s->has_cpu && !s->has_cpu_percent &&
	    !s->has_memory && !s->has_pids && !s->has_pids_limit &&
	    !s->has_network && !s->has_workspace);
}

int
msg_get_sandbox_stats(const struct imsg *imsg, struct sandbox_stats *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->running = msg_get_bool(&r);
	s->has_cpu = msg_get_bool(&r);
	s->cpu_ns = get_count(&r, s->has_cpu);
	s->has_cpu_percent = msg_get_bool(&r);
	s->cpu_percent = msgr_double(&r);
	s->has_memory = msg_get_bool(&r);
	s->memory_bytes = get_count(&r, s->has_memory);
	s->memory_limit = get_count(&r, s->has_memory);
	s->has_pids = msg_get_bool(&r);
	s->pids = get_count(&r, s->has_pids);
	s->has_pids_limit = msg_get_bool(&r);
	s->pids_limit = get_count(&r, s->has_pids_limit);
	s->has_network = msg_get_bool(&r);
	s->rx_bytes = get_count(&r, s->has_network);
	s->tx_bytes = get_count(&r, s->has_network);
	s->has_workspace = msg_get_bool(&r);
	s->workspace_bytes = get_count(&r, s->has_workspace);
	if (msgr_end(&r) == -1 || !stats_consistent(s)) {
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return 0;
}
