/*
 * Tests for apid's file modules: the upload tar (tar_upload.c), read
 * back with libarchive, and the parsing of a directory listing into a
 * FileList (file_list.c, API.md §3.7, §6.4).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmocka.h>

#include "apid.h"
#include "format.h"

#define MAXMEM	8

struct got {
	char		*name;
	mode_t		 type;
	mode_t		 perm;
	int64_t		 uid, gid;
	time_t		 mtime;
	int64_t		 size;
	char		*data;
	size_t		 len;
};

static int
tmpfd(void)
{
	char	 path[] = "/tmp/test_apid_files.XXXXXX";
	int	 fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(unlink(path), 0);
	return fd;
}

static off_t
fd_size(int fd)
{
	struct stat	 st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

static size_t
readback(int fd, struct got *g, size_t max)
{
	struct archive		*r;
	struct archive_entry	*e;
	size_t			 n = 0, cap;
	la_ssize_t		 k;
	int			 rc;

	assert_true(lseek(fd, 0, SEEK_SET) == 0);
	r = archive_read_new();
	assert_non_null(r);
	archive_read_support_format_tar(r);
	assert_int_equal(archive_read_open_fd(r, fd, 10240), ARCHIVE_OK);
	while ((rc = archive_read_next_header(r, &e)) == ARCHIVE_OK) {
		assert_true(n < max);
		memset(&g[n], 0, sizeof(g[n]));
		g[n].name = strdup(archive_entry_pathname(e));
		assert_non_null(g[n].name);
		g[n].type = archive_entry_filetype(e);
		g[n].perm = archive_entry_perm(e);
		g[n].uid = archive_entry_uid(e);
		g[n].gid = archive_entry_gid(e);
		g[n].mtime = archive_entry_mtime(e);
		g[n].size = archive_entry_size(e);
		cap = (size_t)g[n].size + 1;
		g[n].data = malloc(cap);
		assert_non_null(g[n].data);
		while ((k = archive_read_data(r, g[n].data + g[n].len,
		    cap - g[n].len)) > 0)
			g[n].len += (size_t)k;
		assert_true(k == 0);
		n++;
	}
	assert_int_equal(rc, ARCHIVE_EOF);
	archive_read_free(r);
	return n;
}

static void
got_free(struct got *g, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(g[i].name);
		free(g[i].data);
	}
}

static void
expect_dir(const struct got *g, const char *name)
{
	assert_string_equal(g->name, name);
	assert_int_equal(g->type, AE_IFDIR);
	assert_int_equal(g->perm, 0755);
	assert_int_equal(g->uid, 1000);
	assert_int_equal(g->gid, 1001);
	assert_int_equal(g->mtime, 1700000000);
	assert_int_equal(g->size, 0);
}

/* Upload the body under name; the members come back in g. */
static size_t
upload(const char *name, uint32_t mode, const void *body, size_t len,
    int chains, struct got *g)
{
	struct file_write_ready	 fw = { .uid = 1000, .gid = 1001,
	    .mtime = 1700000000 };
	struct evbuffer		*b;
	char			 err[256] = "";
	size_t			 i, step;
	int64_t			 n;
	int			 fd;

	fw.name = strdup(name);
	assert_non_null(fw.name);
	fw.mode = mode;
	b = evbuffer_new();
	assert_non_null(b);
	/* Several chains, as a body read off a socket arrives. */
	step = chains > 1 && len > 0 ? (len + chains - 1) / chains : len;
	for (i = 0; i < len; i += step)
		assert_int_equal(evbuffer_add(b, (const char *)body + i,
		    len - i < step ? len - i : step), 0);
	fd = tmpfd();
	n = tar_upload(fd, &fw, b, err, sizeof(err));
	assert_true(n > 0);
	assert_int_equal(n, fd_size(fd));
	assert_int_equal(n % 10240, 0);
	assert_int_equal(evbuffer_get_length(b), 0);	/* consumed */
	evbuffer_free(b);
	i = readback(fd, g, MAXMEM);
	close(fd);
	free(fw.name);
	return i;
}

static void
test_upload_parents(void **state)
{
	struct got	 g[MAXMEM];
	unsigned char	 body[16384];
	size_t		 i, n;

	for (i = 0; i < sizeof(body); i++)
		body[i] = (unsigned char)(i & 0xff);
	n = upload("a/b/f.txt", 0640, body, sizeof(body), 7, g);
	assert_int_equal(n, 3);
	expect_dir(&g[0], "a/");
	expect_dir(&g[1], "a/b/");
	assert_string_equal(g[2].name, "a/b/f.txt");
	assert_int_equal(g[2].type, AE_IFREG);
	assert_int_equal(g[2].perm, 0640);
	assert_int_equal(g[2].uid, 1000);
	assert_int_equal(g[2].gid, 1001);
	assert_int_equal(g[2].mtime, 1700000000);
	assert_int_equal(g[2].size, sizeof(body));
	assert_int_equal(g[2].len, sizeof(body));
	assert_memory_equal(g[2].data, body, sizeof(body));
	got_free(g, n);
}

static void
test_upload_no_parent(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	n = upload("run.sh", 0755, "#!/bin/sh\necho hi\n", 18, 1, g);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].name, "run.sh");
	assert_int_equal(g[0].perm, 0755);
	assert_int_equal(g[0].len, 18);
	assert_memory_equal(g[0].data, "#!/bin/sh\necho hi\n", 18);
	got_free(g, n);
}

static void
test_upload_empty(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	n = upload("d/empty", 0600, "", 0, 1, g);
	assert_int_equal(n, 2);
	expect_dir(&g[0], "d/");
	assert_string_equal(g[1].name, "d/empty");
	assert_int_equal(g[1].type, AE_IFREG);
	assert_int_equal(g[1].perm, 0600);
	assert_int_equal(g[1].size, 0);
	assert_int_equal(g[1].len, 0);
	got_free(g, n);
}

static void
test_upload_long_names(void **state)
{
	struct got	 g[MAXMEM];
	char		 name[400], dir1[160], dir2[320];
	size_t		 n;

	/* A 150-byte directory, then a 300-byte path to the file. */
	memset(name, 'x', sizeof(name));
	memcpy(name, "long", 4);
	name[150] = '/';
	name[250] = '/';
	name[300] = '\0';
	memcpy(dir1, name, 151);
	dir1[151] = '\0';
	memcpy(dir2, name, 251);
	dir2[251] = '\0';
	n = upload(name, 0644, "data", 4, 1, g);
	assert_int_equal(n, 3);
	expect_dir(&g[0], dir1);
	expect_dir(&g[1], dir2);
	assert_string_equal(g[2].name, name);
	assert_int_equal(strlen(g[2].name), 300);
	assert_memory_equal(g[2].data, "data", 4);
	got_free(g, n);
}

static void
test_upload_special_mode(void **state)
{
	struct got	 g[MAXMEM];
	size_t		 n;

	/* managerd refuses these first; the tar still says what it got. */
	n = upload("s", 04755, "x", 1, 1, g);
	assert_int_equal(n, 1);
	assert_int_equal(g[0].perm, 04755);
	got_free(g, n);
}

static void
test_upload_broken_pipe(void **state)
{
	char			 name[] = "f";
	struct file_write_ready	 fw = { .name = name, .uid = 1000,
	    .gid = 1000, .mode = 0644, .mtime = 1 };
	struct evbuffer		*b;
	char			 err[256] = "";
	int			 fds[2];

	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	b = evbuffer_new();
	assert_non_null(b);
	assert_int_equal(evbuffer_add(b, "abc", 3), 0);
	errno = 0;
	assert_int_equal(tar_upload(fds[1], &fw, b, err, sizeof(err)), -1);
	assert_int_equal(errno, EPIPE);
	assert_true(err[0] != '\0');
	evbuffer_free(b);
	close(fds[1]);
}

static void
test_upload_bad_name(void **state)
{
	char			 name[] = "dir/";
	struct file_write_ready	 fw = { .name = name, .uid = 1000,
	    .gid = 1000, .mode = 0644, .mtime = 1 };
	struct evbuffer		*b;
	char			 err[256] = "";
	int			 fd;

	b = evbuffer_new();
	assert_non_null(b);
	fd = tmpfd();
	assert_int_equal(tar_upload(fd, &fw, b, err, sizeof(err)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fd_size(fd), 0);
	close(fd);
	evbuffer_free(b);
}

/* Listings */

#define REC(mode, size, mtime, name)	mode " " size " " mtime "\n" name "\0"

static const char *
entry_str(json_object *e, const char *key)
{
	json_object	*v;

	assert_true(json_object_object_get_ex(e, key, &v));
	return json_object_get_string(v);
}

static void
test_list_normal(void **state)
{
	static const char out[] =
	    REC("81a4", "19", "1700000001", "run.sh")
	    REC("41ed", "4096", "1700000000", "data")
	    REC("a1ff", "6", "1700000002", "link")
	    REC("81a4", "0", "1", ".hidden")
	    REC("11a4", "0", "1", "fifo");
	struct file_entries	 fe;
	json_object		*root, *entries, *e, *v;
	const char		*s;

	assert_int_equal(file_list_parse(out, sizeof(out) - 1, &fe), 0);
	assert_int_equal(fe.n, 5);
	assert_string_equal(fe.v[0].name, ".hidden");
	assert_string_equal(fe.v[1].name, "data");
	assert_string_equal(fe.v[2].name, "fifo");
	assert_string_equal(fe.v[3].name, "link");
	assert_string_equal(fe.v[4].name, "run.sh");
	assert_int_equal(fe.v[4].size, 19);
	assert_int_equal(fe.v[4].mtime, 1700000001);
	assert_int_equal(fe.v[1].mode, 040755);

	root = file_list_json("/workspace", &fe);
	assert_non_null(root);
	assert_string_equal(entry_str(root, "path"), "/workspace");
	assert_true(json_object_object_get_ex(root, "entries", &entries));
	assert_int_equal(json_object_array_length(entries), 5);
	e = json_object_array_get_idx(entries, 1);
	assert_int_equal(json_object_object_length(e), 5);
	assert_string_equal(entry_str(e, "name"), "data");
	assert_string_equal(entry_str(e, "path"), "/workspace/data");
	assert_string_equal(entry_str(e, "type"), "directory");
	assert_true(json_object_object_get_ex(e, "size", &v));
	assert_true(json_object_is_type(v, json_type_int));
	assert_int_equal(json_object_get_int64(v), 4096);
	assert_string_equal(entry_str(e, "modified_at"),
	    "2023-11-14T22:13:20Z");
	e = json_object_array_get_idx(entries, 2);
	assert_string_equal(entry_str(e, "type"), "other");
	e = json_object_array_get_idx(entries, 3);
	assert_string_equal(entry_str(e, "type"), "symlink");
	e = json_object_array_get_idx(entries, 4);
	assert_string_equal(entry_str(e, "type"), "file");
	/* Compact, in the order of §3.7. */
	s = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_string_equal(s, "{\"name\":\"run.sh\",\"path\":"
	    "\"/workspace/run.sh\",\"type\":\"file\",\"size\":19,"
	    "\"modified_at\":\"2023-11-14T22:13:21Z\"}");
	json_object_put(root);
	file_entries_free(&fe);
}

static void
test_list_odd_names(void **state)
{
	static const char out[] =
	    REC("81a4", "1", "5", "a b")
	    REC("81a4", "2", "5", "new\nline")
	    REC("81a4", "3", "5", "trailing ")
	    REC("81a4", "4", "5", "caf\xc3\xa9")
	    REC("81a4", "5", "5", "bad\xff");
	struct file_entries	 fe;
	json_object		*root, *entries;

	assert_int_equal(file_list_parse(out, sizeof(out) - 1, &fe), 0);
	assert_int_equal(fe.n, 5);
	assert_string_equal(fe.v[0].name, "a b");
	assert_string_equal(fe.v[1].name, "bad\xff");
	assert_string_equal(fe.v[2].name, "caf\xc3\xa9");
	assert_string_equal(fe.v[3].name, "new\nline");
	assert_string_equal(fe.v[4].name, "trailing ");
	root = file_list_json("/", &fe);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "entries", &entries));
	/* "/" joins without a double slash; bad UTF-8 becomes U+FFFD. */
	assert_string_equal(entry_str(json_object_array_get_idx(entries, 0),
	    "path"), "/a b");
	assert_string_equal(entry_str(json_object_array_get_idx(entries, 1),
	    "name"), "bad\xef\xbf\xbd");
	assert_string_equal(entry_str(json_object_array_get_idx(entries, 3),
	    "path"), "/new\nline");
	json_object_put(root);
	file_entries_free(&fe);
}

static void
test_list_malformed(void **state)
{
	static const char out[] =
	    REC("81a4", "1", "1", "ok1")
	    REC("81a4", "1", "1", ".")
	    REC("41ed", "1", "1", "..")
	    REC("81a4", "1", "1", "")
	    REC("81a4", "1", "1", "a/b")
	    REC("zz", "1", "1", "badmode")
	    REC("81a4", "-1", "1", "negsize")
	    REC("81a4", "1x", "1", "badsize")
	    REC("81a4", "1", "", "nomtime")
	    REC("81a4 1", "1", "1", "fourfields")
	    REC("", "1", "1", "nomode")
	    REC("81a4", "99999999999999999999", "1", "hugesize")
	    REC("1000081a4", "1", "1", "hugemode")
	    REC("81a4", "1", "99999999999999999999", "hugemtime")
	    REC("81a4", "1", "999999999999", "year33658")
	    "81a4 1 1 nonewline\0"
	    "garbage without structure\0"
	    REC("81a4", "9223372036854775807", "-1", "ok2")
	    "81a4 1 1\ncut-short";
	struct file_entries	 fe;
	char			 ts[64];

	assert_int_equal(file_list_parse(out, sizeof(out) - 1, &fe), 0);
	assert_int_equal(fe.n, 2);
	assert_string_equal(fe.v[0].name, "ok1");
	assert_string_equal(fe.v[1].name, "ok2");
	assert_int_equal(fe.v[1].size, INT64_MAX);
	assert_int_equal(fe.v[1].mtime, -1);
	assert_non_null(format_timestamp((double)fe.v[1].mtime, ts,
	    sizeof(ts)));
	file_entries_free(&fe);

	assert_int_equal(file_list_parse("", 0, &fe), 0);
	assert_int_equal(fe.n, 0);
	file_entries_free(&fe);
}

static void
test_list_sorting(void **state)
{
	static const char out[] =
	    REC("81a4", "1", "1", "b")
	    REC("81a4", "1", "1", "\xc3\xa9")
	    REC("81a4", "1", "1", "B")
	    REC("81a4", "1", "1", "a")
	    REC("81a4", "1", "1", "_")
	    REC("81a4", "1", "1", "ab")
	    REC("81a4", "1", "1", "A");
	static const char *want[] = { "A", "B", "_", "a", "ab", "b",
	    "\xc3\xa9" };
	struct file_entries	 fe;
	size_t			 i;

	assert_int_equal(file_list_parse(out, sizeof(out) - 1, &fe), 0);
	assert_int_equal(fe.n, 7);
	for (i = 0; i < fe.n; i++)
		assert_string_equal(fe.v[i].name, want[i]);
	file_entries_free(&fe);
}

static void
test_list_many(void **state)
{
	struct file_entries	 fe;
	char			*out, rec[64];
	size_t			 len = 0, i, n;

	out = malloc(1000 * 64);
	assert_non_null(out);
	for (i = 0; i < 1000; i++) {
		n = (size_t)snprintf(rec, sizeof(rec), "81a4 %zu 1\nf%04zu",
		    i, 999 - i);
		memcpy(out + len, rec, n + 1);	/* with the NUL */
		len += n + 1;
	}
	assert_int_equal(file_list_parse(out, len, &fe), 0);
	assert_int_equal(fe.n, 1000);
	assert_string_equal(fe.v[0].name, "f0000");
	assert_int_equal(fe.v[0].size, 999);
	assert_string_equal(fe.v[999].name, "f0999");
	file_entries_free(&fe);
	free(out);
}

/* n records "81a4 0 1\n<name>\0" with distinct names. */
static char *
many_records(size_t n, size_t *len)
{
	char	*out, rec[64];
	size_t	 i, k;

	out = malloc(n * 24);
	assert_non_null(out);
	*len = 0;
	for (i = 0; i < n; i++) {
		k = (size_t)snprintf(rec, sizeof(rec), "81a4 0 1\nf%zu", i);
		memcpy(out + *len, rec, k + 1);	/* with the NUL */
		*len += k + 1;
	}
	return out;
}

/* A sandbox's directory of millions of names cannot make apid build
 * millions of JSON objects. */
static void
test_list_entry_cap(void **state)
{
	struct file_entries	 fe;
	char			*out;
	size_t			 len;

	(void)state;
	out = many_records(FILE_LIST_MAX_ENTRIES, &len);
	assert_int_equal(file_list_parse(out, len, &fe), 0);
	assert_int_equal(fe.n, FILE_LIST_MAX_ENTRIES);
	file_entries_free(&fe);
	free(out);

	out = many_records(FILE_LIST_MAX_ENTRIES + 1, &len);
	errno = 0;
	assert_int_equal(file_list_parse(out, len, &fe), -1);
	assert_int_equal(errno, E2BIG);
	assert_null(fe.v);
	assert_int_equal(fe.n, 0);
	free(out);
}

static void
test_file_info(void **state)
{
	json_object	*o;
	const char	*s;

	o = file_info_json("app.py", "/workspace/app.py", "file", 21,
	    1790762162.053406);
	assert_non_null(o);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_string_equal(s, "{\"name\":\"app.py\",\"path\":"
	    "\"/workspace/app.py\",\"type\":\"file\",\"size\":21,"
	    "\"modified_at\":\"2026-09-30T09:56:02.053406Z\"}");
	json_object_put(o);
	assert_string_equal(file_type_name(0100644), "file");
	assert_string_equal(file_type_name(0040755), "directory");
	assert_string_equal(file_type_name(0120777), "symlink");
	assert_string_equal(file_type_name(0060600), "other");
	assert_string_equal(file_type_name(0140777), "other");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upload_parents),
		cmocka_unit_test(test_upload_no_parent),
		cmocka_unit_test(test_upload_empty),
		cmocka_unit_test(test_upload_long_names),
		cmocka_unit_test(test_upload_special_mode),
		cmocka_unit_test(test_upload_broken_pipe),
		cmocka_unit_test(test_upload_bad_name),
		cmocka_unit_test(test_list_normal),
		cmocka_unit_test(test_list_odd_names),
		cmocka_unit_test(test_list_malformed),
		cmocka_unit_test(test_list_sorting),
		cmocka_unit_test(test_list_many),
		cmocka_unit_test(test_list_entry_cap),
		cmocka_unit_test(test_file_info),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
