/*
 * dockerd-proxy's Docker response parser (dockerd-proxy/docker_http_parse.c)
 * on any bytes, as docker_http.c drives it: fed as reads fall, fed again
 * after a pause, told of EOF.  Input: a byte of mode (HEAD, upgrade,
 * streaming, pausing, the body cap, the largest piece), a byte seeding
 * the splits, then the response.
 *
 * Fed whole and in pieces, the parser must reach the same end with the
 * same status, headers and body; a complete response must have consumed
 * the same bytes.  Whatever the parser accepts stays within its bounds,
 * and a path stat header it passes on is parsed as docker_archive.c does:
 * what comes out must travel to managerd.
 */
#include <stdlib.h>
#include <string.h>

#include "docker_http.h"
#include "proxy.h"
#include "harness.h"

struct outcome {
	enum docker_http_parse_result	 result;
	enum docker_http_error		 error;
	int				 status;
	char				*content_type;
	char				*path_stat;
	struct buf			 body;	/* buffered or streamed */
	int				 body_null;
	size_t				 consumed;
	int				 pause;
};

static int
body_fn(void *arg, const unsigned char *data, size_t len)
{
	struct outcome	*o = arg;

	CHECK(len > 0);
	buf_add(&o->body, data, len);
	return o->pause;
}

static char *
dup_or_null(const char *s)
{
	char	*d = NULL;

	if (s != NULL)
		CHECK((d = strdup(s)) != NULL);
	return d;
}

static void
run(const uint8_t *in, size_t len, int flags, size_t max_body, int stream,
    struct splitter *sp, struct outcome *o)
{
	struct docker_http_parser	*p;
	const struct docker_response	*resp;
	enum docker_http_parse_result	 r = DOCKER_HTTP_PARSE_MORE;
	size_t				 off = 0, piece, n, used;

	CHECK((p = docker_http_parser_new(flags, max_body,
	    stream ? body_fn : NULL, o)) != NULL);
	while (off < len && r != DOCKER_HTTP_PARSE_DONE &&
	    r != DOCKER_HTTP_PARSE_ERROR) {
		piece = sp != NULL ? splitter_next(sp, len - off) : len - off;
		n = 0;
		/* After a pause, docker_request_resume() feeds the rest. */
		do {
			r = docker_http_parse(p, in + off + n, piece - n,
			    &used);
			CHECK(used <= piece - n);
			n += used;
			CHECK(r != DOCKER_HTTP_PARSE_MORE || n == piece);
		} while (n < piece && r == DOCKER_HTTP_PARSE_PAUSED);
		off += n;
	}
	if (r != DOCKER_HTTP_PARSE_DONE && r != DOCKER_HTTP_PARSE_ERROR)
		r = docker_http_parse_eof(p);
	o->result = r;
	o->error = docker_http_parser_error(p);
	CHECK((r == DOCKER_HTTP_PARSE_ERROR) == (o->error != DOCKER_HTTP_OK));
	o->consumed = off;
	resp = docker_http_parser_response(p);
	o->status = resp->status;
	CHECK(o->status == 0 || (o->status >= 100 && o->status <= 599));
	o->content_type = dup_or_null(resp->content_type);
	o->path_stat = dup_or_null(resp->path_stat);
	o->body_null = resp->body == NULL;
	if (resp->body != NULL) {
		CHECK(o->body.p == NULL);	/* never both ways */
		CHECK(resp->body_len <= max_body);
		CHECK(resp->body[resp->body_len] == '\0');
		buf_add(&o->body, resp->body, resp->body_len);
	}
	/* A complete buffered response always has a body to read. */
	CHECK(r != DOCKER_HTTP_PARSE_DONE || stream || !o->body_null);
	docker_http_parser_free(p);
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* docker_archive.c's use of the header: a stat managerd can decode. */
static void
check_path_stat(const char *header)
{
	struct archive_stat	 st, back;
	struct msgw		 w;
	struct imsg		 im;
	const char		*why;

	if (archive_path_stat_parse(header, &st, &why) == -1) {
		CHECK(why != NULL && st.link_target == NULL);
		return;
	}
	CHECK(why == NULL && st.link_target != NULL);
	msgw_init(&w);
	msg_put_archive_stat(&w, &st);
	CHECK(!w.overflow);
	memset(&im, 0, sizeof(im));
	im.fd = -1;
	im.data = w.buf;
	im.len = w.len;
	CHECK(msg_get_archive_stat(&im, &back) == 0);
	CHECK(back.kind == st.kind && back.size == st.size);
	CHECK(strcmp(back.link_target, st.link_target) == 0);
	archive_stat_free(&back);
	archive_stat_free(&st);
}

static void
outcome_free(struct outcome *o)
{
	free(o->content_type);
	free(o->path_stat);
	buf_free(&o->body);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static const size_t	 caps[] = { 0, 1, 16, 4096 };
	struct outcome		 whole, split;
	struct splitter		 sp;
	size_t			 max_body;
	int			 flags, stream, mode;

	if (len < 2)
		return 0;
	mode = data[0];
	flags = mode & (DOCKER_HTTP_PARSE_HEAD | DOCKER_HTTP_PARSE_UPGRADE);
	stream = (mode & 0x04) != 0;
	max_body = caps[(mode >> 4) & 3];
	splitter_init(&sp, data[1], 1 + ((mode >> 6) & 3) * 40);
	data += 2;
	len -= 2;
	memset(&whole, 0, sizeof(whole));
	memset(&split, 0, sizeof(split));
	whole.pause = split.pause = (mode & 0x08) != 0;
	run(data, len, flags, max_body, stream, NULL, &whole);
	run(data, len, flags, max_body, stream, &sp, &split);
	CHECK(whole.result == split.result && whole.error == split.error);
	CHECK(whole.status == split.status);
	CHECK(same_str(whole.content_type, split.content_type));
	CHECK(same_str(whole.path_stat, split.path_stat));
	CHECK(whole.body_null == split.body_null);
	CHECK(buf_equal(&whole.body, &split.body));
	if (whole.result == DOCKER_HTTP_PARSE_DONE)
		CHECK(whole.consumed == split.consumed);
	if (whole.path_stat != NULL)
		check_path_stat(whole.path_stat);
	outcome_free(&whole);
	outcome_free(&split);
	return 0;
}
