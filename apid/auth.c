/*
 * API keys on /v1 routes (API.md §2).  A usable "Authorization: Bearer"
 * credential is the only candidate when present; otherwise X-API-Key.
 * The candidate is compared with every configured key in constant time,
 * the results OR-ed, so neither which key matched nor how far a guess got
 * shows in the timing.  Nothing here logs a header or a key.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "apid.h"
#include "format.h"

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

static int
identify(struct http_request *req, char *const *keys, size_t nkeys,
    int insecure_no_auth)
{
	const char	*candidate;
	char		 name[32];
	long		 i = -1;

	candidate = auth_candidate(http_request_field(req, "Authorization"),
	    http_request_field(req, "X-API-Key"));
	if (insecure_no_auth)
		name[0] = '\0';
	else if (candidate != NULL &&
	    (i = auth_match(candidate, keys, nkeys)) != -1)
		/* A flat key is an admin's, named by its place in the list. */
		snprintf(name, sizeof(name), "key-%ld", i + 1);
	else
		return AUTH_REJECT;
	return auth_set_caller(req, name, "", 1) == 0 ? AUTH_OK : -1;
}

int
auth_identify(struct http_request *req)
{
	return identify(req, apid->api_keys, apid->api_keys_count,
	    apid->insecure_no_auth);
}

int
auth_request(struct http_request *req, char *const *keys, size_t nkeys,
    int insecure_no_auth)
{
	int	 rc;

	if ((rc = identify(req, keys, nkeys, insecure_no_auth)) == AUTH_OK)
		return 0;
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
