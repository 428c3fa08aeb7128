/*
 * API keys on /v1 routes (API.md §2).  A usable "Authorization: Bearer"
 * credential is the only candidate when present; otherwise X-API-Key.
 * The candidate is compared with every configured key in constant time,
 * the results OR-ed, so neither which key matched nor how far a guess got
 * shows in the timing.  Nothing here logs a header or a key.
 */
#include <sys/queue.h>

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

int
auth_check(const char *authorization, const char *x_api_key,
    char *const *keys, size_t nkeys)
{
	const char	*candidate;
	size_t		 i, len;
	int		 match = 0;

	if ((candidate = bearer_credential(authorization)) == NULL)
		candidate = x_api_key;
	if (candidate == NULL || *candidate == '\0')
		return AUTH_REJECT;
	len = strlen(candidate);
	for (i = 0; i < nkeys; i++)
		match |= format_consttime_equal(candidate, len, keys[i],
		    strlen(keys[i]));
	return match ? AUTH_OK : AUTH_REJECT;
}

int
auth_request(struct http_request *req, char *const *keys, size_t nkeys,
    int insecure_no_auth)
{
	if (insecure_no_auth)
		return 0;
	if (auth_check(http_request_field(req, "Authorization"),
	    http_request_field(req, "X-API-Key"), keys, nkeys) == AUTH_OK)
		return 0;
	/* respond_error_status adds "WWW-Authenticate: Bearer" to a 401. */
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
