/*
 * The REST client's set-up: parsing the server URL, rest_client_init and
 * rest_client_free, and resolving the server's name.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest.h"
#include "rest_internal.h"

/* --- the URL ------------------------------------------------------------- */

static int
hostchars(const char *s, size_t n, int v6)
{
	size_t	 i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (isalnum((unsigned char)s[i]) || s[i] == '-' ||
		    s[i] == '.' || s[i] == '_')
			continue;
		/* An IPv6 literal, possibly with a zone ("fe80::1%eth0"). */
		if (v6 && (s[i] == ':' || s[i] == '%'))
			continue;
		return 0;
	}
	return 1;
}

/* Printable ASCII without spaces: safe in a request line or a header. */
int
wirechars(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int
parse_url(struct rest_client *rc, const char *url, char *err, size_t errlen)
{
	const char	*p, *auth, *end, *h, *colon = NULL, *errstr, *shown;
	size_t		 hlen, plen;

	/* A URL with a password in it is never repeated in a message. */
	shown = strchr(url, '@') != NULL ? "the URL" : url;

	if (strncasecmp(url, "https://", 8) == 0) {
		snprintf(err, errlen, "https is not supported; put a TLS "
		    "proxy in front or use http on localhost");
		return -1;
	}
	if (strncasecmp(url, "http://", 7) != 0) {
		snprintf(err, errlen, "%s: not an http:// URL", shown);
		return -1;
	}
	auth = url + 7;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', end - auth) != NULL) {
		snprintf(err, errlen, "a user name or password in the URL is "
		    "not supported; set AGENT_SANDBOX_API_KEY instead");
		return -1;
	}
	if (*auth == '[') {
		h = auth + 1;
		p = memchr(h, ']', end - h);
		if (p == NULL || !hostchars(h, p - h, 1) ||
		    memchr(h, ':', p - h) == NULL) {
			snprintf(err, errlen, "%s: bad IPv6 address", shown);
			return -1;
		}
		hlen = p - h;
		p++;
		if (p != end && *p != ':') {
			snprintf(err, errlen, "%s: bad host", shown);
			return -1;
		}
		if (p != end)
			colon = p;
	} else {
		h = auth;
		colon = memchr(h, ':', end - h);
		hlen = (colon != NULL ? colon : end) - h;
		if (!hostchars(h, hlen, 0)) {
			snprintf(err, errlen, "%s: bad host", shown);
			return -1;
		}
	}
	if ((rc->host = strndup(h, hlen)) == NULL)
		goto nomem;

	if (colon != NULL) {
		if ((rc->port = strndup(colon + 1, end - colon - 1)) == NULL)
			goto nomem;
		if (*rc->port == '\0' ||
		    strspn(rc->port, "0123456789") != strlen(rc->port)) {
			snprintf(err, errlen, "%s: bad port", shown);
			return -1;
		}
		(void)strtonum(rc->port, 1, 65535, &errstr);
		if (errstr != NULL) {
			snprintf(err, errlen, "%s: port is %s", shown, errstr);
			return -1;
		}
	} else if ((rc->port = strdup("80")) == NULL)
		goto nomem;

	if (*end == '?' || *end == '#' || strpbrk(end, "?#") != NULL) {
		snprintf(err, errlen, "%s: a query or fragment in the URL is "
		    "not supported", shown);
		return -1;
	}
	/* The prefix, without trailing slashes: paths bring their own. */
	plen = strlen(end);
	while (plen > 0 && end[plen - 1] == '/')
		plen--;
	if ((rc->prefix = strndup(end, plen)) == NULL)
		goto nomem;
	if (!wirechars(rc->prefix)) {
		snprintf(err, errlen, "%s: bad path in the URL", shown);
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	return -1;
}

int
rest_client_init(struct rest_client *rc, const char *url, const char *key,
    char *err, size_t errlen)
{
	memset(rc, 0, sizeof(*rc));
	rc->timeout = REST_TIMEOUT_SECONDS;
	if (url == NULL)
		url = getenv("AGENT_SANDBOX_URL");
	if (url == NULL || *url == '\0')
		url = REST_DEFAULT_URL;
	if (key == NULL)
		key = getenv("AGENT_SANDBOX_API_KEY");

	if (parse_url(rc, url, err, errlen) == -1)
		goto fail;
	if (key != NULL && *key != '\0') {
		if (!wirechars(key)) {
			snprintf(err, errlen, "the API key has characters an "
			    "HTTP header cannot carry");
			goto fail;
		}
		if ((rc->key = strdup(key)) == NULL) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto fail;
		}
	}
	return 0;
fail:
	rest_client_free(rc);
	return -1;
}

void
rest_client_free(struct rest_client *rc)
{
	if (rc->key != NULL)
		freezero(rc->key, strlen(rc->key) + 1);
	free(rc->host);
	free(rc->port);
	free(rc->prefix);
	if (rc->addrs != NULL)
		freeaddrinfo(rc->addrs);
	memset(rc, 0, sizeof(*rc));
}

void
resolve_error(const struct rest_client *rc, int gai, int errnum,
    struct rest_error *err)
{
	seterr(err, 0, "connection_error", "cannot resolve %s: %s", rc->host,
	    gai == EAI_SYSTEM ? strerror(errnum) : gai_strerror(gai));
}

/* Addresses for host and port; 0 with *res, or the getaddrinfo error. */
int
rest_lookup(const struct rest_client *rc, struct addrinfo **res, int *errnum)
{
	struct addrinfo	 hints;
	int		 r;

	*res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((r = getaddrinfo(rc->host, rc->port, &hints, res)) != 0) {
		*errnum = errno;
		*res = NULL;
	}
	return r;
}

int
rest_client_resolve(struct rest_client *rc, struct rest_error *err)
{
	struct addrinfo	*res;
	int		 r, errnum = 0;

	clearerr_rest(err);
	r = rest_lookup(rc, &res, &errnum);
	if (rc->addrs != NULL)
		freeaddrinfo(rc->addrs);
	rc->addrs = res;
	rc->resolved = 1;
	rc->gai_error = r;
	rc->gai_errno = errnum;
	if (r != 0) {
		resolve_error(rc, r, errnum, err);
		return -1;
	}
	return 0;
}
