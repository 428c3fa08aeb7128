/*
 * DOCKER_HOST: the Docker endpoint dockerd-proxy talks to.  unix:///PATH
 * (the default, /var/run/docker.sock), or tcp://HOST:PORT for a socket
 * proxy on loopback or a private network (docs/socket-proxy.md).  There is
 * no TLS: DOCKER_TLS_VERIFY with tcp:// is refused rather than ignored, so
 * nobody believes the connection is encrypted when it is not.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_internal.h"
#include "docker_host.h"

#define DOCKER_SOCKET_DEFAULT	"/var/run/docker.sock"

/* Letters, digits and inner hyphens; 1 to 63 of them. */
static int
valid_label(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/*
 * A host name (RFC 1123), or an IPv4 literal.  Digits and dots that are
 * no IPv4 literal ("10.1", "300.1.1.1") are refused: the resolver would
 * read some of them the old inet_aton way, as an address nobody meant.
 */
static int
valid_host(const char *host, int *family)
{
	struct in_addr	 a4;
	const char	*label, *dot;
	size_t		 len = strlen(host);

	if (inet_pton(AF_INET, host, &a4) == 1) {
		*family = AF_INET;
		return 1;
	}
	if (len == 0 || len > DOCKER_HOST_NAME_MAX ||
	    strspn(host, "0123456789.") == len)
		return 0;
	for (label = host;; label = dot + 1) {
		dot = strchr(label, '.');
		if (!valid_label(label, dot != NULL ? (size_t)(dot - label) :
		    strlen(label)))
			return 0;
		if (dot == NULL)
			break;
	}
	*family = AF_UNSPEC;
	return 1;
}

/* Decimal digits only, 1..65535. */
static int
parse_port(const char *s, unsigned int *port)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (s[0] == '\0' || strlen(s) > 5)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (unsigned int)v;
	return 0;
}

/* "[v6]:port": the literal into t->host, the rest left at *rest. */
static int
split_bracketed(const char *s, struct docker_host_tcp *t, const char **rest,
    const char **why)
{
	struct in6_addr	 a6;
	const char	*close;
	size_t		 len;

	if ((close = strchr(s, ']')) == NULL) {
		*why = "an IPv6 address must end with ']'";
		return -1;
	}
	len = (size_t)(close - s - 1);
	if (len >= sizeof(t->host)) {
		*why = "not an IPv6 address between the brackets";
		return -1;
	}
	memcpy(t->host, s + 1, len);
	t->host[len] = '\0';
	if (inet_pton(AF_INET6, t->host, &a6) != 1) {
		*why = "not an IPv6 address between the brackets";
		return -1;
	}
	t->family = AF_INET6;
	*rest = close + 1;
	return 0;
}

static int
split_plain(const char *s, struct docker_host_tcp *t, const char **rest,
    const char **why)
{
	const char	*colon;
	size_t		 len;

	if ((colon = strchr(s, ':')) == NULL) {
		*why = "a port is required (tcp://HOST:PORT)";
		return -1;
	}
	len = (size_t)(colon - s);
	if (len >= sizeof(t->host)) {
		*why = "the host name is longer than 253 characters";
		return -1;
	}
	memcpy(t->host, s, len);
	t->host[len] = '\0';
	if (!valid_host(t->host, &t->family)) {
		*why = "the host is neither an IPv4 address, a bracketed "
		    "IPv6 address nor a host name";
		return -1;
	}
	*rest = colon;
	return 0;
}

int
docker_host_tcp_parse(const char *raw, struct docker_host_tcp *t,
    const char **why)
{
	const char	*s, *rest;
	size_t		 plen = strlen(DOCKER_HOST_TCP_PREFIX);

	memset(t, 0, sizeof(*t));
	if (strncmp(raw, DOCKER_HOST_TCP_PREFIX, plen) != 0) {
		*why = "not tcp://";
		return -1;
	}
	s = raw + plen;
	if (*s == '\0') {
		*why = "a host and a port are required (tcp://HOST:PORT)";
		return -1;
	}
	if ((*s == '[' ? split_bracketed(s, t, &rest, why) :
	    split_plain(s, t, &rest, why)) == -1)
		return -1;
	if (*rest != ':') {
		*why = "a port is required (tcp://HOST:PORT)";
		return -1;
	}
	if (parse_port(rest + 1, &t->port) == -1) {
		*why = "the port must be a number from 1 to 65535, and "
		    "nothing may follow it";
		return -1;
	}
	return 0;
}

int
docker_host_family(const char *endpoint)
{
	struct docker_host_tcp	 t;
	const char		*why;

	if (docker_host_tcp_parse(endpoint, &t, &why) == -1)
		return AF_UNIX;
	return t.family;
}

/* The quoted value's message, and why after it. */
static int
fail_why(struct loader *ld, const char *raw, const char *why)
{
	cfg_fail_raw(ld, RAW_DOCKER_HOST, "DOCKER_HOST", raw);
	strlcat(ld->err, ": ", ld->errlen);
	strlcat(ld->err, why, ld->errlen);
	return -1;
}

static int
load_tcp(struct loader *ld, const char *raw)
{
	struct docker_host_tcp	 t;
	const char		*why, *tls;

	if (docker_host_tcp_parse(raw, &t, &why) == -1)
		return fail_why(ld, raw, why);
	tls = cfg_env_get(ld->envp, "DOCKER_TLS_VERIFY");
	if (tls != NULL && *tls != '\0')
		return cfg_fail(ld, "DOCKER_TLS_VERIFY is set, but TLS to "
		    "Docker is not supported: tcp:// is for a socket proxy "
		    "on loopback or a private network (docs/socket-proxy.md)");
	if ((ld->conf->docker_endpoint = strdup(raw)) == NULL)
		return cfg_fail(ld, "out of memory");
	return 0;
}

int
config_load_docker(struct loader *ld)
{
	struct sockaddr_un	 sun;
	const char		*raw, *path;

	raw = cfg_env_get(ld->envp, "DOCKER_HOST");
	if (raw != NULL && strncmp(raw, DOCKER_HOST_TCP_PREFIX,
	    strlen(DOCKER_HOST_TCP_PREFIX)) == 0)
		return load_tcp(ld, raw);
	if (raw == NULL || *raw == '\0')
		path = DOCKER_SOCKET_DEFAULT;
	else if (strncmp(raw, "unix://", 7) == 0 && raw[7] == '/' &&
	    strlen(raw + 7) < sizeof(sun.sun_path))
		path = raw + 7;
	else
		return cfg_fail_raw(ld, RAW_DOCKER_HOST, "DOCKER_HOST", raw);
	if ((ld->conf->docker_endpoint = strdup(path)) == NULL)
		return cfg_fail(ld, "out of memory");
	return 0;
}
