/*
 * Codecs of the process messages and of the PROCESS_OUTPUT event stream
 * (process_msg.h).  Exact length, as every codec here: a field short, a
 * boolean not 0 or 1, or bytes left over make the get fail.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "process_msg.h"

static const char *const status_names[] = {
	NULL, "running", "exited", "killed", "timed_out", "lost"
};

const char *
process_status_name(enum process_status s)
{
	if ((int)s < PROCESS_RUNNING || s > PROCESS_STATUS_MAX)
		return NULL;
	return status_names[s];
}

static const struct {
	const char	*name;
	int		 signo;
} signals[] = {
	{ "TERM", SIGTERM }, { "INT", SIGINT }, { "KILL", SIGKILL },
	{ "HUP", SIGHUP }
};
#define NSIGNALS	(sizeof(signals) / sizeof(signals[0]))

int
process_signal_number(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < NSIGNALS; i++)
		if (strcmp(name, signals[i].name) == 0)
			return signals[i].signo;
	return 0;
}

const char *
process_signal_name(int signo)
{
	size_t	 i;

	for (i = 0; i < NSIGNALS; i++)
		if (signals[i].signo == signo)
			return signals[i].name;
	return NULL;
}

/* --- apid <-> managerd ------------------------------------------------------ */

void
msg_put_process_request(struct msgw *w, const struct process_request *p)
{
	msgw_str(w, p->sandbox_id);
	msgw_u8(w, p->shell ? 1 : 0);
	msg_put_argv(w, p->argc, p->argv);
	msg_put_env(w, &p->env);
	msgw_str(w, p->workdir);
	msgw_u8(w, p->has_timeout ? 1 : 0);
	msgw_double(w, p->timeout_seconds);
	msgw_u8(w, p->tty ? 1 : 0);
	msgw_u8(w, p->stdin_open ? 1 : 0);
	msgw_u32(w, p->cols);
	msgw_u32(w, p->rows);
	msgw_str(w, p->client_id);
}

static int
tty_size_ok(uint32_t cols, uint32_t rows)
{
	return cols <= PROCESS_TTY_MAX && rows <= PROCESS_TTY_MAX;
}

int
msg_get_process_request(const struct imsg *imsg, struct process_request *p)
{
	struct msgr	 r;

	memset(p, 0, sizeof(*p));
	msgr_init(&r, imsg);
	p->sandbox_id = msgr_str(&r, MSG_MAX_ID);
	p->shell = msg_get_bool(&r);
	if (msg_get_argv(&r, &p->argc, &p->argv) == -1 ||
	    msg_get_env(&r, &p->env) == -1)
		goto bad;
	p->workdir = msgr_str(&r, MSG_MAX_PATH);
	p->has_timeout = msg_get_bool(&r);
	p->timeout_seconds = msgr_double(&r);
	p->tty = msg_get_bool(&r);
	p->stdin_open = msg_get_bool(&r);
	p->cols = msgr_u32(&r);
	p->rows = msgr_u32(&r);
	p->client_id = msgr_str(&r, PROCESS_CLIENT_ID_MAX);
	if (msgr_end(&r) == -1 || p->sandbox_id == NULL ||
	    (p->shell && p->argc != 1) || !tty_size_ok(p->cols, p->rows))
		goto bad;
	return 0;
bad:
	process_request_free(p);
	return -1;
}

void
process_request_free(struct process_request *p)
{
	free(p->sandbox_id);
	msg_free_argv(p->argv);
	env_list_free(&p->env);
	free(p->workdir);
	free(p->client_id);
	memset(p, 0, sizeof(*p));
}

void
msg_put_process_info(struct msgw *w, const struct process_info *p)
{
	msgw_str(w, p->id);
	msgw_str(w, p->sandbox_id);
	msgw_u8(w, p->shell ? 1 : 0);
	msg_put_argv(w, p->argc, p->argv);
	msgw_str(w, p->workdir);
	msgw_u8(w, (uint8_t)p->status);
	msgw_u8(w, p->running ? 1 : 0);
	msgw_u8(w, p->has_exit_code ? 1 : 0);
	msgw_i64(w, p->exit_code);
	msgw_double(w, p->started_at);
	msgw_u8(w, p->has_ended_at ? 1 : 0);
	msgw_double(w, p->ended_at);
	msgw_u8(w, p->has_timeout ? 1 : 0);
	msgw_double(w, p->timeout_seconds);
	msgw_u8(w, p->tty ? 1 : 0);
	msgw_u8(w, p->stdin_open ? 1 : 0);
	msgw_u32(w, p->cols);
	msgw_u32(w, p->rows);
	msgw_str(w, p->client_id);
	msgw_u64(w, p->output_bytes);
	msgw_u64(w, p->kept_bytes);
	msgw_u64(w, p->dropped_bytes);
	msgw_u8(w, p->existed ? 1 : 0);
}

int
msg_get_process_info(const struct imsg *imsg, struct process_info *p)
{
	struct msgr	 r;
	uint8_t		 status;

	memset(p, 0, sizeof(*p));
	msgr_init(&r, imsg);
	p->id = msgr_str(&r, MSG_MAX_ID);
	p->sandbox_id = msgr_str(&r, MSG_MAX_ID);
	p->shell = msg_get_bool(&r);
	if (msg_get_argv(&r, &p->argc, &p->argv) == -1)
		goto bad;
	p->workdir = msgr_str(&r, MSG_MAX_PATH);
	status = msgr_u8(&r);
	p->status = (enum process_status)status;
	p->running = msg_get_bool(&r);
	p->has_exit_code = msg_get_bool(&r);
	p->exit_code = msgr_i64(&r);
	p->started_at = msgr_double(&r);
	p->has_ended_at = msg_get_bool(&r);
	p->ended_at = msgr_double(&r);
	p->has_timeout = msg_get_bool(&r);
	p->timeout_seconds = msgr_double(&r);
	p->tty = msg_get_bool(&r);
	p->stdin_open = msg_get_bool(&r);
	p->cols = msgr_u32(&r);
	p->rows = msgr_u32(&r);
	p->client_id = msgr_str(&r, PROCESS_CLIENT_ID_MAX);
	p->output_bytes = msgr_u64(&r);
	p->kept_bytes = msgr_u64(&r);
	p->dropped_bytes = msgr_u64(&r);
	p->existed = msg_get_bool(&r);
	if (msgr_end(&r) == -1 || !id_is_process(p->id) ||
	    !id_is_sandbox(p->sandbox_id) || p->workdir == NULL ||
	    process_status_name(p->status) == NULL ||
	    (p->shell && p->argc != 1) || !tty_size_ok(p->cols, p->rows) ||
	    p->kept_bytes + p->dropped_bytes > p->output_bytes)
		goto bad;
	return 0;
bad:
	process_info_free(p);
	return -1;
}

void
process_info_free(struct process_info *p)
{
	free(p->id);
	free(p->sandbox_id);
	msg_free_argv(p->argv);
	free(p->workdir);
	free(p->client_id);
	memset(p, 0, sizeof(*p));
}

static void
put_ref(struct msgw *w, const struct process_ref *ref)
{
	msgw_str(w, ref->sandbox_id);
	msgw_str(w, ref->process_id);
}

static void
get_ref(struct msgr *r, struct process_ref *ref)
{
	ref->sandbox_id = msgr_str(r, MSG_MAX_ID);
	ref->process_id = msgr_str(r, MSG_MAX_ID);
	if (ref->sandbox_id == NULL || ref->process_id == NULL)
		r->error = 1;
}

void
msg_put_process_ref(struct msgw *w, const struct process_ref *ref)
{
	put_ref(w, ref);
}

int
msg_get_process_ref(const struct imsg *imsg, struct process_ref *ref)
{
	struct msgr	 r;

	memset(ref, 0, sizeof(*ref));
	msgr_init(&r, imsg);
	get_ref(&r, ref);
	if (msgr_end(&r) == -1) {
		process_ref_free(ref);
		return -1;
	}
	return 0;
}

void
process_ref_free(struct process_ref *ref)
{
	free(ref->sandbox_id);
	free(ref->process_id);
	memset(ref, 0, sizeof(*ref));
}

void
msg_put_process_output(struct msgw *w, const struct process_output *o)
{
	put_ref(w, &o->ref);
	msgw_u64(w, o->after);
	msgw_u8(w, o->follow ? 1 : 0);
}

int
msg_get_process_output(const struct imsg *imsg, struct process_output *o)
{
	struct msgr	 r;

	memset(o, 0, sizeof(*o));
	msgr_init(&r, imsg);
	get_ref(&r, &o->ref);
	o->after = msgr_u64(&r);
	o->follow = msg_get_bool(&r);
	if (msgr_end(&r) == -1) {
		process_ref_free(&o->ref);
		return -1;
	}
	return 0;
}

void
msg_put_process_stdin(struct msgw *w, const struct process_stdin *s)
{
	put_ref(w, &s->ref);
	msgw_u8(w, s->close_at_end ? 1 : 0);
}

int
msg_get_process_stdin(const struct imsg *imsg, struct process_stdin *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	get_ref(&r, &s->ref);
	s->close_at_end = msg_get_bool(&r);
	if (msgr_end(&r) == -1) {
		process_ref_free(&s->ref);
		return -1;
	}
	return 0;
}

void
msg_put_process_signal(struct msgw *w, const struct process_signal *s)
{
	put_ref(w, &s->ref);
	msgw_u32(w, s->signo);
}

int
msg_get_process_signal(const struct imsg *imsg, struct process_signal *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	get_ref(&r, &s->ref);
	s->signo = msgr_u32(&r);
	if (msgr_end(&r) == -1 ||
	    process_signal_name((int)s->signo) == NULL) {
		process_ref_free(&s->ref);
		return -1;
	}
	return 0;
}

static int
resize_ok(uint32_t cols, uint32_t rows)
{
	return cols >= 1 && rows >= 1 && tty_size_ok(cols, rows);
}

void
msg_put_process_resize(struct msgw *w, const struct process_resize *s)
{
	put_ref(w, &s->ref);
	msgw_u32(w, s->cols);
	msgw_u32(w, s->rows);
}

int
msg_get_process_resize(const struct imsg *imsg, struct process_resize *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	get_ref(&r, &s->ref);
	s->cols = msgr_u32(&r);
	s->rows = msgr_u32(&r);
	if (msgr_end(&r) == -1 || !resize_ok(s->cols, s->rows)) {
		process_ref_free(&s->ref);
		return -1;
	}
	return 0;
}

/* --- managerd <-> dockerd-proxy -------------------------------------------- */

void
msg_put_docker_process(struct msgw *w, const struct docker_process *d)
{
	msgw_str(w, d->id);
	msg_put_argv(w, d->argc, d->argv);
	msg_put_env(w, &d->env);
	msgw_str(w, d->workdir);
	msgw_u8(w, d->tty ? 1 : 0);
	msgw_u8(w, d->stdin_open ? 1 : 0);
	msgw_u32(w, d->cols);
	msgw_u32(w, d->rows);
}

int
msg_get_docker_process(const struct imsg *imsg, struct docker_process *d)
{
	struct msgr	 r;

	memset(d, 0, sizeof(*d));
	msgr_init(&r, imsg);
	d->id = msgr_str(&r, MSG_MAX_ID);
	if (msg_get_argv(&r, &d->argc, &d->argv) == -1 ||
	    msg_get_env(&r, &d->env) == -1)
		goto bad;
	d->workdir = msgr_str(&r, MSG_MAX_PATH);
	d->tty = msg_get_bool(&r);
	d->stdin_open = msg_get_bool(&r);
	d->cols = msgr_u32(&r);
	d->rows = msgr_u32(&r);
	if (msgr_end(&r) == -1 || !id_is_sandbox(d->id) || d->argc == 0 ||
	    d->workdir == NULL || d->workdir[0] != '/' ||
	    !tty_size_ok(d->cols, d->rows))
		goto bad;
	return 0;
bad:
	docker_process_free(d);
	return -1;
}

void
docker_process_free(struct docker_process *d)
{
	free(d->id);
	msg_free_argv(d->argv);
	env_list_free(&d->env);
	free(d->workdir);
	memset(d, 0, sizeof(*d));
}

/* Docker's ids: 64 lowercase hex digits. */
static int
exec_id_ok(const char *id)
{
	size_t	 i;

	if (id == NULL || strlen(id) != 64)
		return 0;
	for (i = 0; i < 64; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return 1;
}

void
msg_put_docker_process_started(struct msgw *w,
    const struct docker_process_started *s)
{
	msgw_str(w, s->exec_id);
	msgw_i64(w, s->pid);
}

int
msg_get_docker_process_started(const struct imsg *imsg,
    struct docker_process_started *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->exec_id = msgr_str(&r, 64);
	s->pid = msgr_i64(&r);
	if (msgr_end(&r) == -1 || !exec_id_ok(s->exec_id) || s->pid <= 0 ||
	    s->pid > 0x7fffffff) {
		free(s->exec_id);
		s->exec_id = NULL;
		return -1;
	}
	return 0;
}

void
msg_put_docker_process_signal(struct msgw *w,
    const struct docker_process_signal *s)
{
	msgw_str(w, s->id);
	msgw_i64(w, s->pid);
	msgw_u32(w, s->signo);
	msgw_u8(w, s->tree ? 1 : 0);
}

int
msg_get_docker_process_signal(const struct imsg *imsg,
    struct docker_process_signal *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->id = msgr_str(&r, MSG_MAX_ID);
	s->pid = msgr_i64(&r);
	s->signo = msgr_u32(&r);
	s->tree = msg_get_bool(&r);
	if (msgr_end(&r) == -1 || !id_is_sandbox(s->id) || s->pid <= 1 ||
	    s->pid > 0x7fffffff || process_signal_name((int)s->signo) ==
	    NULL) {
		free(s->id);
		s->id = NULL;
		return -1;
	}
	return 0;
}

void
msg_put_docker_process_exec(struct msgw *w,
    const struct docker_process_exec *x)
{
	msgw_str(w, x->id);
	msgw_str(w, x->exec_id);
	msgw_u32(w, x->cols);
	msgw_u32(w, x->rows);
}

int
msg_get_docker_process_exec(const struct imsg *imsg,
    struct docker_process_exec *x)
{
	struct msgr	 r;

	memset(x, 0, sizeof(*x));
	msgr_init(&r, imsg);
	x->id = msgr_str(&r, MSG_MAX_ID);
	x->exec_id = msgr_str(&r, 64);
	x->cols = msgr_u32(&r);
	x->rows = msgr_u32(&r);
	if (msgr_end(&r) == -1 || !id_is_sandbox(x->id) ||
	    !exec_id_ok(x->exec_id) || !tty_size_ok(x->cols, x->rows)) {
		docker_process_exec_free(x);
		return -1;
	}
	return 0;
}

void
docker_process_exec_free(struct docker_process_exec *x)
{
	free(x->id);
	free(x->exec_id);
	memset(x, 0, sizeof(*x));
}

void
msg_put_docker_process_state(struct msgw *w,
    const struct docker_process_state *s)
{
	msgw_u8(w, s->exists ? 1 : 0);
	msgw_u8(w, s->running ? 1 : 0);
	msgw_u8(w, s->has_exit_code ? 1 : 0);
	msgw_i64(w, s->exit_code);
}

int
msg_get_docker_process_state(const struct imsg *imsg,
    struct docker_process_state *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->exists = msg_get_bool(&r);
	s->running = msg_get_bool(&r);
	s->has_exit_code = msg_get_bool(&r);
	s->exit_code = msgr_i64(&r);
	if (msgr_end(&r) == -1 || (!s->exists && (s->running ||
	    s->has_exit_code)) || (s->running && s->has_exit_code))
		return -1;
	return 0;
}

/* --- the event stream ------------------------------------------------------ */

static void
be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void
be64(unsigned char *p, uint64_t v)
{
	be32(p, (uint32_t)(v >> 32));
	be32(p + 4, (uint32_t)v);
}

static uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

size_t
pev_header(unsigned char buf[PEV_HEADER_LEN], enum pev_type type,
    uint32_t len, uint64_t value)
{
	memset(buf, 0, PEV_HEADER_LEN);
	buf[0] = (unsigned char)type;
	be32(buf + 4, len);
	be64(buf + 8, value);
	return PEV_HEADER_LEN;
}

size_t
pev_exit_event(unsigned char buf[PEV_HEADER_LEN + PEV_EXIT_LEN],
    uint64_t last_seq, const struct pev_exit *x)
{
	unsigned char	*p = buf + PEV_HEADER_LEN;

	pev_header(buf, PEV_EXIT, PEV_EXIT_LEN, last_seq);
	memset(p, 0, PEV_EXIT_LEN);
	p[0] = (unsigned char)x->status;
	p[1] = x->has_exit_code ? 1 : 0;
	be64(p + 8, (uint64_t)x->exit_code);
	be64(p + 16, x->ended_at_ms);
	return PEV_HEADER_LEN + PEV_EXIT_LEN;
}

void
pev_parser_init(struct pev_parser *pp)
{
	memset(pp, 0, sizeof(*pp));
}

int
pev_parser_clean(const struct pev_parser *pp)
{
	return !pp->failed && pp->head_len == 0;
}

/* A whole header: 0 if it may start an event, -1 if it lies. */
static int
pev_head_check(struct pev_parser *pp)
{
	const unsigned char	*h = pp->head;
	uint32_t		 len = rd32(h + 4);
	uint64_t		 value = rd64(h + 8);

	if (h[1] != 0 || h[2] != 0 || h[3] != 0)
		return -1;
	pp->type = (enum pev_type)h[0];
	pp->value = value;
	pp->left = len;
	pp->data_len = 0;
	switch (pp->type) {
	case PEV_STDOUT:
	case PEV_STDERR:
		/* seq is where the data ends: past the last, by its length. */
		if (len == 0 || len > PEV_DATA_MAX || value < len ||
		    value - len < pp->last_seq)
			return -1;
		pp->last_seq = value;
		return 0;
	case PEV_GAP:
		return len == 0 && value > 0 ? 0 : -1;
	case PEV_EXIT:
		return len == PEV_EXIT_LEN && value >= pp->last_seq ? 0 : -1;
	default:
		return -1;
	}
}

static int
pev_emit(struct pev_parser *pp, pev_cb cb, void *arg)
{
	struct pev_exit		 x;
	const unsigned char	*p = pp->data;

	pp->head_len = 0;
	if (pp->type != PEV_EXIT)
		return cb(arg, pp->type, pp->value, pp->data, pp->data_len,
		    NULL);
	memset(&x, 0, sizeof(x));
	x.status = (enum process_status)p[0];
	x.has_exit_code = p[1];
	x.exit_code = (int64_t)rd64(p + 8);
	x.ended_at_ms = rd64(p + 16);
	if (process_status_name(x.status) == NULL || x.has_exit_code > 1 ||
	    p[2] | p[3] | p[4] | p[5] | p[6] | p[7])
		return -1;
	pp->ended = 1;
	return cb(arg, PEV_EXIT, pp->value, NULL, 0, &x);
}

int
pev_parser_feed(struct pev_parser *pp, const unsigned char *buf, size_t n,
    pev_cb cb, void *arg)
{
	size_t	 take;

	while (n > 0 && !pp->failed) {
		if (pp->ended)
			goto bad;
		if (pp->head_len < PEV_HEADER_LEN) {
			take = PEV_HEADER_LEN - pp->head_len;
			take = take < n ? take : n;
			memcpy(pp->head + pp->head_len, buf, take);
			pp->head_len += take;
			buf += take;
			n -= take;
			if (pp->head_len < PEV_HEADER_LEN)
				break;
			if (pev_head_check(pp) == -1)
				goto bad;
		}
		take = pp->left < n ? pp->left : n;
		memcpy(pp->data + pp->data_len, buf, take);
		pp->data_len += take;
		pp->left -= (uint32_t)take;
		buf += take;
		n -= take;
		if (pp->left == 0 && pev_emit(pp, cb, arg) == -1)
			goto bad;
	}
	return pp->failed ? -1 : 0;
bad:
	pp->failed = 1;
	return -1;
}
