/*
 * Tests for .../attach (docs/rest-api.md "Processes"): the WebSocket
 * handshake and its refusals (RFC 6455 §4.2), keys and attach tokens,
 * and the attachment itself over apid's real HTTP layer on a
 * socketpair, the test as both the WebSocket client (frames written
 * and read by hand, so that the client side trusts nothing of wslay)
 * and managerd (apid_standin.c): output as binary frames, the exit
 * frame and close, stdin through one pipe, resizes one at a time,
 * refused frames (unmasked, too large, too many fragments, bad text),
 * pings, an idle attachment, backpressure, a client that vanishes, and
 * lies.
 */
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "apid.h"
#include "apid_standin.h"
#include "assert_fatal.h"
#include "http_fixture.h"

/* Who asked for the tests' tokens. */
static char			 tok_name[] = "key-1", tok_tenant[] = "t";
static const struct caller	 tok_caller = { tok_name, tok_tenant, 0,
				    NULL, NULL };

#define SB		"sb_0123456789abcdef"
#define PROC		"proc_0123456789abcdef"
#define ATTACH		"/v1/sandboxes/" SB "/processes/" PROC "/attach"
#define KEY		"dGhlIHNhbXBsZSBub25jZQ=="	/* RFC 6455 §1.3 */
#define ACCEPT		"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static struct apid	 the_apid;
struct apid		*apid = &the_apid;
static char		 api_key[] = "the-key";
static char		*api_keys[] = { api_key, NULL };

static const struct standin_route routes[] = {
	{ "GET", "/v1/sandboxes/*/processes/*/attach", route_process_attach },
};

static struct http_fixture	 fx;
static struct http_response	 resp;
static int			 out_fd;	/* managerd's end of output */
static int			 shaken;	/* a handshake was sent */

static void
router(struct http_request *req)
{
	/* As http.c routes it: its body is its own. */
	standin_route_stream(req, routes, 1);
}

static int
setup(void **state)
{
	signal(SIGPIPE, SIG_IGN);
	standin_reset();
	fixture_init(&fx, router, NULL);
	apid->base = fx.base;
	apid->parent.name = "managerd";
	apid->api_keys = api_keys;
	apid->api_keys_count = 1;
	memset(&resp, 0, sizeof(resp));
	out_fd = -1;
	shaken = 0;
	return 0;
}

static int
teardown(void **state)
{
	response_free(&resp);
	/* The client goes first: an attachment ends on its EOF. */
	if (fx.client != -1)
		close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 5);
	if (out_fd != -1)
		close(out_fd);
	standin_reset();
	fixture_free(&fx);
	attach_tokens_clear();
	return 0;
}

/*
 * The handshake, with extra fields (each ending in \r\n) or defaults,
 * each on a connection of its own: after any answer but the 101 the
 * server closes.
 */
static void
handshake(const char *target, const char *fields)
{
	char	 head[2048];

	if (shaken) {
		if (fx.client != -1)
			close(fx.client);
		fx.client = fixture_connect(&fx);
		fx.inlen = 0;
		fx.eof = 0;
	}
	shaken = 1;

	snprintf(head, sizeof(head), "GET %s HTTP/1.1\r\nHost: t\r\n%s\r\n",
	    target, fields != NULL ? fields : "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Key: " KEY "\r\n"
	    "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer the-key\r\n");
	fixture_send_str(&fx, head);
	fixture_run(&fx, 5);
}

static void
answer_is(int status)
{
	assert_int_equal(fixture_response(&fx, &resp, 2000), 0);
	assert_int_equal(resp.status, status);
}

static struct standin_call *
sent(uint32_t type)
{
	struct standin_call	*c = standin_find(type);

	if (c == NULL)
		fail_msg("no %s sent", msg_type_name(type));
	return c;
}

/* Up to the 101: managerd's STARTED, the pipe's write end ours. */
static void
attach_open(void)
{
	struct process_output	 o;
	struct standin_call	*c;
	struct imsg		 m;

	handshake(ATTACH, NULL);
	c = sent(MSG_PROCESS_OUTPUT);
	m = standin_imsg(c);
	assert_int_equal(msg_get_process_output(&m, &o), 0);
	assert_true(o.after == 0);
	assert_true(o.follow);
	assert_string_equal(o.ref.process_id, PROC);
	process_ref_free(&o.ref);
	out_fd = standin_take_fd(c);
	assert_int_equal(standin_reply(c, MSG_PROCESS_OUTPUT_STARTED, NULL,
	    -1), APID_REPLY_DONE);
	answer_is(101);
	assert_string_equal(response_field(&resp, "upgrade"), "websocket");
	assert_string_equal(response_field(&resp, "connection"), "Upgrade");
	assert_string_equal(response_field(&resp, "sec-websocket-accept"),
	    ACCEPT);
	assert_int_equal(fx.srv.taken, 1);
}

/* --- the client's frames -------------------------------------------------- */

static void
send_frame(int fin, int opcode, const void *data, size_t len, int masked)
{
	static const unsigned char	 key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	unsigned char			 hdr[14], *p;
	size_t				 h = 0, i;

	hdr[h++] = (unsigned char)((fin ? 0x80 : 0) | opcode);
	if (len < 126)
		hdr[h++] = (unsigned char)((masked ? 0x80 : 0) | len);
	else if (len < 65536) {
		hdr[h++] = (unsigned char)((masked ? 0x80 : 0) | 126);
		hdr[h++] = (unsigned char)(len >> 8);
		hdr[h++] = (unsigned char)len;
	} else {
		hdr[h++] = (unsigned char)((masked ? 0x80 : 0) | 127);
		for (i = 0; i < 8; i++)
			hdr[h++] = (unsigned char)((uint64_t)len >>
			    (56 - 8 * i));
	}
	if (masked) {
		memcpy(hdr + h, key, 4);
		h += 4;
	}
	assert_non_null(p = malloc(len + 1));
	for (i = 0; i < len; i++)
		p[i] = ((const unsigned char *)data)[i] ^
		    (masked ? key[i % 4] : 0);
	fixture_send(&fx, hdr, h);
	fixture_send(&fx, p, len);
	free(p);
	fixture_run(&fx, 5);
}

static void
send_binary(const char *s)
{
	send_frame(1, 2, s, strlen(s), 1);
}

static void
send_text(const char *s)
{
	send_frame(1, 1, s, strlen(s), 1);
}

/* --- the server's frames -------------------------------------------------- */

struct frame {
	int		 fin;
	int		 opcode;
	unsigned char	 data[70000];
	size_t		 len;
};

/* One whole frame from what came, if there is one: 1, else 0. */
static int
frame_parse(struct frame *f)
{
	const unsigned char	*p = (const unsigned char *)fx.in;
	size_t			 h = 2, i;
	uint64_t		 len;

	if (fx.inlen < 2)
		return 0;
	assert_int_equal(p[1] & 0x80, 0);	/* a server never masks */
	len = p[1] & 0x7f;
	if (len == 126) {
		if (fx.inlen < 4)
			return 0;
		len = (uint64_t)p[2] << 8 | p[3];
		h = 4;
	} else if (len == 127) {
		if (fx.inlen < 10)
			return 0;
		for (len = 0, i = 0; i < 8; i++)
			len = len << 8 | p[2 + i];
		h = 10;
	}
	assert_true(len <= sizeof(f->data));
	if (fx.inlen < h + len)
		return 0;
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	f->len = (size_t)len;
	memcpy(f->data, p + h, f->len);
	memmove(fx.in, fx.in + h + len, fx.inlen - h - len);
	fx.inlen -= h + len;
	return 1;
}

static struct frame	 fr;

/* The next frame, within two seconds. */
static struct frame *
next_frame(void)
{
	int	 i;

	for (i = 0; i < 2000; i++) {
		if (frame_parse(&fr))
			return &fr;
		fixture_run(&fx, 1);
	}
	fail_msg("no frame came");
	return NULL;
}

static void
expect_frame(int opcode, const char *data)
{
	struct frame	*f = next_frame();

	assert_int_equal(f->opcode, opcode);
	assert_true(f->fin);
	if (f->len != strlen(data) || memcmp(f->data, data, f->len) != 0)
		fail_msg("frame %.*s, want %s", (int)f->len, f->data, data);
}

/* A close frame with this code; then the server closes the socket. */
static void
expect_close(int code)
{
	struct frame	*f = next_frame();

	assert_int_equal(f->opcode, 8);
	assert_true(f->len >= 2);
	assert_int_equal(f->data[0] << 8 | f->data[1], code);
}

static void
expect_gone(void)
{
	assert_true(fixture_closed(&fx, 7000));
	fixture_run(&fx, 5);
	assert_int_equal(fx.srv.taken, 0);
}

/* The client answers a close, as RFC 6455 §5.5.1 asks. */
static void
close_back(void)
{
	unsigned char	 code[2] = { 0x03, 0xe8 };

	send_frame(1, 8, code, 2, 1);
}

/* Nothing came: no frame in what was read. */
static void
expect_quiet(int ms)
{
	fixture_run(&fx, ms);
	assert_int_equal(fx.inlen, 0);
	assert_false(fx.eof);
}

/* --- managerd's end of the output ----------------------------------------- */

static void
out_data(uint64_t seq, const char *s)
{
	unsigned char	 h[PEV_HEADER_LEN];
	size_t		 len = strlen(s);

	pev_header(h, PEV_STDOUT, (uint32_t)len, seq);
	assert_int_equal(write(out_fd, h, sizeof(h)), (ssize_t)sizeof(h));
	assert_int_equal(write(out_fd, s, len), (ssize_t)len);
}

static void
out_exit(uint64_t seq, enum process_status st, int has_code, int64_t code)
{
	unsigned char	 b[PEV_HEADER_LEN + PEV_EXIT_LEN];
	struct pev_exit	 x = { st, has_code, code, 1764625202000ULL };
	size_t		 n;

	n = pev_exit_event(b, seq, &x);
	assert_int_equal(write(out_fd, b, n), (ssize_t)n);
}

/* --- the tests ------------------------------------------------------------ */

static void
refused(const char *fields, int status, const char *field,
    const char *value)
{
	handshake(ATTACH, fields);
	answer_is(status);
	assert_non_null(strstr(resp.body, "\"error\""));
	if (field != NULL)
		assert_string_equal(response_field(&resp, field), value);
}

static void
test_handshake_refused(void **state)
{
	refused("Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n",
	    401, "www-authenticate", "Bearer");
	refused("Authorization: Bearer the-key\r\n", 426, "upgrade",
	    "websocket");
	refused("Authorization: Bearer the-key\r\nUpgrade: h2c\r\n"
	    "Connection: Upgrade\r\n", 426, "upgrade", "websocket");
	refused("Authorization: Bearer the-key\r\nUpgrade: websocket\r\n"
	    "Connection: keep-alive\r\nSec-WebSocket-Key: " KEY "\r\n"
	    "Sec-WebSocket-Version: 13\r\n", 400, NULL, NULL);
	refused("Authorization: Bearer the-key\r\nUpgrade: WebSocket\r\n"
	    "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: " KEY
	    "\r\nSec-WebSocket-Version: 8\r\n", 426, "sec-websocket-version",
	    "13");
	refused("Authorization: Bearer the-key\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Key: c2hvcnQ=\r\n"
	    "Sec-WebSocket-Version: 13\r\n", 400, NULL, NULL);
	refused("Authorization: Bearer the-key\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n", 400, NULL,
	    NULL);
	assert_int_equal(standin_count(), 0);
	/* An unknown process is managerd's 404, before any upgrade. */
	handshake(ATTACH, NULL);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_NOT_FOUND,
	    "process " PROC " not found");
	answer_is(404);
	assert_int_equal(fx.srv.taken, 0);
}

/*
 * A client may send frames right after its handshake: refused (here,
 * or by managerd), the connection closes rather than read them as the
 * next request.
 */
static void
test_refusal_closes(void **state)
{
	static const char	 frame[] = "\x82\x83\x37\xfa\x21\x3dls\n";

	handshake(ATTACH, "Authorization: Bearer the-key\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 8\r\n");
	fixture_send(&fx, frame, sizeof(frame) - 1);
	answer_is(426);
	assert_true(fixture_closed(&fx, 2000));
	assert_int_equal(fx.inlen, 0);
	handshake(ATTACH, NULL);
	fixture_send(&fx, frame, sizeof(frame) - 1);
	fixture_run(&fx, 5);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_NOT_FOUND,
	    "process " PROC " not found");
	answer_is(404);
	assert_string_equal(response_field(&resp, "connection"), "close");
	assert_true(fixture_closed(&fx, 2000));
	assert_int_equal(fx.inlen, 0);
}

/* A body is refused before any of it is read, and before any key. */
static void
test_body_refused(void **state)
{
	handshake(ATTACH, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n"
	    "Content-Length: 1048576\r\n");
	answer_is(400);
	assert_non_null(strstr(resp.body, "has no body"));
	/* Not read: the connection closes. */
	assert_true(fixture_closed(&fx, 2000));
	handshake(ATTACH, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n"
	    "Authorization: Bearer the-key\r\n"
	    "Transfer-Encoding: chunked\r\n");
	answer_is(400);
	assert_int_equal(standin_count(), 0);
}

#define UPGRADE_FIELDS	"Upgrade: websocket\r\nConnection: Upgrade\r\n" \
	"Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n"

static void
test_token(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], target[256];

	assert_int_equal(attach_token_make(&tok_caller,
	    SB, "proc_other", tok), 0);
	snprintf(target, sizeof(target), ATTACH "?token=%s", tok);
	handshake(target, UPGRADE_FIELDS);
	answer_is(401);
	assert_non_null(strstr(resp.body, "invalid or expired attach token"));
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	snprintf(target, sizeof(target), ATTACH "?token=%s", tok);
	handshake(target, UPGRADE_FIELDS);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_NOT_FOUND, "gone");
	answer_is(404);
	/* Used up by that first attach. */
	handshake(target, UPGRADE_FIELDS);
	answer_is(401);
	assert_int_equal(standin_count(), 1);
}

/* A key header present decides: a wrong one with a good token is 401. */
static void
test_wrong_key_with_token(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], target[256];

	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	snprintf(target, sizeof(target), ATTACH "?token=%s", tok);
	handshake(target, UPGRADE_FIELDS "Authorization: Bearer not-the-key"
	    "\r\n");
	answer_is(401);
	assert_non_null(strstr(resp.body, "invalid API key"));
	handshake(target, UPGRADE_FIELDS "X-API-Key: not-the-key\r\n");
	answer_is(401);
	assert_int_equal(standin_count(), 0);
	/* The token alone still opens it. */
	handshake(target, UPGRADE_FIELDS);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_NOT_FOUND, "gone");
	answer_is(404);
}

/*
 * A token of another length is refused, also one whose first bytes are
 * a good token's (attach_token_take refuses it by its length before any
 * comparison: against a full table a long one would cost its length
 * times the tokens).  Its cost is not measured here: no timed asserts.
 */
static void
test_token_length(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], other[ATTACH_TOKEN_LEN + 1];
	char	*big;
	size_t	 len = 1 << 20;

	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	standin_fill_tokens(SB, PROC, ATTACH_TOKENS_MAX - 1);
	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, other), -1);
	assert_non_null(big = malloc(len));
	memset(big, 'A', len);
	memcpy(big, tok, ATTACH_TOKEN_LEN);
	assert_false(attach_token_take(SB, PROC, big, len, NULL));
	assert_false(attach_token_take(SB,
	    PROC, big, ATTACH_TOKEN_LEN + 1, NULL));
	assert_false(attach_token_take(SB,
	    PROC, big, ATTACH_TOKEN_LEN - 1, NULL));
	assert_true(attach_token_take(SB, PROC, big, ATTACH_TOKEN_LEN, NULL));
	free(big);
}

/* A handshake refused (426, 400) leaves the token good. */
static void
test_token_kept_by_refusal(void **state)
{
	char	 tok[ATTACH_TOKEN_LEN + 1], target[256];

	assert_int_equal(attach_token_make(&tok_caller, SB, PROC, tok), 0);
	snprintf(target, sizeof(target), ATTACH "?token=%s", tok);
	handshake(target, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 8\r\n");
	answer_is(426);
	handshake(target, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\n");
	answer_is(400);
	handshake(target, UPGRADE_FIELDS);
	standin_reply_error(sent(MSG_PROCESS_OUTPUT), ERR_NOT_FOUND, "gone");
	answer_is(404);
}

static void
test_output_frames(void **state)
{
	unsigned char	 h[PEV_HEADER_LEN];

	attach_open();
	out_data(6, "hello\n");
	expect_frame(2, "hello\n");
	pev_header(h, PEV_GAP, 0, 1000);
	assert_int_equal(write(out_fd, h, sizeof(h)), (ssize_t)sizeof(h));
	out_data(1010, "\377\033[1m");
	expect_frame(2, "\377\033[1m");
	out_exit(1010, PROCESS_EXITED, 1, 0);
	close(out_fd);
	out_fd = -1;
	expect_frame(1, "{\"type\": \"exit\", \"status\": \"exited\", "
	    "\"exit_code\": 0}");
	expect_close(1000);
	close_back();
	expect_gone();
}

/* The client closes first: the server answers and closes; runs on. */
static void
test_client_closes(void **state)
{
	attach_open();
	close_back();
	expect_close(1000);
	expect_gone();
	assert_int_equal(write(out_fd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
}

static void
test_exit_killed(void **state)
{
	attach_open();
	out_exit(0, PROCESS_KILLED, 0, 0);
	expect_frame(1, "{\"type\": \"exit\", \"status\": \"killed\", "
	    "\"exit_code\": null}");
	expect_close(1000);
	/* A client that does not answer the close is closed after a while. */
	expect_gone();
}

static void
read_is(int fd, const char *want)
{
	char	 buf[256];
	size_t	 got = 0, len = strlen(want);
	ssize_t	 n;
	int	 i;

	for (i = 0; i < 1000 && got < len; i++) {
		fixture_run(&fx, 1);
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n > 0)
			got += (size_t)n;
	}
	assert_int_equal(got, len);
	assert_memory_equal(buf, want, len);
}

static void
test_stdin(void **state)
{
	struct process_stdin	 s;
	struct standin_call	*c;
	struct imsg		 m;
	char			 buf[8];
	int			 fd;

	attach_open();
	send_binary("ls\n");
	c = sent(MSG_PROCESS_STDIN);
	m = standin_imsg(c);
	assert_int_equal(msg_get_process_stdin(&m, &s), 0);
	assert_false(s.close_at_end);
	assert_string_equal(s.ref.sandbox_id, SB);
	process_ref_free(&s.ref);
	fd = standin_take_fd(c);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	read_is(fd, "ls\n");
	/* The same pipe for what follows; a fragmented message whole. */
	send_binary("pwd\n");
	send_frame(0, 2, "ab", 2, 1);
	send_frame(0, 0, "c", 1, 1);
	send_frame(1, 0, "d\n", 2, 1);
	read_is(fd, "pwd\nabcd\n");
	assert_int_equal(standin_count(), 2);
	/* The client goes: the pipe ends, managerd answers OK. */
	close_back();
	expect_close(1000);
	expect_gone();
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
}

/* fd, non-blocking, read to its end with the loop run: its bytes. */
static size_t
drain_fd(int fd)
{
	char	 buf[65536];
	size_t	 got = 0;
	ssize_t	 n;
	int	 i;

	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 5000; i++) {
		fixture_run(&fx, 1);
		if ((n = read(fd, buf, sizeof(buf))) == 0)
			return got;
		if (n > 0)
			got += (size_t)n;
	}
	fail_msg("the pipe did not end");
	return got;
}

/*
 * More stdin than the pipe holds, then the client goes (a close frame,
 * or just its end of file): what it sent still goes in whole before the
 * pipe's end, and until then the pipe holds the socket's place under
 * the connection cap.
 */
static void
stdin_then_gone(int close_frame)
{
	struct standin_call	*c;
	char			*big;
	int			 fd;

	assert_non_null(big = malloc(60000));
	memset(big, 'q', 60000);
	attach_open();
	send_frame(1, 2, big, 60000, 1);
	c = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(c);
	send_frame(1, 2, big, 60000, 1);
	if (close_frame) {
		close_back();
		expect_close(1000);
		assert_true(fixture_closed(&fx, 2000));
	} else {
		close(fx.client);
		fx.client = -1;
		fixture_run(&fx, 20);
	}
	assert_int_equal(fx.srv.taken, 1);
	assert_int_equal(drain_fd(fd), 120000);
	close(fd);
	assert_int_equal(fx.srv.taken, 0);
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
	free(big);
}

static void
test_stdin_flushed_at_close(void **state)
{
	stdin_then_gone(1);
}

static void
test_stdin_flushed_at_eof(void **state)
{
	stdin_then_gone(0);
}

static void	resize_is(struct standin_call *, uint32_t, uint32_t);

static void
stdin_call_is(struct standin_call *c, int close_at_end)
{
	struct process_stdin	 s;
	struct imsg		 m = standin_imsg(c);

	assert_int_equal(msg_get_process_stdin(&m, &s), 0);
	assert_int_equal(s.close_at_end, close_at_end);
	assert_string_equal(s.ref.process_id, PROC);
	process_ref_free(&s.ref);
}

#define STDIN_CLOSE	"{\"type\": \"stdin_close\"}"
#define STDIN_CLOSED	"{\"type\": \"error\", \"message\": " \
	"\"stdin is closed\"}"

/*
 * stdin_close: every byte sent before it goes in (the pipe finished,
 * managerd's answer awaited), then an empty pipe with close_at_end.
 * Binary frames after it are refused; a second stdin_close is nothing.
 */
static void
test_stdin_close(void **state)
{
	struct standin_call	*c, *e;
	char			*big;
	int			 fd;

	assert_non_null(big = malloc(60000));
	memset(big, 's', 60000);
	attach_open();
	send_frame(1, 2, big, 60000, 1);
	c = sent(MSG_PROCESS_STDIN);
	stdin_call_is(c, 0);
	fd = standin_take_fd(c);
	send_frame(1, 2, big, 60000, 1);
	send_text(STDIN_CLOSE);
	send_binary("late");
	/* The frame after it waits while the pipe is full. */
	assert_int_equal(drain_fd(fd), 120000);
	close(fd);
	expect_frame(1, STDIN_CLOSED);
	send_text("{\"type\":\"stdin_close\"}");
	expect_quiet(20);
	/* Not before managerd says the bytes are in. */
	assert_int_equal(standin_count(), 2);
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
	assert_int_equal(standin_count(), 3);
	e = sent(MSG_PROCESS_STDIN);
	stdin_call_is(e, 1);
	fd = standin_take_fd(e);
	assert_int_equal(drain_fd(fd), 0);	/* empty, ended */
	close(fd);
	standin_reply(e, MSG_OK, NULL, -1);
	expect_quiet(20);
	send_binary("later");
	expect_frame(1, STDIN_CLOSED);
	assert_int_equal(standin_count(), 3);
	/* A resize still goes. */
	send_text("{\"type\": \"resize\", \"cols\": 80, \"rows\": 24}");
	resize_is(sent(MSG_PROCESS_RESIZE), 80, 24);
	standin_reply(sent(MSG_PROCESS_RESIZE), MSG_OK, NULL, -1);
	free(big);
}

/* No stdin pipe yet: only the close; managerd may refuse it. */
static void
test_stdin_close_only(void **state)
{
	struct standin_call	*e;

	attach_open();
	send_text(STDIN_CLOSE);
	e = sent(MSG_PROCESS_STDIN);
	stdin_call_is(e, 1);
	assert_int_equal(drain_fd(standin_take_fd(e)), 0);
	assert_int_equal(standin_count(), 2);
	standin_reply_error(e, ERR_CONFLICT, "the process has no stdin");
	expect_frame(1, "{\"type\": \"error\", \"message\": \"the process has "
	    "no stdin\"}");
	send_binary("x");
	expect_frame(1, STDIN_CLOSED);
	assert_int_equal(standin_count(), 2);
}

/* The client leaves right after stdin_close: the close still goes. */
static void
test_stdin_close_then_gone(void **state)
{
	struct standin_call	*c, *e;
	int			 fd;

	attach_open();
	send_binary("x");
	c = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(c);
	send_text(STDIN_CLOSE);
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 20);
	assert_int_equal(fx.srv.taken, 0);
	assert_int_equal(drain_fd(fd), 1);
	close(fd);
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
	e = sent(MSG_PROCESS_STDIN);
	stdin_call_is(e, 1);
	close(standin_take_fd(e));
	assert_int_equal(standin_reply(e, MSG_OK, NULL, -1), APID_REPLY_DONE);
	assert_int_equal(standin_count(), 3);
}

static size_t
heap_in_use(void)
{
	return mallinfo2().uordblks;
}

/*
 * An ended attachment whose stdin call managerd has not answered (it
 * may never) keeps only what that answer needs: not its 32 KiB event
 * parser, nor the socket's buffers.
 */
static void
test_ended_keeps_little(void **state)
{
	struct standin_call	*c;
	size_t			 held, after;

	attach_open();
	send_binary("a");
	c = sent(MSG_PROCESS_STDIN);
	close(standin_take_fd(c));
	close_back();
	expect_close(1000);
	expect_gone();
	held = heap_in_use();
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
	after = heap_in_use();
	assert_true(held >= after);
	if (held - after >= 4096)
		fail_msg("an ended attachment holds %zu bytes", held - after);
}

static void
test_stdin_refused(void **state)
{
	struct standin_call	*c;

	attach_open();
	send_binary("x");
	c = sent(MSG_PROCESS_STDIN);
	standin_reply_error(c, ERR_CONFLICT, "the process has no stdin");
	expect_frame(1, "{\"type\": \"error\", \"message\": \"the process has "
	    "no stdin\"}");
	send_binary("y");
	expect_quiet(20);
	assert_int_equal(standin_count(), 2);
}

static void
resize_is(struct standin_call *c, uint32_t cols, uint32_t rows)
{
	struct process_resize	 r;
	struct imsg		 m = standin_imsg(c);

	assert_int_equal(msg_get_process_resize(&m, &r), 0);
	assert_int_equal(r.cols, cols);
	assert_int_equal(r.rows, rows);
	assert_string_equal(r.ref.process_id, PROC);
	process_ref_free(&r.ref);
}

static void
test_resize(void **state)
{
	struct standin_call	*c;

	attach_open();
	send_text("{\"type\": \"resize\", \"cols\": 100, \"rows\": 30}");
	c = sent(MSG_PROCESS_RESIZE);
	resize_is(c, 100, 30);
	/* One at a time: the newest waits for the answer. */
	send_text("{\"rows\": 20, \"type\": \"resize\", \"cols\": 90}");
	send_text("{\"type\": \"resize\", \"cols\": 80, \"rows\": 24}");
	assert_int_equal(standin_count(), 2);
	standin_reply(c, MSG_OK, NULL, -1);
	assert_int_equal(standin_count(), 3);
	c = sent(MSG_PROCESS_RESIZE);
	resize_is(c, 80, 24);
	standin_reply_error(c, ERR_CONFLICT, "the process has no tty");
	expect_frame(1, "{\"type\": \"error\", \"message\": \"the process has "
	    "no tty\"}");
	assert_null(standin_find(MSG_PROCESS_RESIZE));
}

/* Text that is no resize closes the WebSocket, code by the kind. */
static void
bad_text_len(const void *msg, size_t len, int code)
{
	setup(NULL);
	attach_open();
	send_frame(1, 1, msg, len, 1);
	expect_close(code);
	/* Failing the connection (wslay's 1007) does not wait for ours. */
	if (!fixture_closed(&fx, 20))
		close_back();
	expect_gone();
	assert_int_equal(standin_count(), 1);
	teardown(NULL);
}

static void
bad_text(const char *msg, int code)
{
	bad_text_len(msg, strlen(msg), code);
}

static void
test_bad_text(void **state)
{
	bad_text("hello", 1007);
	bad_text("[1]", 1007);
	bad_text("{\"type\": 1}", 1007);
	bad_text("{\"type\": \"paste\", \"data\": \"x\"}", 1003);
	bad_text("{\"type\": \"resize\", \"cols\": 0, \"rows\": 1}", 1007);
	bad_text("{\"type\": \"resize\", \"cols\": 10, \"rows\": 1001}", 1007);
	bad_text("{\"type\": \"resize\", \"cols\": 10.5, \"rows\": 10}", 1007);
	bad_text("{\"type\": \"resize\", \"cols\": 1, \"rows\": 1, "
	    "\"x\": 1}", 1007);
	bad_text("{\"type\": \"resize\", \"cols\": 1}", 1007);
	bad_text("{\"type\": \"stdin_close\", \"now\": true}", 1007);
	bad_text("{\"type\": \"stdin_closed\"}", 1003);
	/* Not UTF-8: wslay's own check. */
	bad_text("\"\377\"", 1007);
}

/* RFC 6455 §5.1: a client's frames are masked, or the server closes. */
static void
test_unmasked(void **state)
{
	attach_open();
	send_frame(1, 2, "ls\n", 3, 0);
	expect_close(1002);
	expect_gone();
	assert_null(standin_find(MSG_PROCESS_STDIN));
}

static void
test_too_large(void **state)
{
	struct standin_call	*c;
	char			*big;

	assert_non_null(big = malloc(ATTACH_MSG_MAX + 1));
	memset(big, 'z', ATTACH_MSG_MAX + 1);
	attach_open();
	send_frame(1, 2, big, ATTACH_MSG_MAX, 1);
	c = sent(MSG_PROCESS_STDIN);
	/* Fragments count together. */
	send_frame(0, 2, big, ATTACH_MSG_MAX / 2, 1);
	send_frame(1, 0, big, ATTACH_MSG_MAX / 2 + 1, 1);
	expect_close(1009);
	expect_gone();
	free(big);
	close(standin_take_fd(c));
	standin_reply(c, MSG_OK, NULL, -1);
}

/* n frames of one byte in one write: a first, then continuations. */
static void
send_fragments(int n, int fin_last)
{
	static const unsigned char	 frame[7] = {
		0x00, 0x81, 0x37, 0xfa, 0x21, 0x3d, 'x' ^ 0x37
	};
	unsigned char			*b;
	int				 i;

	assert_non_null(b = malloc((size_t)n * sizeof(frame)));
	for (i = 0; i < n; i++) {
		memcpy(b + i * sizeof(frame), frame, sizeof(frame));
		b[i * sizeof(frame)] = (unsigned char)((i == 0 ? 2 : 0) |
		    (i == n - 1 && fin_last ? 0x80 : 0));
	}
	fixture_send(&fx, b, (size_t)n * sizeof(frame));
	free(b);
	fixture_run(&fx, 5);
}

/* A message's frames are few: tiny fragments cost wslay far more. */
static void
test_too_many_fragments(void **state)
{
	struct standin_call	*c;
	char			 buf[ATTACH_MSG_FRAMES + 1];
	int			 fd;

	attach_open();
	send_fragments(ATTACH_MSG_FRAMES, 1);
	c = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(c);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	memset(buf, 'x', sizeof(buf));
	buf[ATTACH_MSG_FRAMES] = '\0';
	read_is(fd, buf);
	send_fragments(ATTACH_MSG_FRAMES + 1, 0);
	expect_close(1009);
	expect_gone();
	close(fd);
	standin_reply(c, MSG_OK, NULL, -1);
}

/*
 * RFC 6455 §5.5, §7.1.7: a control frame over 125 bytes, or one in
 * fragments, fails the connection, with close 1002 sent first.
 */
static void
bad_control(int fin, int opcode, size_t len)
{
	char	 data[200];

	setup(NULL);
	memset(data, 'p', sizeof(data));
	attach_open();
	send_frame(fin, opcode, data, len, 1);
	expect_close(1002);
	expect_gone();
	teardown(NULL);
}

static void
test_bad_control(void **state)
{
	bad_control(1, 9, 126);
	bad_control(0, 9, 4);
	bad_control(1, 10, 200);
	bad_control(0, 8, 2);
}

static void
test_ping(void **state)
{
	attach_open();
	send_frame(1, 9, "are you there", 13, 1);
	expect_frame(10, "are you there");
}

/* Past the HTTP idle timeout (1 s here), an attachment stays. */
static void
test_idle(void **state)
{
	attach_open();
	expect_quiet(1500);
	out_data(1, "x");
	expect_frame(2, "x");
}

/* The client vanishes without a close: both pipes are closed. */
static void
test_client_vanishes(void **state)
{
	struct standin_call	*c;
	char			 buf[8];
	int			 fd;

	attach_open();
	send_binary("a");
	c = sent(MSG_PROCESS_STDIN);
	fd = standin_take_fd(c);
	close(fx.client);
	fx.client = -1;
	fixture_run(&fx, 20);
	assert_int_equal(fx.srv.taken, 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 1);
	assert_int_equal(read(fd, buf, sizeof(buf)), 0);
	close(fd);
	assert_int_equal(write(out_fd, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	/* managerd's answer comes after: it frees the attachment. */
	assert_int_equal(standin_reply(c, MSG_OK, NULL, -1), APID_REPLY_DONE);
}

static void
test_stream_malformed(void **state)
{
	unsigned char	 h[PEV_HEADER_LEN];

	attach_open();
	pev_header(h, PEV_STDOUT, 0, 0);
	assert_int_equal(write(out_fd, h, sizeof(h)), (ssize_t)sizeof(h));
	expect_close(1011);
	close_back();
	expect_gone();
}

static void
test_stream_cut(void **state)
{
	attach_open();
	out_data(3, "abc");
	expect_frame(2, "abc");
	close(out_fd);
	out_fd = -1;
	expect_close(1011);
	close_back();
	expect_gone();
}

/*
 * A client that does not read: apid stops reading the pipe once its
 * buffer for the client is full, and the pipe fills (managerd's ring
 * would take over from there).
 */
static void
test_backpressure(void **state)
{
	static char	 chunk[PEV_DATA_MAX];
	unsigned char	 h[PEV_HEADER_LEN];
	uint64_t	 seq = 0, total = 0;
	int		 i, stalled = 0;

	attach_open();
	assert_int_equal(fcntl(out_fd, F_SETFL, O_NONBLOCK), 0);
	memset(chunk, 'o', sizeof(chunk));
	for (i = 0; i < 1000 && stalled < 50; i++) {
		seq += sizeof(chunk);
		pev_header(h, PEV_STDOUT, sizeof(chunk), seq);
		if (write(out_fd, h, sizeof(h)) != (ssize_t)sizeof(h) ||
		    write(out_fd, chunk, sizeof(chunk)) !=
		    (ssize_t)sizeof(chunk)) {
			stalled++;
			seq -= sizeof(chunk);
			event_base_loop(fx.base, EVLOOP_NONBLOCK);
			continue;
		}
		total += sizeof(chunk) + sizeof(h);
		event_base_loop(fx.base, EVLOOP_NONBLOCK);
	}
	/* The pipe, our buffer, the socketpair: a few MiB at most. */
	assert_true(stalled >= 50);
	assert_true(total < 16 * 1024 * 1024);
}

/* --- lies ----------------------------------------------------------------- */

static void
lie_stdin_ok_early(void)
{
	setup(NULL);
	attach_open();
	send_binary("a");
	/* Its pipe is still open: managerd cannot have read its end. */
	standin_reply(sent(MSG_PROCESS_STDIN), MSG_OK, NULL, -1);
}

static void
lie_stdin_ok_broken(void)
{
	static char		 big[60000];
	struct standin_call	*c;

	setup(NULL);
	memset(big, 'b', sizeof(big));
	attach_open();
	send_frame(1, 2, big, 60000, 1);
	send_frame(1, 2, big, 60000, 1);
	c = sent(MSG_PROCESS_STDIN);
	/* managerd's end closed before all was in: no EOF read. */
	close(standin_take_fd(c));
	fixture_run(&fx, 20);
	standin_reply(c, MSG_OK, NULL, -1);
}

static void
lie_resize_reply(void)
{
	setup(NULL);
	attach_open();
	send_text("{\"type\": \"resize\", \"cols\": 1, \"rows\": 1}");
	standin_reply(sent(MSG_PROCESS_RESIZE), MSG_PROCESS_LIST_END, NULL,
	    -1);
}

static void
lie_started_payload(void)
{
	struct msgw	 w;

	setup(NULL);
	handshake(ATTACH, NULL);
	msgw_init(&w);
	msgw_u32(&w, 1);
	standin_reply(sent(MSG_PROCESS_OUTPUT), MSG_PROCESS_OUTPUT_STARTED, &w,
	    -1);
}

static void
lie_bad_error(void)
{
	struct msgw	 w;

	setup(NULL);
	attach_open();
	send_binary("a");
	msgw_init(&w);
	msgw_u32(&w, 99);
	msgw_str(&w, "x");
	standin_reply(sent(MSG_PROCESS_STDIN), MSG_ERROR, &w, -1);
}

static void
test_lies(void **state)
{
	assert_fatal(lie_stdin_ok_early, "bad OK message from managerd: "
	    "before the end");
	assert_fatal(lie_stdin_ok_broken, "bad OK message from managerd: "
	    "after its pipe broke");
	assert_fatal(lie_resize_reply, "bad PROCESS_LIST_END message from "
	    "managerd: wrong reply");
	assert_fatal(lie_started_payload, "bad PROCESS_OUTPUT_STARTED message "
	    "from managerd: unexpected");
	assert_fatal(lie_bad_error, "bad ERROR message from managerd: "
	    "malformed error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_handshake_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_body_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refusal_closes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_kept_by_refusal,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_length, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wrong_key_with_token,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_frames, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_client_closes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_exit_killed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_flushed_at_close,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_flushed_at_eof,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_close, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin_close_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin_close_then_gone,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_keeps_little, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stdin_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resize, setup, teardown),
		cmocka_unit_test(test_bad_text),
		cmocka_unit_test_setup_teardown(test_unmasked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_too_many_fragments, setup,
		    teardown),
		cmocka_unit_test(test_bad_control),
		cmocka_unit_test_setup_teardown(test_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_vanishes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stream_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_stream_cut, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_backpressure, setup,
		    teardown),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
