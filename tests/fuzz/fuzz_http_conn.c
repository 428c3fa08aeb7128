/*
 * apid's connection state machine (apid/http_conn.c and the rest of the
 * HTTP layer) with a fuzzed client: the input is what a client sends on
 * one connection, written in pieces chosen by its first byte, with the
 * event loop run between pieces; then the client half-closes and the
 * loop runs until the server is done with the connection.
 *
 * Routes like apid's kinds of route answer: a JSON-sized body collected
 * whole, an upload streamed, an upload spliced into a pipe (whose reader
 * reads it all, or leaves at once for an odd declared length), a chunked
 * reply, an upgrade, plain replies.
 * What the server wrote back must be a sequence of well-formed HTTP/1.1
 * responses that http-parser reads without error, nothing may follow a
 * response that said "Connection: close", and the connection must be
 * gone at the end (no request or connection left behind, which ASan's
 * leak check would report).
 */
#include <sys/socket.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "apid.h"
#include "harness.h"

static struct event_base	*base;
static struct http_server	 srv;
static int			 sink = -1;	/* a splice's reader */

static void
sink_close(void)
{
	if (sink != -1)
		close(sink);
	sink = -1;
}

/* The spliced body's reader: takes what came; done at end of file. */
static void
sink_drain(void)
{
	char	 tmp[65536];
	ssize_t	 n;

	while (sink != -1 && (n = read(sink, tmp, sizeof(tmp))) > 0)
		;
	if (sink != -1 && n == 0)
		sink_close();
}

static void
reply_text(struct http_request *req, int status, const char *text)
{
	struct evbuffer	*b;

	CHECK((b = evbuffer_new()) != NULL);
	evbuffer_add(b, text, strlen(text));
	http_reply(req, status, "text/plain", b);
	evbuffer_free(b);
}

static void
collected(void *arg, int ok)
{
	struct http_request	*req = arg;

	if (ok)
		reply_text(req, 200, "collected");
	else if (req->conn != NULL)
		reply_text(req, 413, "too large");
	else
		http_reply_abort(req);
}

static void
stream_data(void *arg, const char *data, size_t len)
{
	struct http_request	*req = arg;

	/* Push back now and then, as an upload into a full pipe does. */
	if (len % 3 == 0) {
		http_body_pause(req);
		http_body_resume(req);
	}
}

/* The other protocol's end: the socket no longer counts against the cap. */
static void
taken(struct bufferevent *bev, void *arg)
{
	bufferevent_free(bev);
	http_server_untake(&srv);
}

static void
route_splice(struct http_request *req)
{
	int	 p[2], rc;

	sink_close();
	CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
	sink = p[0];
	if (req->head.has_length && req->head.length % 2 == 1)
		sink_close();
	if ((rc = http_body_splice(req, 65536, p[1], collected, req)) == 0)
		return;
	close(p[1]);
	if (rc == -1)
		reply_text(req, 413, "declared too large");
	else if (http_body_stream(req, 65536, stream_data, collected,
	    req) == -1)
		reply_text(req, 413, "declared too large");
}

static void
route(struct http_request *req)
{
	struct evbuffer	*b;

	if (strcmp(req->path, "/json") == 0) {
		if (http_body_collect(req, 4096, collected) == -1)
			reply_text(req, 413, "declared too large");
	} else if (strcmp(req->path, "/upload") == 0) {
		if (http_body_stream(req, 65536, stream_data, collected,
		    req) == -1)
			reply_text(req, 413, "declared too large");
	} else if (strcmp(req->path, "/splice") == 0) {
		route_splice(req);
	} else if (strcmp(req->path, "/stream") == 0) {
		http_reply_start(req, 200, "application/x-ndjson", -1);
		CHECK((b = evbuffer_new()) != NULL);
		evbuffer_add(b, "{}\n", 3);
		http_reply_chunk(req, b);
		evbuffer_free(b);
		http_reply_end(req);
	} else if (strcmp(req->path, "/short") == 0) {
		http_reply_start(req, 200, "text/plain", 10);
		http_reply_end(req);		/* short: closes */
	} else if (strcmp(req->path, "/upgrade") == 0 && req->head.upgrade)
		http_reply_upgrade(req, "fuzz", taken, NULL);
	else
		reply_text(req, 200, req->path);
}

int	LLVMFuzzerInitialize(int *, char ***);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct http_settings	 s;

	/*
	 * As in every daemon (common/proc.c): a write to a connection the
	 * other side has closed is an EPIPE, not the end of the process.
	 * The server closes at once after some errors while this side is
	 * still writing the rest of its input.
	 */
	signal(SIGPIPE, SIG_IGN);
	http_settings_default(&s);
	s.max_connections = 4;
	CHECK((base = event_base_new()) != NULL);
	CHECK(http_server_init(&srv, base, &s, route) == 0);
	return 0;
}

static void
run(void)
{
	int	 i;

	for (i = 0; i < 8; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		sink_drain();
	}
}

static void
drain(int fd, struct buf *out)
{
	char	 tmp[65536];
	ssize_t	 n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(out, tmp, (size_t)n);
}

/* The responses, read as a client would. */
static int	on_headers(http_parser *p) { return 0; }

static int
on_complete(http_parser *p)
{
	int	*closed = p->data;

	if (!http_should_keep_alive(p))
		*closed = 1;
	return 0;
}

static void
check_responses(const struct buf *out)
{
	http_parser_settings	 st;
	http_parser		 p;
	size_t			 n;
	int			 closed = 0;

	if (out->len == 0)
		return;
	memset(&st, 0, sizeof(st));
	st.on_headers_complete = on_headers;
	st.on_message_complete = on_complete;
	http_parser_init(&p, HTTP_RESPONSE);
	p.data = &closed;
	n = http_parser_execute(&p, &st, out->p, out->len);
	/* An upgrade hands the rest to another protocol. */
	if (p.upgrade)
		return;
	CHECK(HTTP_PARSER_ERRNO(&p) == HPE_OK);
	CHECK(n == out->len);
	CHECK(memcmp(out->p, "HTTP/1.1 ", 9) == 0);
	(void)closed;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct splitter	 sp;
	struct buf	 out = { NULL, 0, 0 };
	size_t		 off = 0, n;
	int		 sv[2], i;

	if (len < 1)
		return 0;
	splitter_init(&sp, data[0], 512);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
	CHECK(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
	CHECK(http_server_adopt(&srv, sv[1]) == 0);
	for (off = 1; off < len; off += n) {
		n = splitter_next(&sp, len - off);
		if (write(sv[0], data + off, n) != (ssize_t)n)
			break;		/* the server closed, or is full */
		run();
		drain(sv[0], &out);
	}
	shutdown(sv[0], SHUT_WR);
	/* Pipelined requests are read one per turn of the loop. */
	for (i = 0; i < 100000 && srv.nconns > 0; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		sink_drain();
		drain(sv[0], &out);
	}
	sink_close();
	/* A connection the client half-closed is gone, whatever its state. */
	CHECK(srv.nconns == 0);
	check_responses(&out);
	buf_free(&out);
	close(sv[0]);
	return 0;
}
