/*
 * API keys on /v1 routes (API.md §2).  A usable "Authorization: Bearer"
 * credential is the only candidate when present; otherwise X-API-Key.
 * The candidate is compared with every configured key in constant time,
 * the results OR-ed, so neither which key matched nor how far a guess got
 * shows in the timing; so is its SHA-256 with every keys file entry's
 * (auth_keys.c).  Nothing here logs a header, a key or a hash.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "apid.h"
#include "format.h"
#include "keys_file.h"

/*
 * Starlette's get_authorization_scheme_param(): the scheme is what comes
 * before the first space, the credential all that follows it.  No space,
 * an empty credential or a scheme other than "bearer" (any case): absent.
 */
static const char *
bearer_credential(const char *authorization)
{
	const char	*space;

	if (authorization == NULL || *authorization == '\0')
		return NULL;
	if ((space = strchr(authorization, ' ')) == NULL)
		return NULL;
	if (space - authorization != 6 ||
	    strncasecmp(authorization, "bearer", 6) != 0)
		return NULL;
	if (space[1] == '\0')
		return NULL;
	return space + 1;
}

/*
 * The index of the key the candidate is, or -1.  Every key is compared
 * and the index picked by a mask, not a branch on the comparison.
 */
static long
auth_match(const char *candidate, char *const *keys, size_t nkeys)
{
	size_t		 i, len;
	unsigned long	 found = 0, eq;
	int		 match = 0;

	len = strlen(candidate);
	for (i = 0; i < nkeys; i++) {
		eq = (unsigned long)format_consttime_equal(candidate, len,
		    keys[i], strlen(keys[i]));
		match |= (int)eq;
		found |= (0UL - eq) & i;
	}
	return match ? (long)found : -1;
}

static const char *
auth_candidate(const char *authorization, const char *x_api_key)
{
	const char	*candidate;

	if ((candidate = bearer_credential(authorization)) == NULL)
		candidate = x_api_key;
	if (candidate == NULL || *candidate == '\0')
		return NULL;
	return candidate;
}

int
auth_check(const char *authorization, const char *x_api_key,
    char *const *keys, size_t nkeys)
{
	const char	*candidate;

	if ((candidate = auth_candidate(authorization, x_api_key)) == NULL)
		return AUTH_REJECT;
	return auth_match(candidate, keys, nkeys) != -1 ? AUTH_OK :
	    AUTH_REJECT;
}

/* Who the request is, for managerd (caller.h): 0, or -1 out of memory. */
static int
auth_set_caller(struct http_request *req, const char *name,
    const char *tenant, int admin)
{
	free(req->caller.key_name);
	free(req->caller.tenant);
	req->caller.key_name = strdup(name);
	req->caller.tenant = strdup(tenant);
	req->caller.admin = admin;
	return req->caller.key_name != NULL && req->caller.tenant != NULL ?
	    0 : -1;
}

/*
 * Who the candidate is: a flat key (an admin named key-<n>, tenant ""),
 * else a keys file entry (*entry its index), else nobody.  Both kinds
 * are always compared, each key of each in constant time.
 */
static int
identify(struct http_request *req, char *const *keys, size_t nkeys,
    int insecure_no_auth, long *entry)
{
	const struct keys_table	*t = auth_keys();
	const char		*candidate;
	char			 name[32];
	long			 flat = -1, e = -1;

	*entry = -1;
	candidate = auth_candidate(http_request_field(req, "Authorization"),
	    http_request_field(req, "X-API-Key"));
	if (insecure_no_auth)
		return auth_set_caller(req, "", "", 1) == 0 ? AUTH_OK : -1;
	if (candidate == NULL)
		return AUTH_REJECT;
	flat = auth_match(candidate, keys, nkeys);
	e = auth_keys_match(candidate);
	if (flat != -1) {
		snprintf(name, sizeof(name), "key-%ld", flat + 1);
		return auth_set_caller(req, name, "", 1) == 0 ? AUTH_OK : -1;
	}
	if (e == -1)
		return AUTH_REJECT;
	*entry = e;
	return auth_set_caller(req, t->v[e].name, t->v[e].tenant,
	    t->v[e].admin) == 0 ? AUTH_OK : -1;
}

/*
 * A keys file key's requests per second (its token bucket), before
 * anything else is done for the request: 429 with Retry-After.
 */
static int
auth_rate(struct http_request *req, long entry)
{
	char	 secs[24];
	long	 wait;

	if ((wait = auth_keys_take(entry)) == 0)
		return 0;
	snprintf(secs, sizeof(secs), "%ld", wait);
	http_add_field(req, "Retry-After", secs);
	respond_error_status(req, 429, "limit_exceeded", "too many requests "
	    "for this API key; try again later");
	return -1;
}

int
auth_request(struct http_request *req, char *const *keys, size_t nkeys,
    int insecure_no_auth)
{
	long	 entry;
	int	 rc;

	if ((rc = identify(req, keys, nkeys, insecure_no_auth,
	    &entry)) == AUTH_OK)
		return auth_rate(req, entry);
	if (rc == -1)
		respond_error(req, ERR_INTERNAL, "out of memory");
	else
		/* respond_error_status adds "WWW-Authenticate: Bearer". */
		respond_error_status(req, 401, "unauthorized",
		    "missing or invalid API key");
	return -1;
}

/*
 * GET /metrics: open unless AGENT_SANDBOX_METRICS_KEY is set; then only
 * "Authorization: Bearer <that key>", compared in constant time.  An API
 * key is no metrics key, nor the other way round.
 */
int
auth_metrics(struct http_request *req, const char *key)
{
	const char	*candidate;

	if (key == NULL)
		return 0;
	candidate = bearer_credential(http_request_field(req,
	    "Authorization"));
	if (candidate != NULL && format_consttime_equal(candidate,
	    strlen(candidate), key, strlen(key)))
		return 0;
	respond_error_status(req, 401, "unauthorized",
	    "missing or invalid metrics key");
	return -1;
}
