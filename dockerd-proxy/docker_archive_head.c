/*
 * What a path in a sandbox is, without its content (API.md §11.5;
 * MSG_DOCKER_ARCHIVE_HEAD): HEAD /containers/<id>/archive, whose
 * X-Docker-Container-Path-Stat header is the answer, after the check
 * every archive operation makes (the container exists and is ours).
 *
 * An answer to HEAD has no body, so when Docker fails with anything but
 * a 404 the same path is asked for again with GET, whose error body
 * says why.  A symlink chain that does not end is the one failure sent
 * as a stat (ARCHIVE_KIND_SYMLINK without a target): managerd decides
 * whether it matters, and at the last name of an upload it does not.
 * A path below a file is named without Docker's words, which hold the
 * host's paths.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

/* Error bodies only: a GET that starts a tar is cut off here. */
#define EXPLAIN_MAX_BODY	(64 * 1024)

struct archive_stat_call {
	struct proxy		*px;
	uint32_t		 peerid;
	struct archive_head	*ah;
	int			 status;	/* HEAD's, for the log */
	char			 url[DOCKER_HTTP_MAX_PATH + 1];
};

static void
head_free(struct archive_stat_call *h)
{
	archive_head_free(h->ah);
	free(h->ah);
	free(h);
}

static void
head_fail(struct archive_stat_call *h, enum error_kind kind,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
head_fail(struct archive_stat_call *h, enum error_kind kind,
    const char *fmt, ...)
{
	char	 text[MSG_MAX_STRING + 1];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_debug("archive head %u in sandbox %s: %s", h->peerid, h->ah->id,
	    text);
	peer_send_error(&h->px->parent, h->peerid, kind, "%s", text);
	head_free(h);
}

static void
head_answer(struct archive_stat_call *h, const struct archive_stat *st)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_archive_stat(&w, st);
	peer_send(&h->px->parent, MSG_DOCKER_ARCHIVE_STAT, h->peerid, -1, &w);
	head_free(h);
}

static void
head_stat(struct archive_stat_call *h, const struct docker_response *resp)
{
	struct archive_stat	 st;
	const char		*why;

	if (archive_path_stat_parse(resp->path_stat, &st, &why) == -1) {
		log_warnx("archive head %u in sandbox %s: %s", h->peerid,
		    h->ah->id, why);
		head_fail(h, ERR_BACKEND, "%s: Docker did not say what it is",
		    h->ah->path);
		return;
	}
	head_answer(h, &st);
	archive_stat_free(&st);
}

static void
head_explained(const struct docker_result *res, void *arg)
{
	struct archive_stat_call	*h = arg;
	struct archive_stat		 loop;
	enum error_kind			 kind;
	char				 msg[1024];
	char				 text[MSG_MAX_STRING + 1];

	if (!docker_result_answered(res) || res->status < 400) {
		head_fail(h, ERR_BACKEND, "%s: Docker could not say what it "
		    "is (HTTP %d)", h->ah->path, h->status);
		return;
	}
	docker_error_message(res->resp, msg, sizeof(msg));
	switch (archive_error_class(msg)) {
	case ARCHIVE_ERROR_LOOP:
		memset(&loop, 0, sizeof(loop));
		loop.kind = ARCHIVE_KIND_SYMLINK;
		loop.link_target = (char *)(uintptr_t)"";
		head_answer(h, &loop);
		break;
	case ARCHIVE_ERROR_NOTDIR:
		head_fail(h, ERR_INVALID_REQUEST, "%s: not a directory",
		    h->ah->path);
		break;
	default:
		kind = docker_result_error(res, h->ah->path, text,
		    sizeof(text));
		head_fail(h, kind, "%s", text);
	}
}

static void
head_done(const struct docker_result *res, void *arg)
{
	struct archive_stat_call	*h = arg;
	enum error_kind			 kind;
	char				 text[MSG_MAX_STRING + 1];

	if (docker_result_answered(res) && res->status == 200) {
		head_stat(h, res->resp);
		return;
	}
	if (docker_result_answered(res) && res->status == 404) {
		head_fail(h, ERR_NOT_FOUND, "%s: not found", h->ah->path);
		return;
	}
	if (!docker_result_answered(res)) {
		kind = docker_result_error(res, h->ah->path, text,
		    sizeof(text));
		head_fail(h, kind, "%s", text);
		return;
	}
	h->status = res->status;
	docker_call(h->px, "GET", h->url, NULL, EXPLAIN_MAX_BODY,
	    head_explained, h);
}

static void
head_container(void *arg, const char *cid, enum error_kind kind,
    const char *text)
{
	struct archive_stat_call	*h = arg;

	if (cid == NULL) {
		head_fail(h, kind, "%s", text);
		return;
	}
	if (docker_path(h->url, sizeof(h->url), DOCKER_API
	    "/containers/%s/archive?path=%s", cid, h->ah->path) == -1) {
		head_fail(h, ERR_INVALID_REQUEST, "path too long");
		return;
	}
	docker_call(h->px, "HEAD", h->url, NULL, EXPLAIN_MAX_BODY, head_done,
	    h);
}

void
docker_archive_head(struct proxy *px, uint32_t peerid, struct archive_head *ah)
{
	struct archive_stat_call	*h;

	h = xcalloc(1, sizeof(*h));
	h->px = px;
	h->peerid = peerid;
	h->ah = ah;
	/* A HEAD's 404 has no body to say the container is gone: no cache. */
	archive_container_inspect(px, ah->id, "read files of", head_container,
	    h);
}
