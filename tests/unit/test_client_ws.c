/*
 * Tests for client/rest_ws.c and ws_client.c: the WebSocket handshake
 * and frames against a fake server on a thread at the other end of a
 * socketpair.  The handshake sends what RFC 6455 §4.1 asks and the key,
 * and refuses a 101 with a wrong or missing Sec-WebSocket-Accept,
 * without the upgrade, or with an extension; any other answer is the
 * API's error.  Frames: a message in pieces with a ping between them, a
 * big one, the client's own frames masked, and what a server must not
 * send (a masked frame, a text message too long for us, a hang-up
 * before the close) ending the connection as a failure.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rest.h"
#include "rest_internal.h"
#include "websocket.h"
#include "ws_client.h"

#define KEY		"test-key-0123456789abcdef"
#define PATH		"/v1/sandboxes/sb_0123456789abcdef/processes/" \
			"proc_0123456789abcdef/attach"
#define EXIT_JSON	"{\"type\":\"exit\",\"status\":\"exited\"," \
			"\"exit_code\":7}"

/* --- the fake server ----------------------------------------------------- */

enum accept_kind { ACCEPT_RIGHT, ACCEPT_WRONG, ACCEPT_NONE, ACCEPT_TWICE };

struct server {
	int		 fd;
	pthread_t	 th;
	const char	*status;	/* NULL: 101 Switching Protocols */
	enum accept_kind accept;
	const char	*headers;	/* more header lines, or "" */
	const char	*no_upgrade;	/* replaces "Upgrade: websocket" */
	const char	*connection;	/* replaces "Connection: Upgrade" */
	unsigned char	 frames[128 * 1024];	/* right after the head */
	size_t		 frameslen;
	int		 hang_up;	/* close after the frames */
	char		 req[8192];	/* the request's head */
	unsigned char	 got[64 * 1024];	/* the client's frames */
	size_t		 gotlen;
};

/* A frame as a server (mask 0) or a client (mask 1) sends it. */
static size_t
frame(unsigned char *out, int fin, int opcode, int mask, const void *data,
    size_t len)
{
	static const unsigned char	 key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	const unsigned char		*p = data;
	size_t				 n = 0, i;

	out[n++] = (fin ? 0x80 : 0) | opcode;
	if (len < 126)
		out[n++] = (mask ? 0x80 : 0) | len;
	else if (len < 65536) {
		out[n++] = (mask ? 0x80 : 0) | 126;
		out[n++] = len >> 8;
		out[n++] = len & 0xff;
	} else {
		out[n++] = (mask ? 0x80 : 0) | 127;
		for (i = 0; i < 8; i++)
			out[n++] = (uint64_t)len >> (56 - 8 * i) & 0xff;
	}
	if (mask) {
		memcpy(out + n, key, 4);
		n += 4;
	}
	for (i = 0; i < len; i++)
		out[n + i] = p[i] ^ (mask ? key[i % 4] : 0);
	return n + len;
}

static void
add_frame(struct server *s, int fin, int opcode, int mask, const void *data,
    size_t len)
{
	s->frameslen += frame(s->frames + s->frameslen, fin, opcode, mask,
	    data, len);
}

/* One frame of the client's at p: its length, or 0 if incomplete. */
static size_t
client_frame(const unsigned char *p, size_t n, int *opcode,
    unsigned char *out, size_t *outlen)
{
	size_t		 hl = 2, len, i;

	if (n < 2)
		return 0;
	len = p[1] & 0x7f;
	if (len == 126) {
		if (n < 4)
			return 0;
		len = (size_t)p[2] << 8 | p[3];
		hl = 4;
	}
	/* Every client frame is masked (RFC 6455 §5.3): stop at another. */
	if (!(p[1] & 0x80) || n < hl + 4 + len)
		return 0;
	for (i = 0; i < len; i++)
		out[i] = p[hl + 4 + i] ^ p[hl + i % 4];
	*opcode = p[0] & 0x0f;
	*outlen = len;
	return hl + 4 + len;
}

/* Whether the client's frames so far end with its close. */
static int
got_close(const struct server *s)
{
	unsigned char	 data[64 * 1024];
	size_t		 off = 0, n, len;
	int		 op = -1;

	while ((n = client_frame(s->got + off, s->gotlen - off, &op, data,
	    &len)) > 0)
		off += n;
	return op == 0x8;
}

/*
 * The server thread asserts nothing (cmocka's checks belong to the main
 * thread): a client that went away first just gets nothing more.
 */
static void
send_all(int fd, const void *p, size_t n)
{
	(void)send(fd, p, n, MSG_NOSIGNAL);
}

static void
read_head(struct server *s)
{
	size_t	 n = 0;
	ssize_t	 r;

	while (strstr(s->req, "\r\n\r\n") == NULL) {
		r = recv(s->fd, s->req + n, sizeof(s->req) - 1 - n, 0);
		if (r <= 0)
			return;
		n += r;
		s->req[n] = '\0';
	}
}

/* The 101 (or s->status) for the key the client sent. */
static void
answer(struct server *s)
{
	char		 head[2048], acc[WS_ACCEPT_LEN + 1];
	char		 key[WS_KEY_LEN + 1];
	const char	*k;

	/* Without a good key, an Accept that cannot match. */
	if ((k = strstr(s->req, "Sec-WebSocket-Key: ")) == NULL)
		k = "Sec-WebSocket-Key: ";
	strlcpy(key, k + 19, sizeof(key));
	if (ws_accept_key(key, acc) == -1)
		strlcpy(acc, "-", sizeof(acc));
	if (s->accept == ACCEPT_WRONG)
		acc[3] = acc[3] == 'A' ? 'B' : 'A';
	snprintf(head, sizeof(head), "%s\r\n%s\r\n%s\r\n%s%s%s%s%s%s",
	    s->status != NULL ? s->status :
	    "HTTP/1.1 101 Switching Protocols",
	    s->no_upgrade != NULL ? s->no_upgrade : "Upgrade: websocket",
	    s->connection != NULL ? s->connection : "Connection: Upgrade",
	    s->accept != ACCEPT_NONE ? "Sec-WebSocket-Accept: " : "",
	    s->accept != ACCEPT_NONE ? acc : "",
	    s->accept != ACCEPT_NONE ? "\r\n" : "",
	    s->accept == ACCEPT_TWICE ? "Sec-WebSocket-Accept: " : "",
	    s->accept == ACCEPT_TWICE ? acc : "",
	    s->accept == ACCEPT_TWICE ? "\r\n" : "");
	strlcat(head, s->headers, sizeof(head));
	strlcat(head, "\r\n", sizeof(head));
	/* The head and the first frames in one write, as a server may. */
	memmove(s->frames + strlen(head), s->frames, s->frameslen);
	memcpy(s->frames, head, strlen(head));
	send_all(s->fd, s->frames, strlen(head) + s->frameslen);
}

static void *
serve(void *arg)
{
	struct server	*s = arg;
	unsigned char	 close_frame[8];
	ssize_t		 r;
	int		 closed = 0;

	read_head(s);
	answer(s);
	if (s->hang_up) {
		shutdown(s->fd, SHUT_RDWR);
		return NULL;
	}
	/* The client's frames; its close is answered with ours. */
	while ((r = recv(s->fd, s->got + s->gotlen, sizeof(s->got) -
	    s->gotlen, 0)) > 0) {
		s->gotlen += r;
		if (!closed && got_close(s)) {
			send_all(s->fd, close_frame, frame(close_frame, 1, 0x8,
			    0, "\x03\xe8", 2));
			closed = 1;
		}
	}
	return NULL;
}

/* --- the client side ----------------------------------------------------- */

struct session {
	struct server	 srv;
	struct rest_ws	 ws;
	struct rest_error err;
	unsigned char	 bin[256 * 1024];
	size_t		 binlen;
	int		 pieces;
	char		 text[WS_MAX_TEXT + 1];
	int		 texts;
	int		 close_on_text;	/* the test's way to end it */
	int		 close_first;	/* ... or at once */
	struct ws_client *wc;
};

static int
on_binary(const unsigned char *p, size_t n, void *arg)
{
	struct session	*s = arg;

	assert_true(s->binlen + n <= sizeof(s->bin));
	memcpy(s->bin + s->binlen, p, n);
	s->binlen += n;
	s->pieces++;
	return 0;
}

static int
on_text(const char *p, size_t n, void *arg)
{
	struct session	*s = arg;

	memcpy(s->text, p, n);
	s->text[n] = '\0';
	s->texts++;
	if (s->close_on_text)
		assert_int_equal(ws_client_close(s->wc), 0);
	return 0;
}

static const struct ws_handler	 handler = { on_binary, on_text };

/* The handshake with the server s->srv describes: ws_upgrade's result. */
static int
handshake(struct session *s)
{
	struct rest_client	 rc;
	struct conn		*c;
	char			 err[128];
	int			 sv[2], r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	s->srv.fd = sv[1];
	if (s->srv.headers == NULL)
		s->srv.headers = "";
	assert_int_equal(pthread_create(&s->srv.th, NULL, serve, &s->srv), 0);
	assert_int_equal(rest_client_init(&rc, "http://127.0.0.1:1", KEY, err,
	    sizeof(err)), 0);
	assert_non_null(c = conn_new(&s->err));
	c->fd = sv[0];
	c->timeout = 5;
	c->host = rc.host;
	c->port = rc.port;
	r = ws_upgrade(&rc, c, PATH, &s->ws, &s->err);
	/* Handed over on success, closed with c otherwise. */
	conn_free(c);
	rest_client_free(&rc);
	return r;
}

static void
finish(struct session *s)
{
	ws_client_free(s->wc);
	s->wc = NULL;
	rest_ws_close(&s->ws);
	shutdown(s->srv.fd, SHUT_RDWR);
	pthread_join(s->srv.th, NULL);
	close(s->srv.fd);
}

/* Runs the connection until it closes: 0, or -1 as ws_client_io. */
static int
run(struct session *s)
{
	struct pollfd	 pfd;
	int		 i;

	if (s->wc == NULL)
		assert_non_null(s->wc = ws_client_new(&s->ws, &handler, s));
	assert_int_equal(s->ws.fd, -1);
	if (ws_client_io(s->wc, 0) == -1)
		return -1;
	if (s->close_first)
		assert_int_equal(ws_client_close(s->wc), 0);
	for (i = 0; i < 500 && (pfd.events = ws_client_events(s->wc)) != 0;
	    i++) {
		pfd.fd = ws_client_fd(s->wc);
		assert_true(poll(&pfd, 1, 5000) == 1);
		if (ws_client_io(s->wc, pfd.revents) == -1)
			return -1;
	}
	assert_true(i < 500);
	return 0;
}

/* --- the handshake ------------------------------------------------------- */

static void
test_handshake(void **state)
{
	struct session	*s;
	char		*k;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	add_frame(&s->srv, 1, 0x2, 0, "hi", 2);
	assert_int_equal(handshake(s), 0);
	assert_true(s->ws.fd != -1);
	/* The frame that came with the head is the caller's. */
	assert_int_equal(s->ws.prelen, 4);
	assert_memory_equal(s->ws.pre, "\x82\x02hi", 4);
	assert_true(strncmp(s->srv.req, "GET " PATH " HTTP/1.1\r\n", 4 +
	    strlen(PATH) + 11) == 0);
	assert_non_null(strstr(s->srv.req, "\r\nUpgrade: websocket\r\n"));
	assert_non_null(strstr(s->srv.req, "\r\nConnection: Upgrade\r\n"));
	assert_non_null(strstr(s->srv.req,
	    "\r\nSec-WebSocket-Version: 13\r\n"));
	assert_non_null(strstr(s->srv.req, "\r\nAuthorization: Bearer " KEY
	    "\r\n"));
	assert_null(strstr(s->srv.req, "Connection: close"));
	assert_non_null(k = strstr(s->srv.req, "\r\nSec-WebSocket-Key: "));
	assert_true(k[21 + WS_KEY_LEN] == '\r');
	finish(s);
	free(s);
}

/* A 101 that the client must refuse, saying why. */
static void
refused(struct session *s, const char *why)
{
	assert_int_equal(handshake(s), -1);
	assert_int_equal(s->err.status, 101);
	assert_string_equal(s->err.code, "http_error");
	if (strstr(s->err.message, why) == NULL)
		fail_msg("'%s' does not say '%s'", s->err.message, why);
	assert_int_equal(s->ws.fd, -1);
	finish(s);
	memset(s, 0, sizeof(*s));
}

static void
test_handshake_refused(void **state)
{
	struct session	*s;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	s->srv.accept = ACCEPT_WRONG;
	refused(s, "Sec-WebSocket-Accept");
	s->srv.accept = ACCEPT_NONE;
	refused(s, "Sec-WebSocket-Accept");
	s->srv.accept = ACCEPT_TWICE;
	refused(s, "Sec-WebSocket-Accept");
	s->srv.no_upgrade = "Upgrade: h2c";
	refused(s, "Upgrade");
	s->srv.no_upgrade = "X-Nothing: 1";
	refused(s, "Upgrade");
	s->srv.headers = "Sec-WebSocket-Extensions: permessage-deflate\r\n";
	refused(s, "extension");
	s->srv.headers = "Sec-WebSocket-Protocol: chat\r\n";
	refused(s, "subprotocol");
	free(s);
}

static void
test_handshake_connection(void **state)
{
	struct session	*s;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	s->srv.connection = "Connection: keep-alive";
	refused(s, "Connection");
	/* A list that holds the token will do. */
	s->srv.connection = "Connection: keep-alive, UPGRADE";
	assert_int_equal(handshake(s), 0);
	finish(s);
	free(s);
}

static void
test_handshake_error(void **state)
{
	static const char	 body[] = "{\"error\":{\"code\":\"not_found\","
	    "\"message\":\"process not found\"}}";
	struct session		*s;
	char			 status[256];

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	snprintf(status, sizeof(status), "HTTP/1.1 404 Not Found\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu",
	    strlen(body));
	s->srv.status = status;
	s->srv.accept = ACCEPT_NONE;
	memcpy(s->srv.frames, body, strlen(body));
	s->srv.frameslen = strlen(body);
	assert_int_equal(handshake(s), -1);
	assert_int_equal(s->err.status, 404);
	assert_string_equal(s->err.code, "not_found");
	assert_string_equal(s->err.message, "process not found");
	finish(s);
	memset(s, 0, sizeof(*s));

	s->srv.status = "HTTP/1.1 200 OK\r\nContent-Length: 0";
	assert_int_equal(handshake(s), -1);
	assert_int_equal(s->err.status, 200);
	assert_non_null(strstr(s->err.message, "not 101"));
	finish(s);
	free(s);
}

/* --- frames -------------------------------------------------------------- */

static void
test_frames(void **state)
{
	struct session	*s;
	unsigned char	 data[WS_MAX_TEXT];
	size_t		 off = 0, n, len;
	int		 op, ops[8], nops = 0;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	/* A message in two pieces with a ping between them, then text. */
	add_frame(&s->srv, 0, 0x2, 0, "hello ", 6);
	add_frame(&s->srv, 1, 0x9, 0, "p", 1);
	add_frame(&s->srv, 1, 0x0, 0, "world", 5);
	add_frame(&s->srv, 1, 0x1, 0, EXIT_JSON, strlen(EXIT_JSON));
	s->close_first = 1;
	assert_int_equal(handshake(s), 0);
	assert_non_null(s->wc = ws_client_new(&s->ws, &handler, s));
	assert_int_equal(ws_client_send(s->wc, 0, "in", 2), 0);
	assert_int_equal(ws_client_send(s->wc, 1, "{\"type\":\"resize\"}", 17),
	    0);
	assert_int_equal(ws_client_queued(s->wc), 19);
	assert_int_equal(run(s), 0);
	assert_int_equal(s->binlen, 11);
	assert_memory_equal(s->bin, "hello world", 11);
	assert_int_equal(s->pieces, 2);
	assert_int_equal(s->texts, 1);
	assert_string_equal(s->text, EXIT_JSON);
	assert_int_equal(ws_client_close_code(s->wc), 1000);
	assert_int_equal(ws_client_send(s->wc, 0, "late", 4), -1);
	finish(s);
	/* What the server got, each frame masked: in order. */
	while ((n = client_frame(s->srv.got + off, s->srv.gotlen - off, &op,
	    data, &len)) > 0 && nops < 8) {
		if (op == 0x2)
			assert_memory_equal(data, "in", 2);
		if (op == 0x1)
			assert_memory_equal(data, "{\"type\":\"resize\"}", 17);
		if (op == 0x8)
			assert_memory_equal(data, "\x03\xe8", 2);
		ops[nops++] = op;
		off += n;
	}
	assert_int_equal(off, s->srv.gotlen);
	/* The pong first (the ping came with the head), then the data. */
	assert_int_equal(nops, 4);
	assert_int_equal(ops[0], 0xa);
	assert_int_equal(ops[1], 0x2);
	assert_int_equal(ops[2], 0x1);
	assert_int_equal(ops[3], 0x8);
	free(s);
}

static void
test_big_frame(void **state)
{
	struct session	*s;
	unsigned char	*big;
	size_t		 i;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	assert_non_null(big = malloc(100000));
	for (i = 0; i < 100000; i++)
		big[i] = (unsigned char)(i * 7);
	add_frame(&s->srv, 1, 0x2, 0, big, 100000);
	add_frame(&s->srv, 1, 0x1, 0, EXIT_JSON, strlen(EXIT_JSON));
	s->close_on_text = 1;
	assert_int_equal(handshake(s), 0);
	assert_int_equal(run(s), 0);
	assert_int_equal(s->binlen, 100000);
	assert_memory_equal(s->bin, big, 100000);
	finish(s);
	free(big);
	free(s);
}

/* A connection that must fail, saying why. */
static void
fails(struct session *s, const char *why)
{
	assert_int_equal(handshake(s), 0);
	assert_int_equal(run(s), -1);
	if (strstr(ws_client_error(s->wc), why) == NULL)
		fail_msg("'%s' does not say '%s'", ws_client_error(s->wc), why);
	finish(s);
}

static void
test_masked_frame(void **state)
{
	struct session	*s;
	unsigned char	 data[16];
	size_t		 len;
	int		 op;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	add_frame(&s->srv, 1, 0x2, 1, "sneaky", 6);
	fails(s, "breaks the WebSocket protocol");
	assert_int_equal(s->binlen, 0);
	/* The client said why: a close with 1002. */
	assert_true(client_frame(s->srv.got, s->srv.gotlen, &op, data,
	    &len) > 0);
	assert_int_equal(op, 0x8);
	assert_memory_equal(data, "\x03\xea", 2);
	free(s);
}

static void
test_bad_frames(void **state)
{
	struct session	*s;
	char		*text;

	(void)state;
	assert_non_null(s = calloc(1, sizeof(*s)));
	assert_non_null(text = malloc(WS_MAX_TEXT + 1));
	memset(text, 'a', WS_MAX_TEXT + 1);
	add_frame(&s->srv, 1, 0x1, 0, text, WS_MAX_TEXT + 1);
	fails(s, "too long");
	assert_int_equal(s->texts, 0);
	memset(s, 0, sizeof(*s));

	/* In two frames, each short enough. */
	add_frame(&s->srv, 0, 0x1, 0, text, WS_MAX_TEXT);
	add_frame(&s->srv, 1, 0x0, 0, text, 1);
	fails(s, "too long");
	memset(s, 0, sizeof(*s));

	/* Text that is not UTF-8; a reserved bit; an unknown opcode. */
	add_frame(&s->srv, 1, 0x1, 0, "\xff", 1);
	fails(s, "breaks");
	memset(s, 0, sizeof(*s));
	add_frame(&s->srv, 1, 0x2, 0, "x", 1);
	s->srv.frames[0] |= 0x40;
	fails(s, "breaks");
	memset(s, 0, sizeof(*s));
	add_frame(&s->srv, 1, 0x3, 0, "x", 1);
	fails(s, "breaks");
	memset(s, 0, sizeof(*s));

	/* The server goes away without a close. */
	add_frame(&s->srv, 1, 0x2, 0, "bye", 3);
	s->srv.hang_up = 1;
	fails(s, "closed the connection");
	assert_int_equal(s->binlen, 3);
	free(text);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_handshake_refused),
		cmocka_unit_test(test_handshake_connection),
		cmocka_unit_test(test_handshake_error),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_big_frame),
		cmocka_unit_test(test_masked_frame),
		cmocka_unit_test(test_bad_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
