/*
 * Docker's answer to GET /containers/{id}/stats?stream=false&one-shot=true
 * (docs/rest-api.md "Stats"), read into struct sandbox_stats.  Docker is
 * trusted for its figures, not for its bytes: the answer is bounded, its
 * nesting too, and every field used must be what Docker's API says it is
 * (an object, a non-negative integer).  A field missing is an unknown
 * figure; a field of the wrong type, negative or past INT64_MAX (a count
 * no container reaches) makes the whole answer malformed.  A limit past
 * INT64_MAX is "no limit" (cgroup v2 reports max so), saturated.
 *
 * CPU: the nanoseconds used since the start (cpu_usage.total_usage), and
 * the percentage of one CPU only when the answer carries a previous
 * sample (precpu_stats with a system_cpu_usage), as `docker stats`
 * computes it.  A one-shot answer has none (Docker skips the second
 * sample it would wait a second for): percent is then unknown.
 * Memory: usage less the inactive file cache (total_inactive_file on
 * cgroup v1, inactive_file on v2), what `docker stats` shows, and the
 * limit.  Network: rx and tx summed over the interfaces; a sandbox
 * without a network has no "networks" at all.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include "proxy.h"
#include "stats_msg.h"

#define STATS_MAX_DEPTH		8	/* Docker's answer nests 4 deep */
#define STATS_MAX_NETWORKS	64

/* 1 and *g an object, 0 absent (or null), -1 anything else. */
static int
group(json_object *o, const char *key, json_object **g)
{
	if (o == NULL || !json_object_object_get_ex(o, key, g) || *g == NULL)
		return 0;
	return json_object_is_type(*g, json_type_object) ? 1 : -1;
}

/* 1 and *v, 0 absent (or null), -1 not an integer in [0, INT64_MAX]. */
static int
count(json_object *o, const char *key, uint64_t *v)
{
	json_object	*f;
	int64_t		 i;

	if (o == NULL || !json_object_object_get_ex(o, key, &f) || f == NULL)
		return 0;
	if (!json_object_is_type(f, json_type_int))
		return -1;
	if ((i = json_object_get_int64(f)) < 0)
		return -1;
	/* json-c saturates what does not fit in an int64. */
	if (i == INT64_MAX && json_object_get_uint64(f) != INT64_MAX)
		return -1;
	*v = (uint64_t)i;
	return 1;
}

/* A limit: as count(), but past INT64_MAX is no limit, INT64_MAX. */
static int
limit(json_object *o, const char *key, uint64_t *v)
{
	json_object	*f;

	if (o != NULL && json_object_object_get_ex(o, key, &f) &&
	    f != NULL && json_object_is_type(f, json_type_int) &&
	    json_object_get_int64(f) == INT64_MAX) {
		*v = INT64_MAX;
		return 1;
	}
	return count(o, key, v);
}

/* cpu_stats.cpu_usage.total_usage, and optionally system_cpu_usage. */
static int
cpu_sample(json_object *root, const char *key, uint64_t *total,
    uint64_t *system, uint64_t *ncpu)
{
	json_object	*cs, *cu = NULL;
	int		 g, rc;

	*total = *system = *ncpu = 0;
	if ((g = group(root, key, &cs)) <= 0)
		return g;
	if (group(cs, "cpu_usage", &cu) == -1 ||
	    count(cs, "system_cpu_usage", system) == -1 ||
	    count(cs, "online_cpus", ncpu) == -1)
		return -1;
	rc = count(cu, "total_usage", total);
	return rc;
}

static int
parse_cpu(json_object *root, struct sandbox_stats *s)
{
	uint64_t	 total, sys, ncpu, ptotal, psys, pncpu;
	int		 rc;

	if ((rc = cpu_sample(root, "cpu_stats", &total, &sys, &ncpu)) == -1 ||
	    cpu_sample(root, "precpu_stats", &ptotal, &psys, &pncpu) == -1)
		return -1;
	if (rc == 0)
		return 0;
	s->has_cpu = 1;
	s->cpu_ns = total;
	if (psys == 0 || sys <= psys || total < ptotal)
		return 0;
	s->cpu_percent = (double)(total - ptotal) / (double)(sys - psys) *
	    (double)(ncpu > 0 ? ncpu : 1) * 100.0;
	if (!isfinite(s->cpu_percent) || s->cpu_percent > STATS_PERCENT_MAX)
		return -1;
	s->has_cpu_percent = 1;
	return 0;
}

static int
parse_memory(json_object *root, struct sandbox_stats *s)
{
	json_object	*ms, *st = NULL;
	uint64_t	 usage, lim, inactive = 0;
	int		 g, u, l, i;

	if ((g = group(root, "memory_stats", &ms)) <= 0)
		return g;
	if (group(ms, "stats", &st) == -1 ||
	    (u = count(ms, "usage", &usage)) == -1 ||
	    (l = limit(ms, "limit", &lim)) == -1)
		return -1;
	if ((i = count(st, "total_inactive_file", &inactive)) == 0)
		i = count(st, "inactive_file", &inactive);
	if (i == -1)
		return -1;
	if (u == 0 || l == 0)
		return 0;
	s->has_memory = 1;
	s->memory_bytes = inactive <= usage ? usage - inactive : usage;
	s->memory_limit = lim;
	return 0;
}

static int
parse_pids(json_object *root, struct sandbox_stats *s)
{
	json_object	*ps;
	int		 g, c, l;

	if ((g = group(root, "pids_stats", &ps)) <= 0)
		return g;
	if ((c = count(ps, "current", &s->pids)) == -1 ||
	    (l = limit(ps, "limit", &s->pids_limit)) == -1)
		return -1;
	s->has_pids = c;
	/* 0 is what cgroup v1 reports for no limit. */
	s->has_pids_limit = l && s->pids_limit > 0;
	if (!s->has_pids_limit)
		s->pids_limit = 0;
	if (!s->has_pids)
		s->pids = 0;
	return 0;
}

static int
parse_networks(json_object *root, struct sandbox_stats *s)
{
	json_object		*nets;
	uint64_t		 rx, tx;
	int			 g, n = 0;

	if ((g = group(root, "networks", &nets)) <= 0)
		return g;
	json_object_object_foreach(nets, name, ifc) {
		(void)name;
		if (++n > STATS_MAX_NETWORKS || ifc == NULL ||
		    !json_object_is_type(ifc, json_type_object) ||
		    count(ifc, "rx_bytes", &rx) != 1 ||
		    count(ifc, "tx_bytes", &tx) != 1 ||
		    rx > INT64_MAX - s->rx_bytes || tx > INT64_MAX - s->tx_bytes)
			return -1;
		s->rx_bytes += rx;
		s->tx_bytes += tx;
	}
	s->has_network = 1;
	return 0;
}

int
docker_stats_parse(const void *body, size_t len, struct sandbox_stats *s,
    const char **why)
{
	json_tokener	*tok;
	json_object	*root;
	int		 rc = -1;

	memset(s, 0, sizeof(*s));
	*why = "malformed stats from Docker";
	if (len == 0 || len > STATS_MAX_BODY) {
		*why = "a stats answer from Docker of no or too many bytes";
		return -1;
	}
	if ((tok = json_tokener_new_ex(STATS_MAX_DEPTH)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	root = json_tokener_parse_ex(tok, body, (int)len);
	if (json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len && root != NULL &&
	    json_object_is_type(root, json_type_object) &&
	    parse_cpu(root, s) == 0 && parse_memory(root, s) == 0 &&
	    parse_pids(root, s) == 0 && parse_networks(root, s) == 0) {
		s->running = 1;
		rc = 0;
	}
	json_object_put(root);
	json_tokener_free(tok);
	if (rc == -1)
		memset(s, 0, sizeof(*s));
	return rc;
}

/* "<digits>/workspace", the whole of it (helper_run drops the tab). */
int
du_said_parse(const char *said, uint64_t *bytes)
{
	static const char	 tail[] = "/workspace";
	size_t			 len = strlen(said), i;
	uint64_t		 kib = 0;

	if (len <= sizeof(tail) - 1 || len - (sizeof(tail) - 1) > 18 ||
	    strcmp(said + len - (sizeof(tail) - 1), tail) != 0)
		return -1;
	for (i = 0; i < len - (sizeof(tail) - 1); i++) {
		if (said[i] < '0' || said[i] > '9')
			return -1;
		kib = kib * 10 + (uint64_t)(said[i] - '0');
	}
	if (kib > INT64_MAX / 1024)
		return -1;
	*bytes = kib * 1024;
	return 0;
}
