/*
 * The message codecs (common/sandbox_msg.c, common/file_msg.c,
 * common/process_msg.c, common/caller.c, common/metrics_msg.c,
 * common/labels_msg.c, common/stats_msg.c, common/docker_event_msg.c)
 * and the
 * payload reader under them (common/msg.c).  Input: a byte choosing a
 * decoder, then the payload a peer sent; past the decoders the byte
 * chooses a field list of msgr_* reads, given in the next bytes.
 *
 * A decoder either refuses the payload or takes all of it: then encoding
 * what it read gives back exactly the payload (fields are fixed-width and
 * strings length-prefixed, so there is one encoding of each value), and
 * decoding that again succeeds and encodes the same.
 */
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "file_msg.h"
#include "harness.h"
#include "metrics_msg.h"
#include "process_msg.h"
#include "stats_msg.h"

union value {
	struct create_request	 create_request;
	struct sandbox_info	 sandbox_info;
	struct exec_request	 exec_request;
	struct docker_create	 docker_create;
	struct docker_exec	 docker_exec;
	struct exec_exit	 exec_exit;
	struct file_request	 file_request;
	struct file_write	 file_write;
	struct file_write_ready	 file_write_ready;
	struct file_info	 file_info;
	struct snapshot_create	 snapshot_create;
	struct snapshot_info	 snapshot_info;
	struct rollback_request	 rollback_request;
	struct fork_request	 fork_request;
	struct tar_result	 tar_result;
	struct archive_get	 archive_get;
	struct archive_stat	 archive_stat;
	struct archive_put	 archive_put;
	struct process_request	 process_request;
	struct process_info	 process_info;
	struct process_ref	 process_ref;
	struct process_output	 process_output;
	struct process_stdin	 process_stdin;
	struct process_signal	 process_signal;
	struct process_resize	 process_resize;
	struct docker_process	 docker_process;
	struct docker_process_started docker_process_started;
	struct docker_process_signal docker_process_signal;
	struct docker_process_exec docker_process_exec;
	struct docker_process_state docker_process_state;
	struct caller		 caller;
	struct metrics_text	 metrics_text;
	struct metrics_rss	 metrics_rss;
	struct label_patch	 label_patch;
	struct label_filter	 label_filter;
	struct sandbox_stats	 sandbox_stats;
	struct docker_event	 docker_event;
	uint64_t		 u64;
	char			*str;
};

struct codec {
	int	(*get)(const struct imsg *, union value *);
	void	(*put)(struct msgw *, const union value *);
	void	(*free)(union value *);
};

/* Typed wrappers, so that one table holds every codec. */
#define CODEC(name)							\
static int								\
get_##name(const struct imsg *m, union value *v)			\
{									\
	return msg_get_##name(m, &v->name);				\
}									\
static void								\
put_##name(struct msgw *w, const union value *v)			\
{									\
	msg_put_##name(w, &v->name);					\
}									\
static void								\
free_##name(union value *v)						\
{									\
	name##_free(&v->name);						\
}

CODEC(create_request)
CODEC(sandbox_info)
CODEC(exec_request)
CODEC(docker_create)
CODEC(docker_exec)
CODEC(file_request)
CODEC(file_write)
CODEC(file_write_ready)
CODEC(file_info)
CODEC(snapshot_create)
CODEC(snapshot_info)
CODEC(rollback_request)
CODEC(fork_request)
CODEC(tar_result)
CODEC(archive_get)
CODEC(archive_stat)
CODEC(archive_put)
CODEC(process_request)
CODEC(process_info)
CODEC(process_ref)
CODEC(docker_process)
CODEC(docker_process_exec)
CODEC(caller)
CODEC(metrics_text)
CODEC(metrics_rss)
CODEC(label_patch)
CODEC(label_filter)

/* Process codecs whose values hold a ref or one string to free. */
#define CODEC_REF(name)							\
static int								\
get_##name(const struct imsg *m, union value *v)			\
{									\
	return msg_get_##name(m, &v->name);				\
}									\
static void								\
put_##name(struct msgw *w, const union value *v)			\
{									\
	msg_put_##name(w, &v->name);					\
}									\
static void								\
free_##name(union value *v)						\
{									\
	process_ref_free(&v->name.ref);					\
}
CODEC_REF(process_output)
CODEC_REF(process_stdin)
CODEC_REF(process_signal)
CODEC_REF(process_resize)

static int
get_docker_process_started(const struct imsg *m, union value *v)
{
	return msg_get_docker_process_started(m, &v->docker_process_started);
}

static void
put_docker_process_started(struct msgw *w, const union value *v)
{
	msg_put_docker_process_started(w, &v->docker_process_started);
}

static void
free_docker_process_started(union value *v)
{
	free(v->docker_process_started.exec_id);
}

static int
get_docker_process_signal(const struct imsg *m, union value *v)
{
	return msg_get_docker_process_signal(m, &v->docker_process_signal);
}

static void
put_docker_process_signal(struct msgw *w, const union value *v)
{
	msg_put_docker_process_signal(w, &v->docker_process_signal);
}

static void
free_docker_process_signal(union value *v)
{
	free(v->docker_process_signal.id);
}

static int
get_docker_process_state(const struct imsg *m, union value *v)
{
	return msg_get_docker_process_state(m, &v->docker_process_state);
}

static void
put_docker_process_state(struct msgw *w, const union value *v)
{
	msg_put_docker_process_state(w, &v->docker_process_state);
}

static void
free_nothing(union value *v)
{
}

static int
get_exec_exit(const struct imsg *m, union value *v)
{
	return msg_get_exec_exit(m, &v->exec_exit);
}

static void
put_exec_exit(struct msgw *w, const union value *v)
{
	msg_put_exec_exit(w, &v->exec_exit);
}

static int
get_sandbox_stats(const struct imsg *m, union value *v)
{
	return msg_get_sandbox_stats(m, &v->sandbox_stats);
}

static void
put_sandbox_stats(struct msgw *w, const union value *v)
{
	msg_put_sandbox_stats(w, &v->sandbox_stats);
}

static int
get_docker_event(const struct imsg *m, union value *v)
{
	return msg_get_docker_event(m, &v->docker_event);
}

static void
put_docker_event(struct msgw *w, const union value *v)
{
	msg_put_docker_event(w, &v->docker_event);
}

static int
get_u64(const struct imsg *m, union value *v)
{
	return msg_get_u64(m, &v->u64);
}

static void
put_u64(struct msgw *w, const union value *v)
{
	msg_put_u64(w, v->u64);
}

static void
free_str(union value *v)
{
	free(v->str);
}

static int
get_snapshot_list(const struct imsg *m, union value *v)
{
	return msg_get_snapshot_list(m, &v->str);
}

static void
put_snapshot_list(struct msgw *w, const union value *v)
{
	msg_put_snapshot_list(w, v->str);
}

/* Ids and the health backend's name travel as one string. */
static int
get_id(const struct imsg *m, union value *v)
{
	return (v->str = msg_get_string(m, MSG_MAX_ID)) == NULL ? -1 : 0;
}

static int
get_text(const struct imsg *m, union value *v)
{
	return (v->str = msg_get_string(m, MSG_MAX_STRING)) == NULL ? -1 : 0;
}

static void
put_string(struct msgw *w, const union value *v)
{
	msg_put_string(w, v->str);
}

#define C(name)	{ get_##name, put_##name, free_##name }
static const struct codec codecs[] = {
	C(create_request), C(sandbox_info), C(exec_request),
	C(docker_create), C(docker_exec), C(file_request), C(file_write),
	C(file_write_ready), C(file_info), C(snapshot_create),
	C(snapshot_info), C(rollback_request), C(fork_request),
	C(tar_result), C(archive_get), C(archive_stat), C(archive_put),
	{ get_exec_exit, put_exec_exit, free_nothing },
	{ get_u64, put_u64, free_nothing },
	{ get_snapshot_list, put_snapshot_list, free_str },
	{ get_id, put_string, free_str },
	{ get_text, put_string, free_str },
	C(process_request), C(process_info), C(process_ref),
	C(process_output), C(process_stdin), C(process_signal),
	C(process_resize), C(docker_process), C(docker_process_exec),
	C(docker_process_started), C(docker_process_signal),
	{ get_docker_process_state, put_docker_process_state, free_nothing },
	C(caller),
	C(metrics_text), C(metrics_rss),
	C(label_patch), C(label_filter),
	{ get_sandbox_stats, put_sandbox_stats, free_nothing },
	{ get_docker_event, put_docker_event, free_nothing },
};
#define NCODECS	(sizeof(codecs) / sizeof(codecs[0]))

static void
as_imsg(struct imsg *m, const void *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->data = (void *)(uintptr_t)data;
	m->len = len;
}

static void
codec_round_trip(const struct codec *c, const uint8_t *data, size_t len)
{
	union value	 v, v2;
	struct imsg	 m;
	struct msgw	 w, w2;

	as_imsg(&m, data, len);
	memset(&v, 0, sizeof(v));
	if (c->get(&m, &v) == -1)
		return;
	msgw_init(&w);
	c->put(&w, &v);
	CHECK(!w.overflow && w.len == len && memcmp(w.buf, data, len) == 0);
	as_imsg(&m, w.buf, w.len);
	memset(&v2, 0, sizeof(v2));
	CHECK(c->get(&m, &v2) == 0);
	msgw_init(&w2);
	c->put(&w2, &v2);
	CHECK(w2.len == w.len && memcmp(w2.buf, w.buf, w.len) == 0);
	c->free(&v);
	c->free(&v2);
}

/*
 * The reader alone: a field list (one byte per field: its kind, and for
 * a string its bound), read with msgr_*, written back with msgw_*.
 */
#define FIELDS_MAX	16
enum { F_U8, F_U32, F_U64, F_I64, F_DOUBLE, F_STR, F_KINDS };

struct field {
	int		 kind;
	size_t		 maxlen;
	uint64_t	 num;		/* a double's bits too */
	char		*str;
};

static void
field_read(struct msgr *r, struct field *f)
{
	double	 d;

	switch (f->kind) {
	case F_U8:
		f->num = msgr_u8(r);
		break;
	case F_U32:
		f->num = msgr_u32(r);
		break;
	case F_U64:
		f->num = msgr_u64(r);
		break;
	case F_I64:
		f->num = (uint64_t)msgr_i64(r);
		break;
	case F_DOUBLE:
		d = msgr_double(r);
		memcpy(&f->num, &d, sizeof(d));
		break;
	case F_STR:
		f->str = msgr_str(r, f->maxlen);
		CHECK(f->str == NULL || strlen(f->str) <= f->maxlen);
		break;
	}
	CHECK(r->off <= r->len);
}

static void
field_write(struct msgw *w, const struct field *f)
{
	double	 d;

	switch (f->kind) {
	case F_U8:
		msgw_u8(w, (uint8_t)f->num);
		break;
	case F_U32:
		msgw_u32(w, (uint32_t)f->num);
		break;
	case F_U64:
		msgw_u64(w, f->num);
		break;
	case F_I64:
		msgw_i64(w, (int64_t)f->num);
		break;
	case F_DOUBLE:
		memcpy(&d, &f->num, sizeof(d));
		msgw_double(w, d);
		break;
	case F_STR:
		msgw_str(w, f->str);
		break;
	}
}

static void
fields_round_trip(const uint8_t *data, size_t len)
{
	static const size_t	 maxlen[] = { 0, 1, 64, MSG_MAX_STRING };
	struct field		 f[FIELDS_MAX];
	struct imsg		 m;
	struct msgr		 r;
	struct msgw		 w;
	size_t			 n, i;

	if (len < 1 || len < 1 + (n = data[0] % (FIELDS_MAX + 1)))
		return;
	memset(f, 0, sizeof(f));
	for (i = 0; i < n; i++) {
		f[i].kind = data[1 + i] % F_KINDS;
		f[i].maxlen = maxlen[(data[1 + i] / F_KINDS) % 4];
	}
	data += 1 + n;
	len -= 1 + n;
	as_imsg(&m, data, len);
	msgr_init(&r, &m);
	for (i = 0; i < n; i++)
		field_read(&r, &f[i]);
	if (msgr_end(&r) == 0) {
		msgw_init(&w);
		for (i = 0; i < n; i++)
			field_write(&w, &f[i]);
		CHECK(!w.overflow && w.len == len &&
		    memcmp(w.buf, data, len) == 0);
	}
	for (i = 0; i < n; i++)
		free(f[i].str);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1 || len - 1 > IMSG_MAX_PAYLOAD)
		return 0;
	if (data[0] < NCODECS)
		codec_round_trip(&codecs[data[0]], data + 1, len - 1);
	else
		fields_round_trip(data + 1, len - 1);
	return 0;
}
