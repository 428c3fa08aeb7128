/*
 * Tests for dockerd-proxy/docker_http_parse.c and the request heads of
 * docker_http.c: the response parser fed every fixture whole, a byte at
 * a time, split at every point and in random pieces.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "docker_fake.h"

/* --- parser fixtures ------------------------------------------------------ */

struct fixture {
	const char		*name;
	const char		*input;
	size_t			 len;		/* 0: strlen(input) */
	int			 flags;
	size_t			 max_body;
	int			 eof;		/* the peer closes at the end */
	enum docker_http_error	 error;
	int			 status;
	const char		*content_type;
	const char		*path_stat;
	const char		*body;
	size_t			 body_len;	/* 0: strlen(body) */
	size_t			 trailing;	/* bytes left after the end */
	int			 no_stream;	/* streaming mode differs */
};

#define RAW_STREAM	"\001\000\000\000\000\000\000\005hello\002\000\000" \
			"\000\000\000\000\003err"
#define DOCKER_404	"{\"message\":\"No such container: abc\"}\n"

static const struct fixture fixtures[] = {
	/* Well-formed responses. */
	{ "content-length", "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\nContent-Length: 13\r\n\r\n"
	    "{\"Id\":\"abc\"}\n", 0, 0, 1024, 0, DOCKER_HTTP_OK, 200,
	    "application/json", NULL, "{\"Id\":\"abc\"}\n", 0, 0, 0 },
	{ "real ping", "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\n"
	    "Cache-Control: no-cache, no-store, must-revalidate\r\n"
	    "Docker-Experimental: false\r\nOstype: linux\r\n"
	    "Pragma: no-cache\r\nServer: Docker/20.10.24+dfsg1 (linux)\r\n"
	    "Date: Sun, 29 Nov 2026 09:15:24 GMT\r\nContent-Length: 2\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n\r\nOK", 0, 0, 1024,
	    0, DOCKER_HTTP_OK, 200, "text/plain; charset=utf-8", NULL, "OK",
	    0, 0, 0 },
	{ "http/1.0 until eof", "HTTP/1.0 200 OK\r\nContent-Type: text/plain"
	    "\r\n\r\nhello world", 0, 0, 1024, 1, DOCKER_HTTP_OK, 200,
	    "text/plain", NULL, "hello world", 0, 0, 0 },
	{ "chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhello\r\n1;ext=1\r\n \r\nA ; name=\"v\"\r\n0123456789\r\n"
	    "0\r\nX-Trailer: yes\r\n\r\n", 0, 0, 1024, 0, DOCKER_HTTP_OK,
	    200, NULL, NULL, "hello 0123456789", 0, 0, 0 },
	{ "chunked case and zeros", "HTTP/1.1 200 OK\r\n"
	    "transfer-encoding:   CHUNKED  \r\n\r\n000a\r\nabcdefghij\r\n"
	    "00B\r\nklmnopqrstu\r\n000\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_OK, 200, NULL, NULL, "abcdefghijklmnopqrstu", 0, 0,
	    0 },
	{ "chunked empty", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n0\r\n\r\n", 0, 0, 1024, 0, DOCKER_HTTP_OK, 200, NULL,
	    NULL, "", 0, 0, 0 },
	{ "204 ignores length", "HTTP/1.1 204 No Content\r\n"
	    "Content-Length: 5\r\n\r\n", 0, 0, 1024, 0, DOCKER_HTTP_OK, 204,
	    NULL, NULL, "", 0, 0, 0 },
	{ "304", "HTTP/1.1 304 Not Modified\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_OK, 304, NULL, NULL, "", 0, 0, 0 },
	{ "head", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n"
	    "X-Docker-Container-Path-Stat: eyJuYW1lIjoid29ya3NwYWNlIn0=\r\n"
	    "\r\n", 0, DOCKER_HTTP_PARSE_HEAD, 16, 0, DOCKER_HTTP_OK, 200,
	    NULL, "eyJuYW1lIjoid29ya3NwYWNlIn0=", "", 0, 0, 0 },
	{ "upgrade", "HTTP/1.1 101 UPGRADED\r\n"
	    "Content-Type: application/vnd.docker.raw-stream\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n" RAW_STREAM,
	    sizeof("HTTP/1.1 101 UPGRADED\r\n"
	    "Content-Type: application/vnd.docker.raw-stream\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n" RAW_STREAM) - 1,
	    DOCKER_HTTP_PARSE_UPGRADE, 1024, 1, DOCKER_HTTP_OK, 101,
	    "application/vnd.docker.raw-stream", NULL, RAW_STREAM,
	    sizeof(RAW_STREAM) - 1, 0, 0 },
	{ "100 continue", "HTTP/1.1 100 Continue\r\nContent-Type: x/y\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", 0, 0, 1024, 0,
	    DOCKER_HTTP_OK, 200, NULL, NULL, "OK", 0, 0, 0 },
	{ "404 names any case", "HTTP/1.1 404 Not Found\r\n"
	    "content-type: application/json\r\nCONTENT-LENGTH: 37\r\n\r\n"
	    DOCKER_404, 0, 0, 1024, 0, DOCKER_HTTP_OK, 404,
	    "application/json", NULL, DOCKER_404, 0, 0, 0 },
	{ "same length twice", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "Content-Length: 02\r\n\r\nOK", 0, 0, 1024, 0, DOCKER_HTTP_OK,
	    200, NULL, NULL, "OK", 0, 0, 0 },
	{ "bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nOK", 0, 0, 1024,
	    0, DOCKER_HTTP_OK, 200, NULL, NULL, "OK", 0, 0, 0 },
	{ "no reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_OK, 200, NULL, NULL, "", 0, 0, 0 },
	{ "optional whitespace", "HTTP/1.1 200 OK\r\nContent-Length:\t 3 "
	    "\t\r\nContent-Type:text/plain\r\n\r\nabc", 0, 0, 1024, 0,
	    DOCKER_HTTP_OK, 200, "text/plain", NULL, "abc", 0, 0, 0 },
	{ "bytes after the end", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "\r\nOKEXTRA", 0, 0, 1024, 0, DOCKER_HTTP_OK, 200, NULL, NULL,
	    "OK", 0, 5, 0 },
	{ "body exactly max", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"
	    "abcd", 0, 0, 4, 0, DOCKER_HTTP_OK, 200, NULL, NULL, "abcd", 0,
	    0, 0 },
	{ "chunked exactly max", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n",
	    0, 0, 4, 0, DOCKER_HTTP_OK, 200, NULL, NULL, "abcd", 0, 0, 0 },
	{ "500 until eof", "HTTP/1.1 500 Internal Server Error\r\n\r\n"
	    "boom", 0, 0, 1024, 1, DOCKER_HTTP_OK, 500, NULL, NULL, "boom", 0,
	    0, 0 },
	{ "8-bit text", "HTTP/1.1 200 \xc3\xa9t\xc3\xa9\r\nX-Foo: \xff\xfe"
	    "\r\nContent-Length: 1\r\n\r\n\xff", 0, 0, 1024, 0,
	    DOCKER_HTTP_OK, 200, NULL, NULL, "\xff", 0, 0, 0 },
	{ "empty body until eof", "HTTP/1.1 200 OK\r\n\r\n", 0, 0, 1024, 1,
	    DOCKER_HTTP_OK, 200, NULL, NULL, "", 0, 0, 0 },

	/* Status lines. */
	{ "garbage", "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "http/2", "HTTP/2 200 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "http/1.2", "HTTP/1.2 200 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "lowercase http", "http/1.1 200 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "two-digit status", "HTTP/1.1 20 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "letters for status", "HTTP/1.1 abc OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "status 099", "HTTP/1.1 099 Low\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "status 600", "HTTP/1.1 600 High\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "tab after version", "HTTP/1.1\t200 OK\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "101 not asked for", "HTTP/1.1 101 UPGRADED\r\n\r\nraw", 0, 0,
	    1024, 1, DOCKER_HTTP_PROTOCOL, 101, NULL, NULL, NULL, 0, 0, 0 },

	/* Header lines. */
	{ "header without colon", "HTTP/1.1 200 OK\r\nBogus header\r\n\r\n",
	    0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n"
	    "\r\nOK", 0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL,
	    NULL, 0, 0, 0 },
	{ "empty name", "HTTP/1.1 200 OK\r\n: x\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "obsolete folding", "HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\n\r\n", 0,
	    0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "NUL in a header", "HTTP/1.1 200 OK\r\nX-A: b\000c\r\n\r\n",
	    sizeof("HTTP/1.1 200 OK\r\nX-A: b\000c\r\n\r\n") - 1, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "NUL before LF", "HTTP/1.1 200 OK\r\nX-A: b\000\n\r\n",
	    sizeof("HTTP/1.1 200 OK\r\nX-A: b\000\n\r\n") - 1, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "CR inside a line", "HTTP/1.1 200 OK\r\nX-A: b\rc\r\n\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "CR CR LF", "HTTP/1.1 200 OK\r\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 0, NULL, NULL, NULL, 0, 0, 0 },
	{ "content type twice", "HTTP/1.1 200 OK\r\nContent-Type: a/b\r\n"
	    "Content-Type: c/d\r\n\r\n", 0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL,
	    200, "a/b", NULL, NULL, 0, 0, 0 },
	{ "path stat twice", "HTTP/1.1 200 OK\r\n"
	    "X-Docker-Container-Path-Stat: e30=\r\n"
	    "x-docker-container-path-stat: e30=\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, "e30=", NULL, 0, 0, 0 },

	/* Content-Length. */
	{ "negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
	    0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "plus length", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nOK",
	    0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "hex length", "HTTP/1.1 200 OK\r\nContent-Length: 0x2\r\n\r\nOK",
	    0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "empty length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nOK", 0,
	    0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "length list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nOK",
	    0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0,
	    0 },
	{ "length with space", "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n"
	    "\r\nOK", 0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL,
	    NULL, 0, 0, 0 },
	{ "length overflow", "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 99999999999999999999\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "length 2^63", "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 9223372036854775808\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "length 2^63-1 too large", "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 9223372036854775807\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_TOO_LARGE, 200, NULL, NULL, NULL, 0, 0, 1 },
	{ "lengths differ", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "Content-Length: 3\r\n\r\nOK!", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },

	/* Transfer-Encoding and chunks. */
	{ "gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "gzip, chunked", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: gzip, chunked\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "chunked twice", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\nzz\r\n", 0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL,
	    NULL, "", 0, 0, 0 },
	{ "negative chunk size", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n-1\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "", 0, 0, 0 },
	{ "empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n\r\n", 0, 0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL,
	    NULL, "", 0, 0, 0 },
	{ "junk after chunk size", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5 x\r\nhello\r\n", 0, 0, 1024,
	    0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "", 0, 0, 0 },
	{ "chunk size 17 digits", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "", 0, 0, 0 },
	{ "chunk size 2^63", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n8000000000000000\r\n", 0, 0,
	    1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "", 0, 0, 0 },
	{ "chunk size 2^63-1, eof", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n007fffffffffffffff\r\nabc", 0, 0,
	    1024, 1, DOCKER_HTTP_IO, 200, NULL, NULL, "abc", 0, 0, 0 },
	{ "no CRLF after chunk", "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", 0,
	    0, 1024, 0, DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "hello", 0, 0,
	    0 },
	{ "bad trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n0\r\nnot a trailer\r\n\r\n", 0, 0, 1024, 0,
	    DOCKER_HTTP_PROTOCOL, 200, NULL, NULL, "", 0, 0, 0 },

	/* The peer closes too early. */
	{ "eof at once", "", 0, 0, 1024, 1, DOCKER_HTTP_IO, 0, NULL, NULL,
	    NULL, 0, 0, 0 },
	{ "eof in status line", "HTTP/1.1 2", 0, 0, 1024, 1, DOCKER_HTTP_IO,
	    0, NULL, NULL, NULL, 0, 0, 0 },
	{ "eof in headers", "HTTP/1.1 200 OK\r\nContent-Le", 0, 0, 1024, 1,
	    DOCKER_HTTP_IO, 200, NULL, NULL, NULL, 0, 0, 0 },
	{ "eof before length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"
	    "\r\nabc", 0, 0, 1024, 1, DOCKER_HTTP_IO, 200, NULL, NULL, "abc",
	    0, 0, 0 },
	{ "eof before the body", "HTTP/1.1 500 Internal Server Error\r\n"
	    "Content-Length: 10\r\n\r\n", 0, 0, 1024, 1, DOCKER_HTTP_IO, 500,
	    NULL, NULL, "", 0, 0, 0 },
	{ "eof in chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n5\r\nhel", 0, 0, 1024, 1, DOCKER_HTTP_IO, 200, NULL,
	    NULL, "hel", 0, 0, 0 },
	{ "eof after chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n5\r\nhello\r\n", 0, 0, 1024, 1, DOCKER_HTTP_IO, 200,
	    NULL, NULL, "hello", 0, 0, 0 },
	{ "eof in trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n0\r\nX: y\r\n", 0, 0, 1024, 1, DOCKER_HTTP_IO, 200, NULL,
	    NULL, "", 0, 0, 0 },

	/* Bodies over max_body. */
	{ "length over max", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
	    "abcde", 0, 0, 4, 0, DOCKER_HTTP_TOO_LARGE, 200, NULL, NULL, NULL,
	    0, 0, 1 },
	{ "chunks over max", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", 0, 0, 4, 0,
	    DOCKER_HTTP_TOO_LARGE, 200, NULL, NULL, "abcd", 0, 0, 1 },
	{ "eof body over max", "HTTP/1.1 200 OK\r\n\r\nabcde", 0, 0, 4, 1,
	    DOCKER_HTTP_TOO_LARGE, 200, NULL, NULL, "abcd", 0, 0, 1 },
	{ "error body over max", "HTTP/1.1 404 Not Found\r\n"
	    "Content-Length: 37\r\n\r\n" DOCKER_404, 0, 0, 8, 0,
	    DOCKER_HTTP_TOO_LARGE, 404, NULL, NULL, NULL, 0, 0, 0 },
	{ "max zero", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 0, 0,
	    0, 0, DOCKER_HTTP_TOO_LARGE, 200, NULL, NULL, NULL, 0, 0, 1 },
};

#define NFIXTURES	(sizeof(fixtures) / sizeof(fixtures[0]))

struct outcome {
	enum docker_http_parse_result	 result;
	enum docker_http_error		 error;
	int				 status;
	char				*content_type;
	char				*path_stat;
	int				 body_null;
	unsigned char			*body;
	size_t				 body_len;
	struct evbuffer			*streamed;
	size_t				 consumed;
	int				 pause_every;	/* body fn returns 1 */
	int				 abort_at;	/* call returning -1 */
	int				 calls;
};

/* Pieces to feed: the whole, bytes, a split at one point, or random. */
struct splitter {
	int		 kind;
	size_t		 at;
	uint32_t	 seed;
	size_t		 done;
};

#define SPLIT_WHOLE	0
#define SPLIT_BYTES	1
#define SPLIT_AT	2
#define SPLIT_RANDOM	3

static size_t
next_piece(struct splitter *sp, size_t remaining)
{
	size_t	 n = remaining;

	switch (sp->kind) {
	case SPLIT_BYTES:
		n = 1;
		break;
	case SPLIT_AT:
		if (sp->done < sp->at)
			n = sp->at - sp->done;
		break;
	case SPLIT_RANDOM:
		/* A fixed LCG keeps failures reproducible. */
		sp->seed = sp->seed * 1103515245 + 12345;
		n = 1 + (sp->seed >> 16) % 23;
		break;
	}
	if (n > remaining || n == 0)
		n = remaining;
	sp->done += n;
	return n;
}

static int
collect_body(void *arg, const unsigned char *data, size_t len)
{
	struct outcome	*o = arg;

	assert_true(len > 0);
	o->calls++;
	if (o->abort_at != 0 && o->calls == o->abort_at)
		return -1;
	assert_int_equal(evbuffer_add(o->streamed, data, len), 0);
	return o->pause_every ? 1 : 0;
}

static void
outcome_free(struct outcome *o)
{
	free(o->content_type);
	free(o->path_stat);
	free(o->body);
	if (o->streamed != NULL)
		evbuffer_free(o->streamed);
	memset(o, 0, sizeof(*o));
}


static size_t
fixture_len(const struct fixture *f)
{
	return f->len != 0 ? f->len : strlen(f->input);
}

static void
run_parser(const struct fixture *f, int stream, struct splitter *sp,
    struct outcome *o)
{
	struct docker_http_parser		*p;
	const struct docker_response		*resp;
	enum docker_http_parse_result		 r = DOCKER_HTTP_PARSE_MORE;
	const unsigned char			*in;
	size_t					 len = fixture_len(f), off = 0;
	size_t					 n, piece, used;

	in = (const unsigned char *)f->input;
	o->streamed = evbuffer_new();
	assert_non_null(o->streamed);
	p = docker_http_parser_new(f->flags, f->max_body,
	    stream ? collect_body : NULL, o);
	assert_non_null(p);
	while (off < len && r != DOCKER_HTTP_PARSE_DONE &&
	    r != DOCKER_HTTP_PARSE_ERROR) {
		piece = next_piece(sp, len - off);
		n = 0;
		do {
			r = docker_http_parse(p, in + off + n, piece - n,
			    &used);
			assert_true(used <= piece - n);
			n += used;
			if (r == DOCKER_HTTP_PARSE_MORE)
				assert_int_equal(n, piece);
		} while (n < piece && r == DOCKER_HTTP_PARSE_PAUSED);
		off += n;
	}
	if (r != DOCKER_HTTP_PARSE_DONE && r != DOCKER_HTTP_PARSE_ERROR &&
	    f->eof)
		r = docker_http_parse_eof(p);
	o->result = r;
	o->error = docker_http_parser_error(p);
	o->consumed = off;
	resp = docker_http_parser_response(p);
	o->status = resp->status;
	o->content_type = dup_or_null(resp->content_type);
	o->path_stat = dup_or_null(resp->path_stat);
	o->body_null = resp->body == NULL;
	if (resp->body != NULL) {
		assert_true(resp->body_len < SIZE_MAX);
		/* Buffered bodies are NUL-terminated. */
		assert_int_equal(resp->body[resp->body_len], '\0');
		o->body = malloc(resp->body_len + 1);
		assert_non_null(o->body);
		memcpy(o->body, resp->body, resp->body_len + 1);
		o->body_len = resp->body_len;
	}
	docker_http_parser_free(p);
}

static void
check_str(const struct fixture *f, const char *what, const char *want,
    const char *got)
{
	if (want == NULL && got == NULL)
		return;
	if (want == NULL || got == NULL || strcmp(want, got) != 0)
		fail_msg("%s: %s is \"%s\", want \"%s\"", f->name, what,
		    got ? got : "(null)", want ? want : "(null)");
}

static void
check_outcome(const struct fixture *f, int stream, const struct outcome *o,
    const char *how)
{
	size_t		 want_len;
	const void	*got;
	size_t		 got_len;
	int		 streamed;

	if (o->error != f->error)
		fail_msg("%s (%s%s): error %s, want %s", f->name, how,
		    stream ? ", streaming" : "", docker_http_strerror(o->error),
		    docker_http_strerror(f->error));
	if (o->result != (f->error == DOCKER_HTTP_OK ?
	    DOCKER_HTTP_PARSE_DONE : DOCKER_HTTP_PARSE_ERROR))
		fail_msg("%s (%s): result %d", f->name, how, o->result);
	if (o->status != f->status)
		fail_msg("%s (%s): status %d, want %d", f->name, how,
		    o->status, f->status);
	check_str(f, "content type", f->content_type, o->content_type);
	check_str(f, "path stat", f->path_stat, o->path_stat);
	if (f->error == DOCKER_HTTP_OK &&
	    o->consumed != fixture_len(f) - f->trailing)
		fail_msg("%s (%s): consumed %zu of %zu", f->name, how,
		    o->consumed, fixture_len(f));
	if (f->body == NULL)
		return;
	want_len = f->body_len != 0 ? f->body_len : strlen(f->body);
	streamed = stream && f->status < 300;
	if (streamed) {
		if (!o->body_null)
			fail_msg("%s (%s): streamed body was buffered",
			    f->name, how);
		got = evbuffer_pullup(o->streamed, -1);
		got_len = evbuffer_get_length(o->streamed);
	} else {
		if (f->error == DOCKER_HTTP_OK && o->body_null)
			fail_msg("%s (%s): no body", f->name, how);
		if (evbuffer_get_length(o->streamed) != 0)
			fail_msg("%s (%s): error body was streamed", f->name,
			    how);
		got = o->body;
		got_len = o->body_len;
	}
	if (got_len != want_len || (want_len > 0 &&
	    memcmp(got, f->body, want_len) != 0))
		fail_msg("%s (%s%s): body of %zu bytes differs (want %zu)",
		    f->name, how, stream ? ", streaming" : "", got_len,
		    want_len);
}

static void
check_fixture(const struct fixture *f, int stream)
{
	struct splitter	 sp;
	struct outcome	 o;
	size_t		 len = fixture_len(f), i;
	char		 how[64];

	if (stream && f->no_stream)
		return;
	memset(&sp, 0, sizeof(sp));
	memset(&o, 0, sizeof(o));
	run_parser(f, stream, &sp, &o);
	check_outcome(f, stream, &o, "whole");
	outcome_free(&o);

	memset(&sp, 0, sizeof(sp));
	sp.kind = SPLIT_BYTES;
	run_parser(f, stream, &sp, &o);
	check_outcome(f, stream, &o, "byte by byte");
	outcome_free(&o);

	/* Two pieces, at every split point (big inputs: near the ends). */
	for (i = 1; i < len; i++) {
		if (len > 2048 && i > 64 && i < len - 64 && i % 997 != 0)
			continue;
		memset(&sp, 0, sizeof(sp));
		sp.kind = SPLIT_AT;
		sp.at = i;
		run_parser(f, stream, &sp, &o);
		snprintf(how, sizeof(how), "split at %zu", i);
		check_outcome(f, stream, &o, how);
		outcome_free(&o);
	}
	for (i = 0; i < 50; i++) {
		memset(&sp, 0, sizeof(sp));
		sp.kind = SPLIT_RANDOM;
		sp.seed = (uint32_t)i * 7919 + 1;
		run_parser(f, stream, &sp, &o);
		snprintf(how, sizeof(how), "random split, seed %u", sp.seed);
		check_outcome(f, stream, &o, how);
		outcome_free(&o);
	}
}

static void
test_parse_fixtures(void **state)
{
	size_t	 i;

	for (i = 0; i < NFIXTURES; i++)
		check_fixture(&fixtures[i], 0);
}

static void
test_parse_fixtures_streaming(void **state)
{
	size_t	 i;

	for (i = 0; i < NFIXTURES; i++)
		check_fixture(&fixtures[i], 1);
}

/* Heads built at run time around the 16 KiB and 100-line bounds. */
static char *
head_of_size(size_t size)
{
	static const char	 start[] = "HTTP/1.1 200 OK\r\nX-Pad: ";
	static const char	 end[] = "\r\nContent-Length: 2\r\n\r\nOK";
	char			*s;
	size_t			 pad;

	pad = size - (sizeof(start) - 1) - (sizeof(end) - 1 - 2);
	s = malloc(size + 3);
	assert_non_null(s);
	memcpy(s, start, sizeof(start) - 1);
	memset(s + sizeof(start) - 1, 'a', pad);
	memcpy(s + sizeof(start) - 1 + pad, end, sizeof(end));
	return s;
}

static void
test_parse_head_size(void **state)
{
	struct fixture	 f;
	char		*s;

	memset(&f, 0, sizeof(f));
	f.max_body = 16;
	f.status = 200;
	s = head_of_size(DOCKER_HTTP_MAX_HEAD);
	f.name = "head of exactly 16 KiB";
	f.input = s;
	f.body = "OK";
	check_fixture(&f, 0);
	free(s);

	s = head_of_size(DOCKER_HTTP_MAX_HEAD + 1);
	f.name = "head one byte over 16 KiB";
	f.input = s;
	f.body = NULL;
	f.error = DOCKER_HTTP_PROTOCOL;
	check_fixture(&f, 0);
	free(s);

	/* One line alone over the limit, with no line end in sight. */
	s = malloc(DOCKER_HTTP_MAX_HEAD + 64);
	assert_non_null(s);
	memcpy(s, "HTTP/1.1 200 ", 13);
	memset(s + 13, 'x', DOCKER_HTTP_MAX_HEAD + 40);
	s[DOCKER_HTTP_MAX_HEAD + 53] = '\0';
	f.name = "endless status line";
	f.input = s;
	f.status = 0;
	check_fixture(&f, 0);
	free(s);
}

static char *
head_of_lines(int lines)
{
	char	*s;
	size_t	 size = 64 + (size_t)lines * 16, off;
	int	 i;

	s = malloc(size);
	assert_non_null(s);
	off = (size_t)snprintf(s, size, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i < lines - 1; i++)
		off += (size_t)snprintf(s + off, size - off, "X-%d: y\r\n",
		    i % 1000);
	snprintf(s + off, size - off, "Content-Length: 2\r\n\r\nOK");
	return s;
}

static void
test_parse_header_lines(void **state)
{
	struct fixture	 f;
	char		*s;

	memset(&f, 0, sizeof(f));
	f.max_body = 16;
	f.status = 200;
	s = head_of_lines(DOCKER_HTTP_MAX_HEADER_LINES);
	f.name = "100 header lines";
	f.input = s;
	f.body = "OK";
	check_fixture(&f, 0);
	free(s);

	s = head_of_lines(DOCKER_HTTP_MAX_HEADER_LINES + 1);
	f.name = "101 header lines";
	f.input = s;
	f.body = NULL;
	f.error = DOCKER_HTTP_PROTOCOL;
	check_fixture(&f, 0);
	free(s);
}

/* Trailers have a budget of their own: the same line count. */
static char *
trailer_of_lines(int lines)
{
	char	*s;
	size_t	 size = 128 + (size_t)lines * 16, off;
	int	 i;

	s = malloc(size);
	assert_non_null(s);
	off = (size_t)snprintf(s, size, "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n");
	for (i = 0; i < lines; i++)
		off += (size_t)snprintf(s + off, size - off, "T-%d: y\r\n",
		    i % 1000);
	snprintf(s + off, size - off, "\r\n");
	return s;
}

static void
test_parse_trailer_lines(void **state)
{
	struct fixture	 f;
	char		*s;

	memset(&f, 0, sizeof(f));
	f.max_body = 16;
	f.status = 200;
	f.body = "OK";
	s = trailer_of_lines(DOCKER_HTTP_MAX_HEADER_LINES);
	f.name = "100 trailer lines";
	f.input = s;
	check_fixture(&f, 0);
	free(s);

	s = trailer_of_lines(DOCKER_HTTP_MAX_HEADER_LINES + 1);
	f.name = "101 trailer lines";
	f.input = s;
	f.error = DOCKER_HTTP_PROTOCOL;
	check_fixture(&f, 0);
	check_fixture(&f, 1);
	free(s);
}

static char *
chunk_line_of(size_t raw)
{
	static const char	 start[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2;";
	static const char	 end[] = "\r\nOK\r\n0\r\n\r\n";
	char			*s;
	size_t			 ext = raw - 2 - 2;	/* "2;" and CRLF */

	s = malloc(sizeof(start) + ext + sizeof(end));
	assert_non_null(s);
	memcpy(s, start, sizeof(start) - 1);
	memset(s + sizeof(start) - 1, 'e', ext);
	memcpy(s + sizeof(start) - 1 + ext, end, sizeof(end));
	return s;
}

static void
test_parse_chunk_line(void **state)
{
	struct fixture	 f;
	char		*s;

	memset(&f, 0, sizeof(f));
	f.max_body = 16;
	f.status = 200;
	s = chunk_line_of(DOCKER_HTTP_MAX_CHUNK_LINE);
	f.name = "chunk line at the limit";
	f.input = s;
	f.body = "OK";
	check_fixture(&f, 0);
	check_fixture(&f, 1);
	free(s);

	s = chunk_line_of(DOCKER_HTTP_MAX_CHUNK_LINE + 1);
	f.name = "chunk line over the limit";
	f.input = s;
	f.body = "";
	f.error = DOCKER_HTTP_PROTOCOL;
	check_fixture(&f, 0);
	free(s);
}

/* A body function that pauses after every piece. */
static void
test_parse_pause(void **state)
{
	static const char	 in[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
	struct docker_http_parser	*p;
	struct outcome			 o;
	enum docker_http_parse_result	 r;
	size_t				 off = 0, used;
	int				 pauses = 0;

	memset(&o, 0, sizeof(o));
	o.pause_every = 1;
	o.streamed = evbuffer_new();
	assert_non_null(o.streamed);
	p = docker_http_parser_new(0, 0, collect_body, &o);
	assert_non_null(p);
	for (;;) {
		r = docker_http_parse(p, in + off, sizeof(in) - 1 - off, &used);
		off += used;
		if (r != DOCKER_HTTP_PARSE_PAUSED)
			break;
		pauses++;
		/* Paused right after a piece of body, never elsewhere. */
		assert_int_equal(evbuffer_get_length(o.streamed),
		    pauses == 1 ? 3 : 7);
		assert_true(off < sizeof(in) - 1);
	}
	assert_int_equal(r, DOCKER_HTTP_PARSE_DONE);
	assert_int_equal(pauses, 2);
	assert_int_equal(off, sizeof(in) - 1);
	assert_int_equal(o.calls, 2);
	assert_memory_equal(evbuffer_pullup(o.streamed, -1), "abcdefg", 7);
	assert_null(docker_http_parser_response(p)->body);

	/* After the end nothing more is taken. */
	assert_int_equal(docker_http_parse(p, "junk", 4, &used),
	    DOCKER_HTTP_PARSE_DONE);
	assert_int_equal(used, 0);
	assert_int_equal(docker_http_parse_eof(p), DOCKER_HTTP_PARSE_DONE);
	docker_http_parser_free(p);
	outcome_free(&o);
}

/* A pause asked for on the last byte of the body still ends the parse. */
static void
test_parse_pause_at_end(void **state)
{
	static const char	 in[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Content-Length: 3\r\n\r\nabc";
	struct docker_http_parser	*p;
	struct outcome			 o;
	size_t				 used;

	memset(&o, 0, sizeof(o));
	o.pause_every = 1;
	o.streamed = evbuffer_new();
	assert_non_null(o.streamed);
	p = docker_http_parser_new(0, 0, collect_body, &o);
	assert_non_null(p);
	assert_int_equal(docker_http_parse(p, in, sizeof(in) - 1, &used),
	    DOCKER_HTTP_PARSE_DONE);
	assert_int_equal(used, sizeof(in) - 1);
	docker_http_parser_free(p);
	outcome_free(&o);
}

static void
test_parse_abort(void **state)
{
	static const char	 in[] =
	    "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
	struct docker_http_parser	*p;
	struct outcome			 o;
	size_t				 used;

	memset(&o, 0, sizeof(o));
	o.abort_at = 2;
	o.streamed = evbuffer_new();
	assert_non_null(o.streamed);
	p = docker_http_parser_new(0, 0, collect_body, &o);
	assert_non_null(p);
	assert_int_equal(docker_http_parse(p, in, sizeof(in) - 1, &used),
	    DOCKER_HTTP_PARSE_ERROR);
	assert_int_equal(docker_http_parser_error(p), DOCKER_HTTP_CANCELLED);
	assert_int_equal(o.calls, 2);
	/* An error sticks. */
	assert_int_equal(docker_http_parse(p, "x", 1, &used),
	    DOCKER_HTTP_PARSE_ERROR);
	assert_int_equal(used, 0);
	assert_int_equal(docker_http_parse_eof(p), DOCKER_HTTP_PARSE_ERROR);
	assert_int_equal(docker_http_parser_error(p), DOCKER_HTTP_CANCELLED);
	docker_http_parser_free(p);
	outcome_free(&o);
}

/* The pieces an announcing stream's body function gets, in order. */
struct announced {
	int	 empty;		/* len 0 calls */
	size_t	 bytes;		/* body bytes */
	int	 empty_after;	/* an empty call after body bytes */
	int	 refuse;	/* answer -1 to the empty one */
};

static int
announced_body(void *arg, const unsigned char *data, size_t len)
{
	struct announced	*a = arg;

	assert_non_null(data);
	if (len == 0) {
		a->empty++;
		a->empty_after += a->bytes > 0;
		return a->refuse ? -1 : 0;
	}
	a->bytes += len;
	return 0;
}

static enum docker_http_parse_result
announced_parse(const char *in, struct announced *a,
    enum docker_http_error *error)
{
	struct docker_http_parser	*p;
	enum docker_http_parse_result	 r;
	size_t				 used;

	p = docker_http_parser_new(DOCKER_HTTP_PARSE_ANNOUNCE, 1024,
	    announced_body, a);
	assert_non_null(p);
	r = docker_http_parse(p, in, strlen(in), &used);
	*error = docker_http_parser_error(p);
	docker_http_parser_free(p);
	return r;
}

/*
 * DOCKER_HTTP_PARSE_ANNOUNCE: a streamed 2xx head is one empty piece
 * before the body, also when no body byte comes yet; an error answer
 * (buffered) and a 101 are not announced; -1 to it aborts.
 */
static void
test_parse_announce(void **state)
{
	struct announced		 a;
	enum docker_http_error		 error;

	memset(&a, 0, sizeof(a));
	assert_int_equal(announced_parse("HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", &a, &error),
	    DOCKER_HTTP_PARSE_MORE);
	assert_int_equal(a.empty, 1);
	assert_int_equal(a.bytes, 0);
	memset(&a, 0, sizeof(a));
	assert_int_equal(announced_parse("HTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "3\r\nabc\r\n0\r\n\r\n", &a, &error),
	    DOCKER_HTTP_PARSE_DONE);
	assert_int_equal(a.empty, 1);
	assert_int_equal(a.empty_after, 0);
	assert_int_equal(a.bytes, 3);
	memset(&a, 0, sizeof(a));
	assert_int_equal(announced_parse("HTTP/1.1 403 Forbidden\r\n"
	    "Content-Length: 2\r\n\r\nno", &a, &error),
	    DOCKER_HTTP_PARSE_DONE);
	assert_int_equal(a.empty + (int)a.bytes, 0);
	memset(&a, 0, sizeof(a));
	a.refuse = 1;
	assert_int_equal(announced_parse("HTTP/1.1 200 OK\r\n"
	    "Content-Length: 3\r\n\r\nabc", &a, &error),
	    DOCKER_HTTP_PARSE_ERROR);
	assert_int_equal(error, DOCKER_HTTP_CANCELLED);
	assert_int_equal(a.bytes, 0);
}

/* max_body of SIZE_MAX must not overflow anything. */
static void
test_parse_unbounded_max(void **state)
{
	static const char	 in[] = "HTTP/1.1 200 OK\r\n\r\n0123456789";
	struct docker_http_parser	*p;
	const struct docker_response	*resp;
	size_t				 used, i;

	p = docker_http_parser_new(0, SIZE_MAX, NULL, NULL);
	assert_non_null(p);
	for (i = 0; i < 300; i++)
		assert_int_equal(docker_http_parse(p, in, sizeof(in) - 1,
		    &used), DOCKER_HTTP_PARSE_MORE);
	assert_int_equal(docker_http_parse_eof(p), DOCKER_HTTP_PARSE_DONE);
	resp = docker_http_parser_response(p);
	/* The first copy held the head; 299 more are body. */
	assert_int_equal(resp->body_len, 10 + 299 * (sizeof(in) - 1));
	assert_memory_equal(resp->body, "0123456789HTTP/1.1", 18);
	docker_http_parser_free(p);
}

static void
test_strerror(void **state)
{
	int	 e;

	for (e = DOCKER_HTTP_OK; e <= DOCKER_HTTP_BUSY; e++) {
		assert_non_null(docker_http_strerror(e));
		assert_string_not_equal(docker_http_strerror(e),
		    "unknown error");
	}
	assert_string_equal(docker_http_strerror(DOCKER_HTTP_BUSY + 1),
	    "unknown error");
	assert_string_equal(docker_http_strerror(-1), "unknown error");
}

/* --- request heads -------------------------------------------------------- */

static void
check_head(const char *method, const char *path, const char *ctype,
    long long clen, int flags, const char *want)
{
	struct evbuffer	*out;
	size_t		 len;

	out = evbuffer_new();
	assert_non_null(out);
	assert_int_equal(docker_http_request_head(out, method, path, ctype,
	    clen, flags), 0);
	len = evbuffer_get_length(out);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(evbuffer_pullup(out, -1), want, len);
	evbuffer_free(out);
}

static void
test_request_head(void **state)
{
	check_head("GET", "/v1.41/_ping", NULL, 0, 0,
	    "GET /v1.41/_ping HTTP/1.1\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\nConnection: close\r\n\r\n");
	check_head("POST", "/v1.41/containers/create?name=as-1",
	    "application/json", 17, 0,
	    "POST /v1.41/containers/create?name=as-1 HTTP/1.1\r\n"
	    "Host: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: 17\r\n\r\n");
	check_head("POST", "/v1.41/exec/abc/start", "application/json", 2,
	    DOCKER_HTTP_UPGRADE,
	    "POST /v1.41/exec/abc/start HTTP/1.1\r\nHost: docker\r\n"
	    "User-Agent: agent-sandbox\r\nConnection: Upgrade, close\r\n"
	    "Upgrade: tcp\r\nContent-Type: application/json\r\n"
	    "Content-Length: 2\r\n\r\n");
	check_head("PUT", "/v1.41/containers/abc/archive?path=%2Fworkspace",
	    "application/x-tar", DOCKER_HTTP_CHUNKED, 0,
	    "PUT /v1.41/containers/abc/archive?path=%2Fworkspace HTTP/1.1\r\n"
	    "Host: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\nContent-Type: application/x-tar\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	check_head("POST", "/v1.41/containers/abc/start", "application/json",
	    0, 0, "POST /v1.41/containers/abc/start HTTP/1.1\r\n"
	    "Host: docker\r\nUser-Agent: agent-sandbox\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Content-Length: 0\r\n\r\n");
}

static void
check_bad_head(const char *method, const char *path, const char *ctype,
    long long clen, int flags)
{
	struct evbuffer	*out;

	out = evbuffer_new();
	assert_non_null(out);
	errno = 0;
	assert_int_equal(docker_http_request_head(out, method, path, ctype,
	    clen, flags), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(evbuffer_get_length(out), 0);
	evbuffer_free(out);
}

static void
test_request_head_invalid(void **state)
{
	struct evbuffer	*out;
	char		 longpath[DOCKER_HTTP_MAX_PATH + 2];

	check_bad_head("GE T", "/_ping", NULL, 0, 0);
	check_bad_head("GET\r\n", "/_ping", NULL, 0, 0);
	check_bad_head("GET\n", "/_ping", NULL, 0, 0);
	check_bad_head("", "/_ping", NULL, 0, 0);
	check_bad_head(NULL, "/_ping", NULL, 0, 0);
	check_bad_head("GET", NULL, NULL, 0, 0);
	check_bad_head("GET", "", NULL, 0, 0);
	check_bad_head("GET", "_ping", NULL, 0, 0);
	check_bad_head("GET", "/a b", NULL, 0, 0);
	check_bad_head("GET", "/a\r\nX-Injected: 1", NULL, 0, 0);
	check_bad_head("GET", "/a\n", NULL, 0, 0);
	check_bad_head("GET", "/a\r", NULL, 0, 0);
	check_bad_head("GET", "/a\t", NULL, 0, 0);
	check_bad_head("GET", "/a\x7f", NULL, 0, 0);
	check_bad_head("GET", "/caf\xc3\xa9", NULL, 0, 0);
	check_bad_head("POST", "/a", "application/json\r\nX: y", 1, 0);
	check_bad_head("POST", "/a", "application/json", -2, 0);
	check_bad_head("POST", "/a", NULL, 0, 0x80);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	check_bad_head("GET", longpath, NULL, 0, 0);
	/* Exactly the limit is fine. */
	longpath[DOCKER_HTTP_MAX_PATH] = '\0';
	out = evbuffer_new();
	assert_non_null(out);
	assert_int_equal(docker_http_request_head(out, "GET", longpath, NULL,
	    0, 0), 0);
	assert_int_equal(evbuffer_get_length(out), 4 + DOCKER_HTTP_MAX_PATH +
	    strlen(" HTTP/1.1\r\nHost: docker\r\nUser-Agent: agent-sandbox"
	    "\r\nConnection: close\r\n\r\n"));
	evbuffer_free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fixtures),
		cmocka_unit_test(test_parse_fixtures_streaming),
		cmocka_unit_test(test_parse_head_size),
		cmocka_unit_test(test_parse_header_lines),
		cmocka_unit_test(test_parse_trailer_lines),
		cmocka_unit_test(test_parse_chunk_line),
		cmocka_unit_test(test_parse_pause),
		cmocka_unit_test(test_parse_pause_at_end),
		cmocka_unit_test(test_parse_abort),
		cmocka_unit_test(test_parse_announce),
		cmocka_unit_test(test_parse_unbounded_max),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_request_head),
		cmocka_unit_test(test_request_head_invalid),
	};

	/* Writes to a daemon that went away must be errors, not signals. */
	signal(SIGPIPE, SIG_IGN);
	/* Fresh memory is never a lucky NUL: a byte not written shows. */
	mallopt(M_PERTURB, 0x5a);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
