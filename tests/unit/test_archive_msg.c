/*
 * The archive worker's payloads (common/archive_msg.c): round trips of
 * every job kind, and every way a lying peer's payload can be malformed
 * (short, long, a job the worker may not run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "archive_msg.h"
#include "file_msg.h"

static void
as_imsg(struct imsg *imsg, struct msgw *w)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	imsg->data = w->buf;
	imsg->len = w->len;
}

static int
decode(const struct archive_job *in, struct archive_job *out)
{
	struct msgw	 w;
	struct imsg	 imsg;

	msgw_init(&w);
	msg_put_archive_job(&w, in);
	assert_false(w.overflow);
	as_imsg(&imsg, &w);
	return msg_get_archive_job(&imsg, out);
}

static struct archive_dir	 three_dirs[] = {
	{ 0755, 1700000000, 0 },
	{ 0700, -5, 999999999 },
	{ 07777, INT64_MAX, 1 },
};

static char	 upload_name[] = "a/b c/\xe9/f\ni le";

static const struct archive_job upload_job = {
	ARCHIVE_JOB_UPLOAD, 0, 12345, upload_name, 1000, 1001,
	0640, 1700000001, 3, three_dirs
};

static void
test_upload_roundtrip(void **state)
{
	struct archive_job	 out;
	uint32_t		 i;

	assert_int_equal(decode(&upload_job, &out), 0);
	assert_int_equal(out.kind, ARCHIVE_JOB_UPLOAD);
	assert_true(out.size == 12345);
	assert_string_equal(out.name, upload_job.name);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 1001);
	assert_int_equal(out.mode, 0640);
	assert_true(out.mtime == 1700000001);
	assert_int_equal(out.ndirs, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(out.dirs[i].mode, three_dirs[i].mode);
		assert_true(out.dirs[i].mtime == three_dirs[i].mtime);
		assert_int_equal(out.dirs[i].mtime_nsec,
		    three_dirs[i].mtime_nsec);
	}
	archive_job_free(&out);
	assert_null(out.name);
	assert_null(out.dirs);
}

/* FIRST_FILE may name its member: a relative path, nothing else. */
static void
test_first_file_member(void **state)
{
	static const char *const bad[] = { "", "/abs", "a//b", "a/../b",
	    "./a", "a/", NULL };
	struct archive_job	 in, out;
	size_t			 i;

	memset(&in, 0, sizeof(in));
	in.kind = ARCHIVE_JOB_FIRST_FILE;
	in.name = (char *)(uintptr_t)"workspace/caf\xe9.txt";
	assert_int_equal(decode(&in, &out), 0);
	assert_string_equal(out.name, "workspace/caf\xe9.txt");
	archive_job_free(&out);
	for (i = 0; bad[i] != NULL; i++) {
		in.name = (char *)(uintptr_t)bad[i];
		assert_int_equal(decode(&in, &out), -1);
	}
	in.name = (char *)(uintptr_t)"a/b";
	in.ndirs = 1;
	in.dirs = three_dirs;
	assert_int_equal(decode(&in, &out), -1);
}

static void
test_other_kinds_roundtrip(void **state)
{
	struct archive_job	 in, out;
	uint32_t		 kind;

	for (kind = ARCHIVE_JOB_FIRST_FILE; kind <= ARCHIVE_JOB_SPOOL;
	    kind++) {
		memset(&in, 0, sizeof(in));
		in.kind = kind;
		in.max_bytes = UINT64_MAX - kind;
		assert_int_equal(decode(&in, &out), 0);
		assert_int_equal(out.kind, kind);
		assert_true(out.max_bytes == UINT64_MAX - kind);
		assert_null(out.name);
		assert_int_equal(out.ndirs, 0);
		assert_null(out.dirs);
		archive_job_free(&out);
	}
}

static void
test_nfds(void **state)
{
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_FIRST_FILE), 2);
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_SNAPSHOT), 2);
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_CHECK), 1);
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_SPOOL), 2);
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_UPLOAD), 2);
	assert_int_equal(archive_job_nfds(0), -1);
	assert_int_equal(archive_job_nfds(ARCHIVE_JOB_KIND_MAX + 1), -1);
	assert_int_equal(archive_job_nfds(UINT32_MAX), -1);
}

/* Every prefix of a valid payload is short; one more byte is long. */
static void
test_truncated_and_trailing(void **state)
{
	struct archive_job	 out;
	struct msgw		 w;
	struct imsg		 imsg;
	size_t			 full, len;

	msgw_init(&w);
	msg_put_archive_job(&w, &upload_job);
	full = w.len;
	for (len = 0; len < full; len++) {
		as_imsg(&imsg, &w);
		imsg.len = len;
		if (msg_get_archive_job(&imsg, &out) != -1)
			fail_msg("a payload of %zu of %zu bytes decoded", len,
			    full);
		assert_null(out.name);
		assert_null(out.dirs);
	}
	msgw_u8(&w, 0);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_archive_job(&imsg, &out), -1);
}

static void
refuse(const struct archive_job *j, const char *what)
{
	struct archive_job	 out;

	if (decode(j, &out) != -1)
		fail_msg("decoded: %s", what);
	assert_null(out.name);
	assert_null(out.dirs);
	assert_int_equal(archive_job_valid(j), 0);
}

static void
refuse_name(const char *name, uint32_t ndirs, const char *what)
{
	static struct archive_dir	 dirs[8];
	struct archive_job		 j = upload_job;

	j.name = (char *)(uintptr_t)name;
	j.ndirs = ndirs;
	j.dirs = dirs;
	refuse(&j, what);
}

static void
test_upload_names_refused(void **state)
{
	struct archive_job	 j = upload_job;

	j.name = NULL;
	j.ndirs = 0;
	refuse(&j, "upload without a name");
	refuse_name("", 0, "empty name");
	refuse_name("/etc/passwd", 1, "absolute name");
	refuse_name("a//b", 2, "empty component");
	refuse_name("a/./b", 2, "dot component");
	refuse_name("../b", 1, "dot-dot first");
	refuse_name("a/../b", 2, "dot-dot inside");
	refuse_name("a/..", 1, "dot-dot last");
	refuse_name("dir/", 1, "trailing slash");
	refuse_name("a/b/c", 1, "fewer dirs than parents");
	refuse_name("a/b/c", 3, "more dirs than parents");
	refuse_name("f", 1, "a dir without a parent");
}

static void
test_upload_fields_refused(void **state)
{
	struct archive_dir	 dirs[3];
	struct archive_job	 j;

	j = upload_job;
	j.mode = 010000;
	refuse(&j, "file mode past 07777");
	j = upload_job;
	j.size = (uint64_t)INT64_MAX + 1;
	refuse(&j, "size past INT64_MAX");
	memcpy(dirs, three_dirs, sizeof(dirs));
	j = upload_job;
	j.dirs = dirs;
	dirs[1].mode = 0100755;
	refuse(&j, "dir mode with a file type");
	memcpy(dirs, three_dirs, sizeof(dirs));
	dirs[2].mtime_nsec = 1000000000;
	refuse(&j, "a whole second of nanoseconds");
}

static void
test_other_kinds_refused(void **state)
{
	struct archive_job	 j;

	memset(&j, 0, sizeof(j));
	refuse(&j, "kind 0");
	j.kind = ARCHIVE_JOB_KIND_MAX + 1;
	refuse(&j, "kind past the last");
	j.kind = ARCHIVE_JOB_SNAPSHOT;
	j.name = (char *)(uintptr_t)"x";
	refuse(&j, "a name for a snapshot");
	j.name = NULL;
	j.ndirs = 1;
	j.dirs = three_dirs;
	refuse(&j, "dirs for a snapshot");
}

/* A dir count the payload does not hold is refused before allocating. */
static void
test_dir_count_lies(void **state)
{
	struct archive_job	 out;
	struct msgw		 w;
	struct imsg		 imsg;

	msgw_init(&w);
	msgw_u32(&w, ARCHIVE_JOB_UPLOAD);
	msgw_u64(&w, 0);
	msgw_u64(&w, 1);
	msgw_str(&w, "a/f");
	msgw_u32(&w, 0);
	msgw_u32(&w, 0);
	msgw_u32(&w, 0644);
	msgw_i64(&w, 0);
	msgw_u32(&w, UINT32_MAX);
	msgw_u32(&w, 0755);
	msgw_i64(&w, 0);
	msgw_u32(&w, 0);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_archive_job(&imsg, &out), -1);
	assert_null(out.dirs);
}

/* The largest upload a peer may describe fits in one message. */
static void
test_largest_upload_fits(void **state)
{
	/* One more than fits: the encoder reads every one it is told of. */
	static struct archive_dir	 dirs[ARCHIVE_DIRS_MAX + 1];
	struct archive_job		 j = upload_job, out;
	struct msgw			 w;
	char				 name[MSG_MAX_PATH + 1];
	size_t				 i;

	memset(name, 'x', MSG_MAX_PATH);
	name[MSG_MAX_PATH] = '\0';
	for (i = 0; i < ARCHIVE_DIRS_MAX; i++)
		name[2 * i + 1] = '/';
	j.name = name;
	j.ndirs = ARCHIVE_DIRS_MAX;
	j.dirs = dirs;
	msgw_init(&w);
	msg_put_archive_job(&w, &j);
	assert_false(w.overflow);
	assert_int_equal(decode(&j, &out), 0);
	assert_int_equal(strlen(out.name), MSG_MAX_PATH);
	archive_job_free(&out);

	/* One more parent, or one more byte of name, is a lie. */
	name[2 * ARCHIVE_DIRS_MAX + 1] = '/';
	j.ndirs = ARCHIVE_DIRS_MAX + 1;
	refuse(&j, "513 parents");
	name[2 * ARCHIVE_DIRS_MAX + 1] = 'x';
	j.ndirs = ARCHIVE_DIRS_MAX;
	{
		char	 longer[MSG_MAX_PATH + 2];

		memcpy(longer, name, MSG_MAX_PATH);
		longer[MSG_MAX_PATH] = 'y';
		longer[MSG_MAX_PATH + 1] = '\0';
		j.name = longer;
		refuse(&j, "a name past MSG_MAX_PATH");
	}
}

static void
test_type_names(void **state)
{
	assert_string_equal(msg_type_name(MSG_WORKER_CONFIG),
	    "WORKER_CONFIG");
	assert_string_equal(msg_type_name(MSG_WORKER_APID_CHANNEL),
	    "WORKER_APID_CHANNEL");
	assert_string_equal(msg_type_name(MSG_APID_WORKER_CHANNEL),
	    "APID_WORKER_CHANNEL");
	assert_string_equal(msg_type_name(MSG_ARCHIVE_FD), "ARCHIVE_FD");
	assert_string_equal(msg_type_name(MSG_ARCHIVE_JOB), "ARCHIVE_JOB");
	assert_string_equal(msg_type_name(MSG_ARCHIVE_DONE), "ARCHIVE_DONE");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upload_roundtrip),
		cmocka_unit_test(test_first_file_member),
		cmocka_unit_test(test_other_kinds_roundtrip),
		cmocka_unit_test(test_nfds),
		cmocka_unit_test(test_truncated_and_trailing),
		cmocka_unit_test(test_upload_names_refused),
		cmocka_unit_test(test_upload_fields_refused),
		cmocka_unit_test(test_other_kinds_refused),
		cmocka_unit_test(test_dir_count_lies),
		cmocka_unit_test(test_largest_upload_fits),
		cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
