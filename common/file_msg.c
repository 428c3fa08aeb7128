/*
 * Encode/decode pairs for the file, snapshot and archive payloads
 * (file_msg.h).  Each pair writes and reads the same fields in the same
 * order; a decoder fails on any short, long or out-of-bounds field.
 */
#include <stdlib.h>
#include <string.h>

#include "file_msg.h"

/* A boolean must be 0 or 1: anything else is a lying peer. */
static int
get_flag(struct msgr *r)
{
	uint8_t	 v = msgr_u8(r);

	if (v > 1)
		r->error = 1;
	return v;
}

/* A string that must be there (NULL is malformed). */
static char *
get_required(struct msgr *r, size_t maxlen)
{
	char	*s = msgr_str(r, maxlen);

	if (s == NULL)
		r->error = 1;
	return s;
}

void
file_request_free(struct file_request *f)
{
	free(f->sandbox_id);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void
msg_put_file_request(struct msgw *w, const struct file_request *f)
{
	msgw_str(w, f->sandbox_id);
	msgw_str(w, f->path);
}

int
msg_get_file_request(const struct imsg *imsg, struct file_request *f)
{
	struct msgr	 r;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	f->sandbox_id = get_required(&r, MSG_MAX_ID);
	f->path = msgr_str(&r, MSG_MAX_PATH);
	if (msgr_end(&r) == -1) {
		file_request_free(f);
		return -1;
	}
	return 0;
}

void
file_write_free(struct file_write *f)
{
	free(f->sandbox_id);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void
msg_put_file_write(struct msgw *w, const struct file_write *f)
{
	msgw_str(w, f->sandbox_id);
	msgw_str(w, f->path);
	msgw_u32(w, f->mode);
	msgw_u64(w, f->size);
}

int
msg_get_file_write(const struct imsg *imsg, struct file_write *f)
{
	struct msgr	 r;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	f->sandbox_id = get_required(&r, MSG_MAX_ID);
	f->path = get_required(&r, MSG_MAX_PATH);
	f->mode = msgr_u32(&r);
	f->size = msgr_u64(&r);
	if (msgr_end(&r) == -1) {
		file_write_free(f);
		return -1;
	}
	return 0;
}

void
file_write_ready_free(struct file_write_ready *f)
{
	free(f->name);
	memset(f, 0, sizeof(*f));
}

void
msg_put_file_write_ready(struct msgw *w, const struct file_write_ready *f)
{
	uint32_t	 i;

	if (f->ndirs > FILE_WRITE_MAX_DIRS) {
		w->overflow = 1;
		return;
	}
	msgw_str(w, f->name);
	msgw_u32(w, f->uid);
	msgw_u32(w, f->gid);
	msgw_u32(w, f->mode);
	msgw_i64(w, f->mtime);
	msgw_u32(w, f->ndirs);
	for (i = 0; i < f->ndirs; i++) {
		msgw_u32(w, f->dirs[i].mode);
		msgw_i64(w, f->dirs[i].mtime);
		msgw_u32(w, f->dirs[i].mtime_nsec);
	}
}

/*
 * A normalized name relative to /workspace: no empty, "." or ".."
 * component, no leading or trailing '/'.  Returns its number of '/', or
 * -1.
 */
static int
relative_name_slashes(const char *name)
{
	const char	*seg = name, *p;
	size_t		 n;
	int		 slashes = 0;

	for (;;) {
		p = seg + strcspn(seg, "/");
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return -1;
		if (*p == '\0')
			return slashes;
		slashes++;
		seg = p + 1;
	}
}

static void
get_write_dirs(struct msgr *r, struct file_write_ready *f)
{
	struct file_write_dir	*d;
	uint32_t		 i;

	f->ndirs = msgr_u32(r);
	if (f->ndirs > FILE_WRITE_MAX_DIRS) {
		r->error = 1;
		return;
	}
	for (i = 0; i < f->ndirs && !r->error; i++) {
		d = &f->dirs[i];
		d->mode = msgr_u32(r);
		d->mtime = msgr_i64(r);
		d->mtime_nsec = msgr_u32(r);
		if (d->mode > 07777 || d->mtime_nsec >= 1000000000U)
			r->error = 1;
	}
}

/* The plan, from r's position; r->error on anything malformed. */
static void
get_write_ready(struct msgr *r, struct file_write_ready *f)
{
	f->name = get_required(r, MSG_MAX_PATH);
	f->uid = msgr_u32(r);
	f->gid = msgr_u32(r);
	f->mode = msgr_u32(r);
	f->mtime = msgr_i64(r);
	get_write_dirs(r, f);
	/* One directory member per parent, no more, no fewer. */
	if (f->mode > 07777 || f->name == NULL ||
	    relative_name_slashes(f->name) != (int)f->ndirs)
		r->error = 1;
}

int
msg_get_file_write_ready(const struct imsg *imsg, struct file_write_ready *f)
{
	struct msgr	 r;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	get_write_ready(&r, f);
	if (msgr_end(&r) == -1) {
		file_write_ready_free(f);
		return -1;
	}
	return 0;
}

void
file_spool_free(struct file_spool *f)
{
	file_write_ready_free(&f->plan);
	memset(f, 0, sizeof(*f));
}

void
msg_put_file_spool(struct msgw *w, const struct file_spool *f)
{
	msgw_u64(w, f->max_bytes);
	msgw_u8(w, f->tar != 0);
	if (f->tar)
		msg_put_file_write_ready(w, &f->plan);
}

int
msg_get_file_spool(const struct imsg *imsg, struct file_spool *f)
{
	struct msgr	 r;
	uint8_t		 tar;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	f->max_bytes = msgr_u64(&r);
	tar = msgr_u8(&r);
	if (tar > 1)
		r.error = 1;
	f->tar = tar;
	if (f->tar && !r.error)
		get_write_ready(&r, &f->plan);
	if (msgr_end(&r) == -1) {
		file_spool_free(f);
		return -1;
	}
	return 0;
}

void
file_info_free(struct file_info *f)
{
	free(f->name);
	free(f->path);
	free(f->type);
	memset(f, 0, sizeof(*f));
}

void
msg_put_file_info(struct msgw *w, const struct file_info *f)
{
	msgw_str(w, f->name);
	msgw_str(w, f->path);
	msgw_str(w, f->type);
	msgw_u64(w, f->size);
	msgw_double(w, f->modified_at);
}

int
msg_get_file_info(const struct imsg *imsg, struct file_info *f)
{
	struct msgr	 r;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	f->name = get_required(&r, MSG_MAX_PATH);
	f->path = get_required(&r, MSG_MAX_PATH);
	f->type = get_required(&r, 16);
	f->size = msgr_u64(&r);
	f->modified_at = msgr_double(&r);
	if (msgr_end(&r) == -1) {
		file_info_free(f);
		return -1;
	}
	return 0;
}

void
msg_put_file_read_started(struct msgw *w, const struct file_read_started *f)
{
	msgw_u64(w, f->size);
	msgw_str(w, f->member);
}

int
msg_get_file_read_started(const struct imsg *imsg,
    struct file_read_started *f)
{
	struct msgr	 r;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	f->size = msgr_u64(&r);
	f->member = msgr_str(&r, MSG_MAX_PATH);
	if (msgr_end(&r) == -1 || (f->member != NULL &&
	    (f->member[0] == '\0' || f->member[0] == '/'))) {
		file_read_started_free(f);
		return -1;
	}
	return 0;
}

void
file_read_started_free(struct file_read_started *f)
{
	free(f->member);
	memset(f, 0, sizeof(*f));
}

void
snapshot_create_free(struct snapshot_create *s)
{
	free(s->sandbox_id);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

void
msg_put_snapshot_create(struct msgw *w, const struct snapshot_create *s)
{
	msgw_str(w, s->sandbox_id);
	msgw_str(w, s->name);
}

int
msg_get_snapshot_create(const struct imsg *imsg, struct snapshot_create *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->sandbox_id = get_required(&r, MSG_MAX_ID);
	s->name = msgr_str(&r, MSG_MAX_SNAPSHOT_NAME);
	if (msgr_end(&r) == -1) {
		snapshot_create_free(s);
		return -1;
	}
	return 0;
}

void
snapshot_info_free(struct snapshot_info *s)
{
	free(s->id);
	free(s->sandbox_id);
	free(s->name);
	free(s->image);
	memset(s, 0, sizeof(*s));
}

void
msg_put_snapshot_info(struct msgw *w, const struct snapshot_info *s)
{
	msgw_str(w, s->id);
	msgw_str(w, s->sandbox_id);
	msgw_str(w, s->name);
	msgw_str(w, s->image);
	msgw_u64(w, s->size_bytes);
	msgw_double(w, s->created_at);
}

int
msg_get_snapshot_info(const struct imsg *imsg, struct snapshot_info *s)
{
	struct msgr	 r;

	memset(s, 0, sizeof(*s));
	msgr_init(&r, imsg);
	s->id = get_required(&r, MSG_MAX_ID);
	s->sandbox_id = get_required(&r, MSG_MAX_ID);
	s->name = msgr_str(&r, MSG_MAX_SNAPSHOT_NAME);
	s->image = get_required(&r, MSG_MAX_IMAGE);
	s->size_bytes = msgr_u64(&r);
	s->created_at = msgr_double(&r);
	if (msgr_end(&r) == -1) {
		snapshot_info_free(s);
		return -1;
	}
	return 0;
}

void
msg_put_snapshot_list(struct msgw *w, const char *sandbox_id)
{
	msgw_u8(w, sandbox_id != NULL);
	msgw_str(w, sandbox_id);
}

int
msg_get_snapshot_list(const struct imsg *imsg, char **sandbox_id)
{
	struct msgr	 r;
	int		 has;

	msgr_init(&r, imsg);
	has = get_flag(&r);
	*sandbox_id = msgr_str(&r, MSG_MAX_ID);
	if ((has && *sandbox_id == NULL) || (!has && *sandbox_id != NULL))
		r.error = 1;
	if (msgr_end(&r) == -1) {
		free(*sandbox_id);
		*sandbox_id = NULL;
		return -1;
	}
	return 0;
}

void
rollback_request_free(struct rollback_request *q)
{
	free(q->sandbox_id);
	free(q->snapshot_id);
	memset(q, 0, sizeof(*q));
}

void
msg_put_rollback_request(struct msgw *w, const struct rollback_request *q)
{
	msgw_str(w, q->sandbox_id);
	msgw_str(w, q->snapshot_id);
}

int
msg_get_rollback_request(const struct imsg *imsg, struct rollback_request *q)
{
	struct msgr	 r;

	memset(q, 0, sizeof(*q));
	msgr_init(&r, imsg);
	q->sandbox_id = get_required(&r, MSG_MAX_ID);
	q->snapshot_id = get_required(&r, MSG_MAX_ID);
	if (msgr_end(&r) == -1) {
		rollback_request_free(q);
		return -1;
	}
	return 0;
}

void
fork_request_free(struct fork_request *q)
{
	free(q->snapshot_id);
	free(q->network_policy);
	labels_free(&q->labels);
	memset(q, 0, sizeof(*q));
}

void
msg_put_fork_request(struct msgw *w, const struct fork_request *q)
{
	msgw_str(w, q->snapshot_id);
	msgw_u8(w, q->has_timeout_seconds ? 1 : 0);
	msgw_i64(w, q->timeout_seconds);
	msgw_u8(w, q->has_network ? 1 : 0);
	msgw_u8(w, q->network ? 1 : 0);
	msgw_str(w, q->network_policy);
	msgw_u8(w, q->has_cpus ? 1 : 0);
	msgw_double(w, q->cpus);
	msgw_u8(w, q->has_memory_mb ? 1 : 0);
	msgw_i64(w, q->memory_mb);
	msg_put_labels(w, &q->labels);
}

int
msg_get_fork_request(const struct imsg *imsg, struct fork_request *q)
{
	struct msgr	 r;

	memset(q, 0, sizeof(*q));
	msgr_init(&r, imsg);
	q->snapshot_id = get_required(&r, MSG_MAX_ID);
	q->has_timeout_seconds = get_flag(&r);
	q->timeout_seconds = msgr_i64(&r);
	q->has_network = get_flag(&r);
	q->network = get_flag(&r);
	q->network_policy = msgr_str(&r, EGRESS_POLICY_TEXT_MAX);
	q->has_cpus = get_flag(&r);
	q->cpus = msgr_double(&r);
	q->has_memory_mb = get_flag(&r);
	q->memory_mb = msgr_i64(&r);
	if (msg_get_labels(&r, &q->labels) == -1 || msgr_end(&r) == -1) {
		fork_request_free(q);
		return -1;
	}
	return 0;
}

void
tar_result_free(struct tar_result *t)
{
	free(t->message);
	memset(t, 0, sizeof(*t));
}

void
msg_put_tar_result(struct msgw *w, const struct tar_result *t)
{
	msgw_u32(w, (uint32_t)t->errnum);
	msgw_u64(w, t->bytes);
	msgw_str(w, t->message);
}

int
msg_get_tar_result(const struct imsg *imsg, struct tar_result *t)
{
	struct msgr	 r;

	memset(t, 0, sizeof(*t));
	msgr_init(&r, imsg);
	t->errnum = (int32_t)msgr_u32(&r);
	t->bytes = msgr_u64(&r);
	t->message = msgr_str(&r, MSG_MAX_STRING);
	if (t->errnum < 0)
		r.error = 1;
	if (msgr_end(&r) == -1) {
		tar_result_free(t);
		return -1;
	}
	return 0;
}

void
archive_get_free(struct archive_get *a)
{
	free(a->id);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

void
msg_put_archive_get(struct msgw *w, const struct archive_get *a)
{
	msgw_str(w, a->id);
	msgw_str(w, a->path);
	msgw_u8(w, a->want);
	msgw_u64(w, a->max_bytes);
}

int
msg_get_archive_get(const struct imsg *imsg, struct archive_get *a)
{
	struct msgr	 r;

	memset(a, 0, sizeof(*a));
	msgr_init(&r, imsg);
	a->id = get_required(&r, MSG_MAX_ID);
	a->path = get_required(&r, MSG_MAX_PATH);
	a->want = msgr_u8(&r);
	a->max_bytes = msgr_u64(&r);
	if (a->want != ARCHIVE_WANT_FILE && a->want != ARCHIVE_WANT_TREE)
		r.error = 1;
	if (a->path != NULL && a->path[0] != '/')
		r.error = 1;
	if (msgr_end(&r) == -1) {
		archive_get_free(a);
		return -1;
	}
	return 0;
}

void
archive_head_free(struct archive_head *a)
{
	free(a->id);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

void
msg_put_archive_head(struct msgw *w, const struct archive_head *a)
{
	msgw_str(w, a->id);
	msgw_str(w, a->path);
}

int
msg_get_archive_head(const struct imsg *imsg, struct archive_head *a)
{
	struct msgr	 r;

	memset(a, 0, sizeof(*a));
	msgr_init(&r, imsg);
	a->id = get_required(&r, MSG_MAX_ID);
	a->path = get_required(&r, MSG_MAX_PATH);
	if (a->path != NULL && a->path[0] != '/')
		r.error = 1;
	if (msgr_end(&r) == -1) {
		archive_head_free(a);
		return -1;
	}
	return 0;
}

void
archive_stat_free(struct archive_stat *a)
{
	free(a->link_target);
	memset(a, 0, sizeof(*a));
}

void
msg_put_archive_stat(struct msgw *w, const struct archive_stat *a)
{
	msgw_u8(w, a->kind);
	msgw_u64(w, a->size);
	msgw_u32(w, a->mode);
	msgw_i64(w, a->mtime);
	msgw_u32(w, a->mtime_nsec);
	msgw_str(w, a->link_target != NULL ? a->link_target : "");
}

int
msg_get_archive_stat(const struct imsg *imsg, struct archive_stat *a)
{
	struct msgr	 r;

	memset(a, 0, sizeof(*a));
	msgr_init(&r, imsg);
	a->kind = msgr_u8(&r);
	a->size = msgr_u64(&r);
	a->mode = msgr_u32(&r);
	a->mtime = msgr_i64(&r);
	a->mtime_nsec = msgr_u32(&r);
	a->link_target = get_required(&r, MSG_MAX_LINK_TARGET);
	if (a->kind < ARCHIVE_KIND_FILE || a->kind > ARCHIVE_KIND_OTHER ||
	    a->mode > 07777 || a->mtime_nsec >= 1000000000U)
		r.error = 1;
	if (msgr_end(&r) == -1) {
		archive_stat_free(a);
		return -1;
	}
	return 0;
}

void
archive_put_free(struct archive_put *a)
{
	free(a->id);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

void
msg_put_archive_put(struct msgw *w, const struct archive_put *a)
{
	msgw_str(w, a->id);
	msgw_str(w, a->path);
	msgw_u8(w, a->flags);
	msgw_i64(w, a->length);
}

int
msg_get_archive_put(const struct imsg *imsg, struct archive_put *a)
{
	struct msgr	 r;

	memset(a, 0, sizeof(*a));
	msgr_init(&r, imsg);
	a->id = get_required(&r, MSG_MAX_ID);
	a->path = get_required(&r, MSG_MAX_PATH);
	a->flags = msgr_u8(&r);
	a->length = msgr_i64(&r);
	if ((a->flags & ~(ARCHIVE_PUT_NO_REPLACE | ARCHIVE_PUT_PRIME |
	    ARCHIVE_PUT_WAIT)) != 0 || a->length < -1 ||
	    ((a->flags & ARCHIVE_PUT_PRIME) && a->length != -1) ||
	    ((a->flags & ARCHIVE_PUT_WAIT) && !(a->flags & ARCHIVE_PUT_PRIME)))
		r.error = 1;
	if (a->path != NULL && a->path[0] != '/')
		r.error = 1;
	if (msgr_end(&r) == -1) {
		archive_put_free(a);
		return -1;
	}
	return 0;
}

void
msg_put_u64(struct msgw *w, uint64_t v)
{
	msgw_u64(w, v);
}

int
msg_get_u64(const struct imsg *imsg, uint64_t *v)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	*v = msgr_u64(&r);
	return msgr_end(&r);
}

void
msg_put_snapshot_sink(struct msgw *w, uint64_t max_bytes, int copy)
{
	msgw_u64(w, max_bytes);
	msgw_u8(w, copy ? 1 : 0);
}

int
msg_get_snapshot_sink(const struct imsg *imsg, uint64_t *max_bytes,
    int *copy)
{
	struct msgr	 r;
	uint8_t		 c;

	msgr_init(&r, imsg);
	*max_bytes = msgr_u64(&r);
	c = msgr_u8(&r);
	*copy = c;
	return msgr_end(&r) == -1 || c > 1 ? -1 : 0;
}
