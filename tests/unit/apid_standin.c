/*
 * See apid_standin.h.
 */
#include <sys/queue.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "apid_standin.h"

struct standin_call	 standin_calls[STANDIN_CALLS];
int			 standin_fail;
static int		 made;
static uint32_t		 next_id = 1;

static void
standin_gone(void *arg)
{
	struct apid_request	*ar = arg;

	ar->client_gone = 1;
	if (ar->gone != NULL)
		ar->gone(ar);
}

struct apid_request *
apid_request_send(struct http_request *req, uint32_t type, struct msgw *w,
    int fd, apid_reply_cb reply, void *arg)
{
	struct standin_call	*c = NULL;
	size_t			 i;

	for (i = 0; i < STANDIN_CALLS && c == NULL; i++)
		if (!standin_calls[i].open && standin_calls[i].fd == -1)
			c = &standin_calls[i];
	assert_non_null(c);
	if (standin_fail) {
		standin_fail = 0;
		if (fd != -1)
			close(fd);
		return NULL;
	}
	made++;
	memset(c, 0, sizeof(*c));
	c->open = 1;
	c->type = type;
	if (w != NULL)
		c->w = *w;
	else
		msgw_init(&c->w);
	c->fd = fd;
	c->ar.id = next_id++;
	c->ar.req = req;
	c->ar.reply = reply;
	c->ar.arg = arg;
	c->ar.client_gone = req == NULL || req->conn == NULL;
	if (req != NULL)
		http_request_on_gone(req, standin_gone, &c->ar);
	return &c->ar;
}

/* The caller is apid's own business (http.c): not recorded here. */
struct apid_request *
apid_request_send_as(const struct caller *caller, struct http_request *req,
    uint32_t type, struct msgw *w, int fd, apid_reply_cb reply, void *arg)
{
	(void)caller;
	return apid_request_send(req, type, w, fd, reply, arg);
}

void
apid_request_release(struct apid_request *ar)
{
	struct standin_call	*c = NULL;
	size_t			 i;

	for (i = 0; i < STANDIN_CALLS; i++)
		if (&standin_calls[i].ar == ar)
			c = &standin_calls[i];
	assert_non_null(c);
	assert_true(c != NULL && c->open);
	if (!ar->client_gone)
		http_request_on_gone(ar->req, NULL, NULL);
	c->open = 0;
}

void
standin_reset(void)
{
	size_t	 i;

	for (i = 0; i < STANDIN_CALLS; i++) {
		if (standin_calls[i].fd != -1 && standin_calls[i].type != 0)
			close(standin_calls[i].fd);
		memset(&standin_calls[i], 0, sizeof(standin_calls[i]));
		standin_calls[i].fd = -1;
	}
	standin_fail = 0;
	made = 0;
}

struct standin_call *
standin_find(uint32_t type)
{
	struct standin_call	*c = NULL;
	size_t			 i;

	for (i = 0; i < STANDIN_CALLS; i++)
		if (standin_calls[i].open && standin_calls[i].type == type &&
		    (c == NULL || standin_calls[i].ar.id > c->ar.id))
			c = &standin_calls[i];
	return c;
}

int
standin_count(void)
{
	return made;
}

struct imsg
standin_imsg(struct standin_call *c)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = c->type;
	m.hdr.peerid = c->ar.id;
	m.fd = -1;
	m.len = c->w.len;
	m.data = c->w.len ? c->w.buf : NULL;
	return m;
}

int
standin_take_fd(struct standin_call *c)
{
	int	 fd = c->fd;

	c->fd = -1;
	return fd;
}

/* As apid_dispatch_parent() does around the route's callback. */
int
standin_reply(struct standin_call *c, uint32_t type, struct msgw *w, int fd)
{
	struct imsg	 m;
	int		 rc;

	assert_true(c->open);
	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.hdr.peerid = c->ar.id;
	m.fd = fd;
	m.len = w != NULL ? w->len : 0;
	m.data = m.len ? w->buf : NULL;
	if (!c->ar.client_gone)
		http_request_on_gone(c->ar.req, NULL, NULL);
	rc = c->ar.reply(&c->ar, &m);
	if (rc == APID_REPLY_MORE) {
		if (!c->ar.client_gone)
			http_request_on_gone(c->ar.req, standin_gone, &c->ar);
	} else
		c->open = 0;
	return rc;
}

int
standin_reply_error(struct standin_call *c, enum error_kind kind,
    const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, text);
	return standin_reply(c, MSG_ERROR, &w, -1);
}

/* The request being routed: its path split in place, its handler. */
static struct {
	char	 path[1024];
	char	*params[2];
	void	(*handler)(struct http_request *, char **);
} routing;

static int
match(const char *pattern, char *path, char **params)
{
	char	*seg, *save = NULL;
	char	 pat[256], *pseg, *psave = NULL;
	int	 n = 0;

	strlcpy(pat, pattern, sizeof(pat));
	seg = strtok_r(path, "/", &save);
	pseg = strtok_r(pat, "/", &psave);
	while (seg != NULL && pseg != NULL) {
		if (strcmp(pseg, "*") == 0) {
			if (n == 2)
				return 0;
			params[n++] = seg;
		} else if (strcmp(seg, pseg) != 0)
			return 0;
		seg = strtok_r(NULL, "/", &save);
		pseg = strtok_r(NULL, "/", &psave);
	}
	return seg == NULL && pseg == NULL;
}

static void
routed(void *arg, int ok)
{
	struct http_request	*req = arg;

	if (!ok) {
		respond_error(req, ERR_PAYLOAD_TOO_LARGE, "too large");
		return;
	}
	routing.handler(req, routing.params);
}

static void
route_one(struct http_request *req, const struct standin_route *t,
    size_t n, int stream)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		strlcpy(routing.path, req->path, sizeof(routing.path));
		if (strcmp(t[i].method, http_request_method(req)) == 0 &&
		    match(t[i].pattern, routing.path, routing.params))
			break;
	}
	if (i == n) {
		respond_error(req, ERR_NOT_FOUND, "no route");
		return;
	}
	routing.handler = t[i].handler;
	if (stream)
		routing.handler(req, routing.params);
	else if (http_body_collect(req, BODY_MAX_JSON, routed) == -1)
		routed(req, 0);
}

void
standin_route(struct http_request *req, const struct standin_route *t,
    size_t n)
{
	route_one(req, t, n, 0);
}

void
standin_route_stream(struct http_request *req,
    const struct standin_route *t, size_t n)
{
	route_one(req, t, n, 1);
}

void
standin_fill_tokens(const char *sandbox_id, const char *process_id, size_t n)
{
	char		 name[] = "fill", tenant[32], tok[ATTACH_TOKEN_LEN + 1];
	struct caller	 c = { name, tenant, 0, NULL, NULL };
	size_t		 i;

	for (i = 0; i < n; i++) {
		snprintf(tenant, sizeof(tenant), "fill-%zu", i);
		assert_int_equal(attach_token_make(&c, sandbox_id, process_id,
		    tok), 0);
	}
}
