/*
 * The upload's payloads (common/file_msg.c): FILE_WRITE_BEGIN's
 * file_write, FILE_WRITE_READY with its directory members, ARCHIVE_HEAD
 * and ARCHIVE_STAT.  Round trips with names of any bytes, and every
 * malformed payload a lying peer could send: short, long, out of bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "file_msg.h"

/* Names as a sandbox may make them: Latin-1, newline, space, UTF-8. */
static char odd_path[] = "/workspace/caf\xe9/a b\nc/\xc3\xbc\xff";

static void
as_imsg(struct imsg *imsg, struct msgw *w)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	imsg->data = w->buf;
	imsg->len = w->len;
}

typedef int	(*decode_fn)(const struct imsg *, void *);

/* Every strict prefix of w and w plus one byte: all refused. */
static void
assert_exact_length(struct msgw *w, decode_fn decode, void *out)
{
	struct imsg	 imsg;
	size_t		 len, full = w->len;

	as_imsg(&imsg, w);
	for (len = 0; len < full; len++) {
		imsg.len = len;
		assert_int_equal(decode(&imsg, out), -1);
	}
	msgw_u8(w, 0);
	as_imsg(&imsg, w);
	assert_int_equal(decode(&imsg, out), -1);
	w->len = full;
}

static int
decode_write(const struct imsg *imsg, void *out)
{
	return msg_get_file_write(imsg, out);
}

static int
decode_ready(const struct imsg *imsg, void *out)
{
	return msg_get_file_write_ready(imsg, out);
}

static int
decode_spool(const struct imsg *imsg, void *out)
{
	return msg_get_file_spool(imsg, out);
}

static int
decode_head(const struct imsg *imsg, void *out)
{
	return msg_get_archive_head(imsg, out);
}

static int
decode_stat(const struct imsg *imsg, void *out)
{
	return msg_get_archive_stat(imsg, out);
}

static void
test_type_names(void **state)
{
	assert_string_equal(msg_type_name(MSG_FILE_WRITE_BEGIN),
	    "FILE_WRITE_BEGIN");
	assert_string_equal(msg_type_name(MSG_FILE_WRITE_COMMIT),
	    "FILE_WRITE_COMMIT");
	assert_string_equal(msg_type_name(MSG_FILE_WRITE_ABORT),
	    "FILE_WRITE_ABORT");
	assert_string_equal(msg_type_name(MSG_FILE_SPOOL), "FILE_SPOOL");
	assert_string_equal(msg_type_name(MSG_DOCKER_ARCHIVE_HEAD),
	    "DOCKER_ARCHIVE_HEAD");
}

/* BEGIN of a chunked body: the size says "unknown". */
static void
test_write_begin(void **state)
{
	struct file_write	 in, out;
	struct msgw		 w;
	struct imsg		 imsg;
	char			 id[] = "sb_0123456789abcdef";

	in.sandbox_id = id;
	in.path = odd_path;
	in.mode = 07777;
	in.size = FILE_WRITE_SIZE_UNKNOWN;
	msgw_init(&w);
	msg_put_file_write(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_write(&imsg, &out), 0);
	assert_string_equal(out.path, odd_path);
	assert_int_equal(out.mode, 07777);
	assert_true(out.size == UINT64_MAX);
	file_write_free(&out);
	assert_exact_length(&w, decode_write, &out);
	/* No path at all is malformed, not "empty". */
	in.path = NULL;
	msgw_init(&w);
	msg_put_file_write(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_write(&imsg, &out), -1);
}

static void
ready_init(struct file_write_ready *f, char *name, uint32_t ndirs)
{
	uint32_t	 i;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->uid = 1000;
	f->gid = 1001;
	f->mode = 0644;
	f->mtime = 1700000000;
	f->ndirs = ndirs;
	for (i = 0; i < ndirs && i < FILE_WRITE_MAX_DIRS; i++) {
		f->dirs[i].mode = i == 0 ? 02775 : 0755;
		f->dirs[i].mtime = -1 - (int64_t)i;
		f->dirs[i].mtime_nsec = 999999999;
	}
}

static int
ready_decodes(const struct file_write_ready *in)
{
	struct file_write_ready	 out;
	struct msgw		 w;
	struct imsg		 imsg;
	int			 r;

	msgw_init(&w);
	msg_put_file_write_ready(&w, in);
	if (w.overflow)
		return -1;
	as_imsg(&imsg, &w);
	if ((r = msg_get_file_write_ready(&imsg, &out)) == 0)
		file_write_ready_free(&out);
	return r;
}

static void
test_ready_roundtrip(void **state)
{
	struct file_write_ready	 in, out;
	struct msgw		 w;
	struct imsg		 imsg;
	char			 name[] = "caf\xe9/a b\nc/\xff";

	ready_init(&in, name, 2);
	msgw_init(&w);
	msg_put_file_write_ready(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_write_ready(&imsg, &out), 0);
	assert_string_equal(out.name, name);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 1001);
	assert_int_equal(out.mode, 0644);
	assert_int_equal(out.mtime, 1700000000);
	assert_int_equal(out.ndirs, 2);
	assert_int_equal(out.dirs[0].mode, 02775);
	assert_int_equal(out.dirs[1].mtime, -2);
	assert_int_equal(out.dirs[1].mtime_nsec, 999999999);
	file_write_ready_free(&out);
	assert_null(out.name);
	assert_exact_length(&w, decode_ready, &out);
}

/* FILE_SPOOL: the bound alone (a bare spool), or the bound and a plan. */
static void
test_spool(void **state)
{
	struct file_spool	 in, out;
	struct msgw		 w;
	struct imsg		 imsg;
	char			 name[] = "d/\xc3\xa9t\xe9";

	memset(&in, 0, sizeof(in));
	in.max_bytes = 10485760;
	msgw_init(&w);
	msg_put_file_spool(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_spool(&imsg, &out), 0);
	assert_true(out.max_bytes == 10485760);
	assert_int_equal(out.tar, 0);
	assert_null(out.plan.name);
	assert_exact_length(&w, decode_spool, &out);

	in.tar = 1;
	ready_init(&in.plan, name, 1);
	msgw_init(&w);
	msg_put_file_spool(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_spool(&imsg, &out), 0);
	assert_int_equal(out.tar, 1);
	assert_string_equal(out.plan.name, name);
	assert_int_equal(out.plan.ndirs, 1);
	assert_int_equal(out.plan.dirs[0].mode, 02775);
	file_spool_free(&out);
	assert_null(out.plan.name);
	assert_exact_length(&w, decode_spool, &out);

	/* Not 0 or 1, or a plan whose parents do not match its name. */
	w.buf[8] = 2;
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_spool(&imsg, &out), -1);
	in.plan.ndirs = 0;
	msgw_init(&w);
	msg_put_file_spool(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_spool(&imsg, &out), -1);
}

/* One directory member per parent: the count must match the name. */
static void
test_ready_dirs_match_name(void **state)
{
	static const char	*bad[] = { "", "/a", "a/", "a//b", "./a",
	    "a/./b", "a/..", "../a", "..", ".", NULL };
	struct file_write_ready	 in;
	char			 flat[] = "f", deep[] = "a/b/f";
	size_t			 i;

	ready_init(&in, flat, 0);
	assert_int_equal(ready_decodes(&in), 0);
	ready_init(&in, flat, 1);
	assert_int_equal(ready_decodes(&in), -1);
	ready_init(&in, deep, 2);
	assert_int_equal(ready_decodes(&in), 0);
	ready_init(&in, deep, 1);
	assert_int_equal(ready_decodes(&in), -1);
	ready_init(&in, deep, 3);
	assert_int_equal(ready_decodes(&in), -1);
	for (i = 0; bad[i] != NULL; i++) {
		ready_init(&in, (char *)(uintptr_t)bad[i], 0);
		assert_int_equal(ready_decodes(&in), -1);
		ready_init(&in, (char *)(uintptr_t)bad[i], 1);
		assert_int_equal(ready_decodes(&in), -1);
	}
	ready_init(&in, NULL, 0);
	assert_int_equal(ready_decodes(&in), -1);
}

static void
test_ready_bounds(void **state)
{
	struct file_write_ready	*in;
	char			*name;
	size_t			 i;

	assert_non_null(in = malloc(sizeof(*in)));
	/* "a/a/.../a" with FILE_WRITE_MAX_DIRS slashes, then one more. */
	assert_non_null(name = malloc(2 * FILE_WRITE_MAX_DIRS + 4));
	for (i = 0; i < FILE_WRITE_MAX_DIRS + 1; i++)
		memcpy(name + 2 * i, "a/", 2);
	name[2 * FILE_WRITE_MAX_DIRS + 1] = '\0';
	ready_init(in, name, FILE_WRITE_MAX_DIRS);
	assert_int_equal(ready_decodes(in), 0);
	name[2 * FILE_WRITE_MAX_DIRS + 1] = '/';
	name[2 * FILE_WRITE_MAX_DIRS + 2] = 'a';
	name[2 * FILE_WRITE_MAX_DIRS + 3] = '\0';
	/* The writer refuses what the reader would. */
	ready_init(in, name, FILE_WRITE_MAX_DIRS + 1);
	assert_int_equal(ready_decodes(in), -1);

	strlcpy(name, "a/a", 4);
	ready_init(in, name, 1);
	assert_int_equal(ready_decodes(in), 0);
	in->dirs[0].mode = 010000;
	assert_int_equal(ready_decodes(in), -1);
	in->dirs[0].mode = 07777;
	in->dirs[0].mtime_nsec = 1000000000;
	assert_int_equal(ready_decodes(in), -1);
	in->dirs[0].mtime_nsec = 0;
	in->mode = 010000;
	assert_int_equal(ready_decodes(in), -1);
	free(name);
	free(in);
}

/* A count the payload cannot hold is refused, not read past. */
static void
test_ready_count_lies(void **state)
{
	struct file_write_ready	 out;
	struct msgw		 w;
	struct imsg		 imsg;

	msgw_init(&w);
	msgw_str(&w, "a/f");
	msgw_u32(&w, 0);
	msgw_u32(&w, 0);
	msgw_u32(&w, 0644);
	msgw_i64(&w, 0);
	msgw_u32(&w, UINT32_MAX);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_file_write_ready(&imsg, &out), -1);
	assert_null(out.name);
}

static void
test_archive_head(void **state)
{
	struct archive_head	 in, out;
	struct msgw		 w;
	struct imsg		 imsg;
	char			 id[] = "sb_0123456789abcdef";
	char			 rel[] = "workspace/x";

	in.id = id;
	in.path = odd_path;
	msgw_init(&w);
	msg_put_archive_head(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_archive_head(&imsg, &out), 0);
	assert_string_equal(out.id, id);
	assert_string_equal(out.path, odd_path);
	archive_head_free(&out);
	assert_exact_length(&w, decode_head, &out);
	/* Only absolute paths; a path must be there. */
	in.path = rel;
	msgw_init(&w);
	msg_put_archive_head(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_archive_head(&imsg, &out), -1);
	in.path = NULL;
	msgw_init(&w);
	msg_put_archive_head(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_archive_head(&imsg, &out), -1);
}

static int
stat_decodes(const struct archive_stat *in, struct archive_stat *out)
{
	struct msgw	 w;
	struct imsg	 imsg;

	msgw_init(&w);
	msg_put_archive_stat(&w, in);
	as_imsg(&imsg, &w);
	return msg_get_archive_stat(&imsg, out);
}

static void
test_archive_stat(void **state)
{
	struct archive_stat	 in, out;
	struct msgw		 w;
	char			 target[] = "/workspace/d\xef\xbf\xbd";

	memset(&in, 0, sizeof(in));
	in.kind = ARCHIVE_KIND_SYMLINK;
	in.size = 14;
	in.mode = 07777;
	in.mtime = -86400;
	in.mtime_nsec = 999999999;
	in.link_target = target;
	assert_int_equal(stat_decodes(&in, &out), 0);
	assert_int_equal(out.kind, ARCHIVE_KIND_SYMLINK);
	assert_int_equal(out.size, 14);
	assert_int_equal(out.mode, 07777);
	assert_int_equal(out.mtime, -86400);
	assert_int_equal(out.mtime_nsec, 999999999);
	assert_string_equal(out.link_target, target);
	archive_stat_free(&out);
	msgw_init(&w);
	msg_put_archive_stat(&w, &in);
	assert_exact_length(&w, decode_stat, &out);

	in.mode = 010000;
	assert_int_equal(stat_decodes(&in, &out), -1);
	in.mode = 0;
	in.mtime_nsec = 1000000000;
	assert_int_equal(stat_decodes(&in, &out), -1);
	in.mtime_nsec = 0;
	in.kind = 0;
	assert_int_equal(stat_decodes(&in, &out), -1);
	in.kind = ARCHIVE_KIND_OTHER + 1;
	assert_int_equal(stat_decodes(&in, &out), -1);
	assert_null(out.link_target);
}

/* FILE_SPOOL and FILE_WRITE_COMMIT: one u64, exactly. */
static void
test_one_u64(void **state)
{
	struct msgw	 w;
	struct imsg	 imsg;
	uint64_t	 v;

	msgw_init(&w);
	msg_put_u64(&w, UINT64_C(10485760));
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_u64(&imsg, &v), 0);
	assert_true(v == 10485760);
	imsg.len = 7;
	assert_int_equal(msg_get_u64(&imsg, &v), -1);
	msgw_u8(&w, 0);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_u64(&imsg, &v), -1);
	imsg.len = 0;
	assert_int_equal(msg_get_u64(&imsg, &v), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_write_begin),
		cmocka_unit_test(test_ready_roundtrip),
		cmocka_unit_test(test_ready_dirs_match_name),
		cmocka_unit_test(test_ready_bounds),
		cmocka_unit_test(test_ready_count_lies),
		cmocka_unit_test(test_spool),
		cmocka_unit_test(test_archive_head),
		cmocka_unit_test(test_archive_stat),
		cmocka_unit_test(test_one_u64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
