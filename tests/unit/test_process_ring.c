/*
 * Tests for managerd/process_ring.c (a process's output, numbered by
 * bytes, bounded, with characters kept whole) and managerd/store_process.c
 * (its record, round trip and refusals).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "managerd.h"
#include "process.h"

/* Every byte a reader gets from pos on, as reader_add_next walks it. */
static size_t
read_all(const struct ring *r, uint64_t pos, unsigned char *out, size_t max,
    uint64_t *gap)
{
	struct ring_chunk	*c;
	uint32_t		 skip;
	size_t			 n = 0;

	*gap = 0;
	if (pos < ring_dropped(r)) {
		*gap = ring_dropped(r) - pos;
		pos = ring_dropped(r);
	}
	while ((c = ring_next(r, pos, &skip)) != NULL) {
		assert_true(c->seq > pos);
		assert_true(c->len - skip <= PEV_DATA_MAX);
		assert_true(n + c->len - skip <= max);
		memcpy(out + n, c->data + skip, c->len - skip);
		n += c->len - skip;
		pos = c->seq;
	}
	assert_int_equal(pos, r->total);
	return n;
}

static void
test_ring_numbers_by_bytes(void **state)
{
	struct ring	 r;
	unsigned char	 out[64];
	uint64_t	 gap;
	size_t		 n;

	ring_init(&r, 1 << 20);
	assert_int_equal(ring_append(&r, PEV_STDOUT, "hello ", 6), 0);
	assert_int_equal(ring_append(&r, PEV_STDERR, "warn\n", 5), 0);
	assert_int_equal(ring_append(&r, PEV_STDOUT, "world\n", 6), 0);
	assert_int_equal(r.total, 17);
	n = read_all(&r, 0, out, sizeof(out), &gap);
	assert_int_equal(n, 17);
	assert_int_equal(gap, 0);
	assert_memory_equal(out, "hello warn\nworld\n", 17);
	/* After an event boundary: exactly what follows it. */
	n = read_all(&r, 11, out, sizeof(out), &gap);
	assert_int_equal(n, 6);
	assert_memory_equal(out, "world\n", 6);
	/* Inside one: the rest of it. */
	n = read_all(&r, 3, out, sizeof(out), &gap);
	assert_int_equal(n, 14);
	assert_memory_equal(out, "lo warn\nworld\n", 14);
	n = read_all(&r, 17, out, sizeof(out), &gap);
	assert_int_equal(n, 0);
	ring_free(&r);
}

/* Small pieces of one stream share a chunk; a seq seen may grow. */
static void
test_ring_coalesces(void **state)
{
	struct ring		 r;
	struct ring_chunk	*c;
	uint32_t		 skip;
	int			 i;

	ring_init(&r, 1 << 20);
	for (i = 0; i < 1000; i++)
		assert_int_equal(ring_append(&r, PEV_STDOUT, "x", 1), 0);
	assert_int_equal(r.total, 1000);
	c = TAILQ_FIRST(&r.chunks);
	assert_non_null(c);
	assert_ptr_equal(c, TAILQ_LAST(&r.chunks, ring_chunks));
	assert_int_equal(c->seq, 1000);
	assert_true(r.mem < 2 * RING_CHUNK_ROOM);
	/* A reader that had 1000 gets the rest of the same chunk. */
	assert_int_equal(ring_append(&r, PEV_STDOUT, "yz", 2), 0);
	c = ring_next(&r, 1000, &skip);
	assert_non_null(c);
	assert_int_equal(skip, 1000);
	assert_int_equal(c->seq, 1002);
	ring_free(&r);
}

/* Past the cap the oldest go, and a reader behind hears exactly how many. */
static void
test_ring_drops_oldest_with_exact_gap(void **state)
{
	struct ring	 r;
	unsigned char	 piece[PEV_DATA_MAX], *out;
	uint64_t	 gap, i;
	size_t		 n;

	out = malloc(1 << 20);
	assert_non_null(out);
	ring_init(&r, 256 * 1024);
	for (i = 0; i < 64; i++) {
		memset(piece, 'a' + (int)(i % 26), sizeof(piece));
		assert_int_equal(ring_append(&r, i % 3 ? PEV_STDOUT :
		    PEV_STDERR, piece, sizeof(piece)), 0);
		assert_true(r.mem <= r.cap);
	}
	assert_int_equal(r.total, 64 * PEV_DATA_MAX);
	assert_true(r.kept < r.total);
	assert_int_equal(ring_dropped(&r) + r.kept, r.total);
	n = read_all(&r, 0, out, 1 << 20, &gap);
	assert_int_equal(gap, ring_dropped(&r));
	assert_int_equal(n, r.kept);
	/* What is left ends with the last piece. */
	assert_int_equal(out[n - 1], 'a' + 63 % 26);
	/* A reader past the drop gets no gap. */
	n = read_all(&r, r.total - 10, out, 1 << 20, &gap);
	assert_int_equal(gap, 0);
	assert_int_equal(n, 10);
	ring_free(&r);
	free(out);
}

/* A character split by the pipe waits for its other bytes. */
static void
test_ring_keeps_characters_whole(void **state)
{
	static const unsigned char	 euro[] = { 0xe2, 0x82, 0xac };
	struct ring			 r;
	struct ring_chunk		*c;
	uint32_t			 skip;

	ring_init(&r, 1 << 20);
	assert_int_equal(ring_append(&r, PEV_STDOUT, "a", 1), 0);
	assert_int_equal(ring_append(&r, PEV_STDERR, "e", 1), 0);
	assert_int_equal(ring_append(&r, PEV_STDOUT, euro, 1), 0);
	/* Held: total does not count it yet. */
	assert_int_equal(r.total, 2);
	assert_int_equal(ring_append(&r, PEV_STDOUT, euro + 1, 2), 0);
	assert_int_equal(r.total, 5);
	c = ring_next(&r, 2, &skip);
	assert_non_null(c);
	assert_int_equal(c->len - skip, 3);
	assert_memory_equal(c->data + skip, euro, 3);
	/* Invalid bytes are not held: they never complete. */
	assert_int_equal(ring_append(&r, PEV_STDOUT, "\xff", 1), 0);
	assert_int_equal(r.total, 6);
	/* A lead byte at the very end is flushed at the end. */
	assert_int_equal(ring_append(&r, PEV_STDERR, "\xf0\x9f", 2), 0);
	assert_int_equal(r.total, 6);
	assert_int_equal(ring_flush(&r), 0);
	assert_int_equal(r.total, 8);
	ring_free(&r);
}

/* Big pieces are cut at character boundaries, at most PEV_DATA_MAX. */
static void
test_ring_cuts_big_pieces(void **state)
{
	struct ring		 r;
	struct ring_chunk	*c;
	unsigned char		*big;
	size_t			 len = PEV_DATA_MAX * 2 + 7, i;

	big = malloc(len);
	assert_non_null(big);
	for (i = 0; i + 3 <= len; i += 3)
		memcpy(big + i, "\xe2\x82\xac", 3);
	len = i;
	ring_init(&r, 1 << 20);
	assert_int_equal(ring_append(&r, PEV_STDOUT, big, len), 0);
	assert_int_equal(r.total, len);
	TAILQ_FOREACH(c, &r.chunks, entry) {
		assert_true(c->len <= PEV_DATA_MAX);
		assert_true(c->len % 3 == 0);
	}
	ring_free(&r);
	free(big);
}

static void
fill_record(struct process_record *r)
{
	memset(r, 0, sizeof(*r));
	strlcpy(r->id, "proc_0123456789abcdef", sizeof(r->id));
	strlcpy(r->sandbox_id, "sb_4f1c2a9e0b7d6c31", sizeof(r->sandbox_id));
	r->shell = 0;
	r->argc = 3;
	r->argv = calloc(4, sizeof(char *));
	assert_non_null(r->argv);
	r->argv[0] = strdup("python3");
	r->argv[1] = strdup("-c");
	r->argv[2] = strdup("print(\"h\\u00e9\")\n\t\xc3\xa9");
	r->workdir = strdup("/workspace/d\xc3\xa9j\xc3\xa0");
	r->client_id = strdup("build-\"1\"");
	memset(r->digest, 'a', 64);
	memset(r->exec_id, 'b', 64);
	r->pid = 4242;
	r->started_at = 1764621602.053406;
	r->has_timeout = 1;
	r->timeout_seconds = 2.5;
	r->tty = 1;
	r->stdin_open = 1;
	r->cols = 120;
	r->rows = 40;
	r->status = PROCESS_KILLED;
	r->has_exit_code = 1;
	r->exit_code = 137;
	r->has_ended_at = 1;
	r->ended_at = 1764621702.5;
	r->output_bytes = 1ULL << 40;
}

static void
test_store_process_round_trip(void **state)
{
	struct process_record	 a, b;
	char			*text, *again;
	size_t			 i;

	fill_record(&a);
	text = store_process_to_json(&a);
	assert_non_null(text);
	assert_int_equal(store_process_from_json(text, &b), 0);
	assert_string_equal(b.id, a.id);
	assert_string_equal(b.sandbox_id, a.sandbox_id);
	assert_int_equal(b.argc, a.argc);
	for (i = 0; i < a.argc; i++)
		assert_string_equal(b.argv[i], a.argv[i]);
	assert_string_equal(b.workdir, a.workdir);
	assert_string_equal(b.client_id, a.client_id);
	assert_string_equal(b.digest, a.digest);
	assert_string_equal(b.exec_id, a.exec_id);
	assert_int_equal(b.pid, 4242);
	assert_true(b.started_at == a.started_at);
	assert_true(b.timeout_seconds == 2.5);
	assert_int_equal(b.status, PROCESS_KILLED);
	assert_int_equal(b.exit_code, 137);
	assert_int_equal(b.output_bytes, 1ULL << 40);
	assert_int_equal(b.cols, 120);
	again = store_process_to_json(&b);
	assert_string_equal(again, text);
	free(again);
	free(text);
	process_record_free(&b);
	/* Nulls stay nulls. */
	a.has_timeout = a.has_exit_code = a.has_ended_at = 0;
	free(a.client_id);
	a.client_id = NULL;
	text = store_process_to_json(&a);
	assert_non_null(strstr(text, "\"client_id\": null"));
	assert_int_equal(store_process_from_json(text, &b), 0);
	assert_null(b.client_id);
	assert_int_equal(b.has_timeout, 0);
	assert_int_equal(b.has_exit_code, 0);
	free(text);
	process_record_free(&b);
	process_record_free(&a);
}

static void
test_store_process_refuses(void **state)
{
	static const char *const bad[] = {
		"", "{}", "[]", "null",
		/* a status that is none */
		"{\"argv\": [\"a\"], \"client_id\": null, \"cols\": 0, "
		"\"digest\": \"d\", \"ended_at\": null, \"exec_id\": \"e\", "
		"\"exit_code\": null, \"id\": \"proc_0123456789abcdef\", "
		"\"output_bytes\": 0, \"pid\": 5, \"rows\": 0, \"running\": 1, "
		"\"sandbox_id\": \"sb_4f1c2a9e0b7d6c31\", \"shell\": 0, "
		"\"started_at\": 1.5, \"status\": \"sleeping\", \"stdin\": 0, "
		"\"timeout_seconds\": null, \"tty\": 0, \"workdir\": \"/w\"}",
	};
	struct process_record	 r, ok;
	char			*text, *p;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(store_process_from_json(bad[i], &r), -1);
	/* Each of a good record's fields broken in turn. */
	fill_record(&ok);
	text = store_process_to_json(&ok);
	process_record_free(&ok);
	p = strstr(text, "\"proc_");
	p[1] = 'x';
	assert_int_equal(store_process_from_json(text, &r), -1);
	p[1] = 'p';
	p = strstr(text, "\"running\": 0");
	assert_non_null(p);
	p[11] = '7';
	assert_int_equal(store_process_from_json(text, &r), -1);
	p[11] = '0';
	p = strstr(text, "\"cols\": 120");
	p[8] = '-';		/* -20: no tty has that */
	assert_int_equal(store_process_from_json(text, &r), -1);
	p[8] = '1';
	assert_int_equal(store_process_from_json(text, &r), 0);
	process_record_free(&r);
	free(text);
}

/* The codecs: a round trip, and every lie of a short or bad field. */
static void
test_process_msg_codecs(void **state)
{
	struct docker_process_started	 s = { NULL, 0 }, g;
	struct process_signal		 ps, pg;
	struct process_resize		 rs, rg;
	struct imsg			 im;
	struct msgw			 w;
	char				 exec_id[65];
	char				 sb[] = "sb_x", proc[] = "proc_y";

	memset(exec_id, 'f', 64);
	exec_id[64] = '\0';
	s.exec_id = exec_id;
	s.pid = 77;
	msgw_init(&w);
	msg_put_docker_process_started(&w, &s);
	memset(&im, 0, sizeof(im));
	im.data = w.buf;
	im.len = w.len;
	assert_int_equal(msg_get_docker_process_started(&im, &g), 0);
	assert_string_equal(g.exec_id, exec_id);
	free(g.exec_id);
	im.len = w.len - 1;
	assert_int_equal(msg_get_docker_process_started(&im, &g), -1);
	exec_id[3] = 'G';
	msgw_init(&w);
	msg_put_docker_process_started(&w, &s);
	im.data = w.buf;
	im.len = w.len;
	assert_int_equal(msg_get_docker_process_started(&im, &g), -1);
	/* Only the four signals. */
	ps.ref.sandbox_id = sb;
	ps.ref.process_id = proc;
	ps.signo = 15;
	msgw_init(&w);
	msg_put_process_signal(&w, &ps);
	im.data = w.buf;
	im.len = w.len;
	assert_int_equal(msg_get_process_signal(&im, &pg), 0);
	assert_int_equal(pg.signo, 15);
	process_ref_free(&pg.ref);
	ps.signo = 11;
	msgw_init(&w);
	msg_put_process_signal(&w, &ps);
	im.len = w.len;
	assert_int_equal(msg_get_process_signal(&im, &pg), -1);
	/* A tty size of 0 or past the maximum. */
	rs.ref = ps.ref;
	rs.cols = 0;
	rs.rows = 24;
	msgw_init(&w);
	msg_put_process_resize(&w, &rs);
	im.data = w.buf;
	im.len = w.len;
	assert_int_equal(msg_get_process_resize(&im, &rg), -1);
	rs.cols = PROCESS_TTY_MAX + 1;
	msgw_init(&w);
	msg_put_process_resize(&w, &rs);
	assert_int_equal(msg_get_process_resize(&im, &rg), -1);
	rs.cols = 80;
	msgw_init(&w);
	msg_put_process_resize(&w, &rs);
	assert_int_equal(msg_get_process_resize(&im, &rg), 0);
	process_ref_free(&rg.ref);
}

struct events {
	int		 n;
	uint64_t	 last;
	int		 exits;
};

static int
count_event(void *arg, enum pev_type type, uint64_t value,
    const unsigned char *data, size_t len, const struct pev_exit *x)
{
	struct events	*e = arg;

	e->n++;
	e->last = value;
	if (type == PEV_EXIT)
		e->exits++;
	return 0;
}

/* The event stream read back in pieces of every size; lies refused. */
static void
test_pev_stream(void **state)
{
	unsigned char		 buf[256];
	struct pev_parser	*pp;
	struct pev_exit		 x = { PROCESS_EXITED, 1, 3, 1000 };
	struct events		 e;
	size_t			 n = 0, cut;

	pp = malloc(sizeof(*pp));
	assert_non_null(pp);
	n += pev_header(buf + n, PEV_STDOUT, 5, 5);
	memcpy(buf + n, "hello", 5);
	n += 5;
	n += pev_header(buf + n, PEV_GAP, 0, 100);
	n += pev_header(buf + n, PEV_STDERR, 2, 107);
	memcpy(buf + n, "!!", 2);
	n += 2;
	n += pev_exit_event(buf + n, 107, &x);
	for (cut = 0; cut <= n; cut++) {
		memset(&e, 0, sizeof(e));
		pev_parser_init(pp);
		assert_int_equal(pev_parser_feed(pp, buf, cut, count_event,
		    &e), 0);
		assert_int_equal(pev_parser_feed(pp, buf + cut, n - cut,
		    count_event, &e), 0);
		assert_int_equal(e.n, 4);
		assert_int_equal(e.exits, 1);
		assert_true(pev_parser_clean(pp));
	}
	/* Anything after the exit, a seq going back, a bad type. */
	pev_parser_init(pp);
	memset(&e, 0, sizeof(e));
	assert_int_equal(pev_parser_feed(pp, buf, n, count_event, &e), 0);
	assert_int_equal(pev_parser_feed(pp, buf, 1, count_event, &e), -1);
	pev_parser_init(pp);
	pev_header(buf, PEV_STDOUT, 5, 4);
	assert_int_equal(pev_parser_feed(pp, buf, 21, count_event, &e), -1);
	pev_parser_init(pp);
	pev_header(buf, 9, 0, 4);
	assert_int_equal(pev_parser_feed(pp, buf, 16, count_event, &e), -1);
	pev_parser_init(pp);
	pev_header(buf, PEV_STDOUT, PEV_DATA_MAX + 1, PEV_DATA_MAX + 1);
	assert_int_equal(pev_parser_feed(pp, buf, 16, count_event, &e), -1);
	free(pp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_numbers_by_bytes),
		cmocka_unit_test(test_ring_coalesces),
		cmocka_unit_test(test_ring_drops_oldest_with_exact_gap),
		cmocka_unit_test(test_ring_keeps_characters_whole),
		cmocka_unit_test(test_ring_cuts_big_pieces),
		cmocka_unit_test(test_store_process_round_trip),
		cmocka_unit_test(test_store_process_refuses),
		cmocka_unit_test(test_process_msg_codecs),
		cmocka_unit_test(test_pev_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
