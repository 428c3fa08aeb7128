/*
 * Tests for dockerd-proxy/docker_archive_parse.c: the path stat header of
 * an archive GET or HEAD (base64 of JSON, every field checked: kinds,
 * permission bits, RFC 3339 times, names of any bytes), and the mapping of
 * Docker's noOverwriteDirNonDir refusals to errors that name the path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

static char *
b64(const char *in, size_t len)
{
	static const char	 a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char	*p = (const unsigned char *)in;
	char			*out;
	size_t			 i, n = 0;
	uint32_t		 v;

	out = malloc((len + 2) / 3 * 4 + 1);
	assert_non_null(out);
	for (i = 0; i < len; i += 3) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		out[n++] = a[v >> 18 & 63];
		out[n++] = a[v >> 12 & 63];
		out[n++] = i + 1 < len ? a[v >> 6 & 63] : '=';
		out[n++] = i + 2 < len ? a[v & 63] : '=';
	}
	out[n] = '\0';
	return out;
}

/* Parse the header made of json exactly; returns the parser's result. */
static int
parse_raw(const char *json, struct archive_stat *st)
{
	const char	*why = NULL;
	char		*h;
	int		 r;

	h = b64(json, strlen(json));
	r = archive_path_stat_parse(h, st, &why);
	free(h);
	if (r == 0)
		assert_null(why);
	else
		assert_non_null(why);
	return r;
}

/* The same with an mtime first unless json has one: other fields' tests. */
static int
parse_json(const char *json, struct archive_stat *st)
{
	char	*with;
	int	 r;

	if (json[0] != '{' || strstr(json, "\"mtime\"") != NULL)
		return parse_raw(json, st);
	assert_true(asprintf(&with, "{\"mtime\":\"2024-01-01T00:00:00Z\",%s",
	    json + 1) != -1);
	r = parse_raw(with, st);
	free(with);
	return r;
}

static void
expect_refused(const char *json)
{
	struct archive_stat	 st;

	assert_int_equal(parse_json(json, &st), -1);
	assert_null(st.link_target);
}

static void
test_regular_file(void **state)
{
	struct archive_stat	 st;
	const char		*why = "unset";

	/* What Docker 20.10 sends for a 0644 file of 5 bytes. */
	assert_int_equal(archive_path_stat_parse("eyJuYW1lIjoiZiIsInNpemUiOj"
	    "UsIm1vZGUiOjQyMCwibXRpbWUiOiIyMDI0LTAxLTAxVDAwOjAwOjAwWiIsImxpbm"
	    "tUYXJnZXQiOiIifQ==", &st, &why), 0);
	assert_null(why);
	assert_int_equal(st.kind, ARCHIVE_KIND_FILE);
	assert_int_equal(st.size, 5);
	assert_string_equal(st.link_target, "");
	archive_stat_free(&st);

	assert_int_equal(parse_json("{\"name\":\"big\",\"size\":1073741824,"
	    "\"mode\":384,\"mtime\":\"2024-01-01T00:00:00Z\","
	    "\"linkTarget\":\"\"}", &st), 0);
	assert_int_equal(st.kind, ARCHIVE_KIND_FILE);
	assert_int_equal(st.size, 1073741824ULL);
	archive_stat_free(&st);

	/* A link target on a file is ignored: only symlinks have one. */
	assert_int_equal(parse_json("{\"name\":\"f\",\"size\":0,\"mode\":420,"
	    "\"linkTarget\":\"/etc\"}", &st), 0);
	assert_string_equal(st.link_target, "");
	archive_stat_free(&st);
}

static void
test_directory(void **state)
{
	struct archive_stat	 st;

	/* os.ModeDir | 0755 */
	assert_int_equal(parse_json("{\"name\":\"workspace\",\"size\":4096,"
	    "\"mode\":2147484141,\"mtime\":\"2024-01-01T00:00:00Z\","
	    "\"linkTarget\":\"\"}", &st), 0);
	assert_int_equal(st.kind, ARCHIVE_KIND_DIR);
	assert_int_equal(st.size, 4096);
	assert_string_equal(st.link_target, "");
	archive_stat_free(&st);
}

static void
test_symlink(void **state)
{
	struct archive_stat	 st;

	/* os.ModeSymlink | 0777 */
	assert_int_equal(parse_json("{\"name\":\"l\",\"size\":12,"
	    "\"mode\":134218239,\"mtime\":\"2024-01-01T00:00:00Z\","
	    "\"linkTarget\":\"/workspace/f\"}", &st), 0);
	assert_int_equal(st.kind, ARCHIVE_KIND_SYMLINK);
	assert_int_equal(st.size, 12);
	assert_string_equal(st.link_target, "/workspace/f");
	archive_stat_free(&st);

	/* A symlink needs its target, one that fits ARCHIVE_STAT. */
	expect_refused("{\"name\":\"l\",\"size\":1,\"mode\":134218239}");
	expect_refused("{\"name\":\"l\",\"size\":1,\"mode\":134218239,"
	    "\"linkTarget\":\"\"}");
	expect_refused("{\"name\":\"l\",\"size\":1,\"mode\":134218239,"
	    "\"linkTarget\":7}");
	expect_refused("{\"name\":\"l\",\"size\":1,\"mode\":134218239,"
	    "\"linkTarget\":\"/a\\u0000b\"}");
}

static void
test_long_link_target(void **state)
{
	struct archive_stat	 st;
	char			 json[MSG_MAX_LINK_TARGET + 200];
	char			 target[MSG_MAX_LINK_TARGET + 2];

	memset(target, 'a', sizeof(target));
	target[0] = '/';
	target[MSG_MAX_LINK_TARGET] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"l\",\"size\":1,"
	    "\"mode\":134218239,\"linkTarget\":\"%s\"}", target);
	assert_int_equal(parse_json(json, &st), 0);
	assert_int_equal(strlen(st.link_target), MSG_MAX_LINK_TARGET);
	archive_stat_free(&st);

	target[MSG_MAX_LINK_TARGET] = 'a';
	target[MSG_MAX_LINK_TARGET + 1] = '\0';
	snprintf(json, sizeof(json), "{\"name\":\"l\",\"size\":1,"
	    "\"mode\":134218239,\"linkTarget\":\"%s\"}", target);
	expect_refused(json);
}

static void
test_other_kinds(void **state)
{
	static const unsigned long long	 modes[] = {
		(1ULL << 26) | (1ULL << 21) | 0666,	/* char device */
		(1ULL << 26) | 0660,			/* block device */
		(1ULL << 25) | 0644,			/* named pipe */
		(1ULL << 24) | 0755,			/* socket */
		(1ULL << 19) | 0644,			/* irregular */
	};
	struct archive_stat	 st;
	char			 json[256];
	size_t			 i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(json, sizeof(json), "{\"name\":\"x\",\"size\":0,"
		    "\"mode\":%llu,\"linkTarget\":\"\"}", modes[i]);
		assert_int_equal(parse_json(json, &st), 0);
		assert_int_equal(st.kind, ARCHIVE_KIND_OTHER);
		archive_stat_free(&st);
	}
}

static void
test_bad_base64(void **state)
{
	static const char *const	 bad[] = {
		"",
		"e",
		"eyJ",
		"eyJuYW1lIjoiZiJ9=",	/* length not a multiple of 4 */
		"ey=uYW1l",		/* padding inside */
		"eyJu YW1l",
		"eyJu\nYW1l",
		"eyJuYW1lIjoiZiJ9!!!!",
		"////",			/* decodes, but not JSON */
		"e===",
		"eR==",			/* non-zero bits under padding */
		"eyJuYW1lIjoiZiJ9\r",
	};
	struct archive_stat	 st;
	const char		*why;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(archive_path_stat_parse(bad[i], &st, &why),
		    -1);
		assert_non_null(why);
		assert_null(st.link_target);
	}
	why = NULL;
	assert_int_equal(archive_path_stat_parse(NULL, &st, &why), -1);
	assert_non_null(why);
}

static void
test_missing_fields(void **state)
{
	expect_refused("{\"size\":1,\"mode\":420}");		/* name */
	expect_refused("{\"name\":\"f\",\"mode\":420}");	/* size */
	expect_refused("{\"name\":\"f\",\"size\":1}");		/* mode */
	expect_refused("{\"name\":7,\"size\":1,\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":\"1\",\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":1.5,\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":null}");
	expect_refused("{\"name\":\"f\",\"size\":true,\"mode\":420}");
	expect_refused("[1,2,3]");
	expect_refused("\"just a string\"");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":420");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":420} trailing");
	expect_refused("{\"name\":{\"deep\":{\"er\":1}},\"size\":1,"
	    "\"mode\":420}");
}

static void
test_huge_values(void **state)
{
	struct archive_stat	 st;

	expect_refused("{\"name\":\"f\",\"size\":-1,\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":9223372036854775807,"
	    "\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":9223372036854775808,"
	    "\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":99999999999999999999999,"
	    "\"mode\":420}");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":4294967296}");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":-420}");
	expect_refused("{\"name\":\"f\",\"size\":1e3,\"mode\":420}");

	/* The largest acceptable values: every bit Go uses on Linux. */
	assert_int_equal(parse_json("{\"name\":\"f\","
	    "\"size\":9223372036854775806,\"mode\":2415395327,"
	    "\"linkTarget\":\"\"}", &st), 0);
	assert_int_equal(st.size, 9223372036854775806ULL);
	assert_int_equal(st.kind, ARCHIVE_KIND_DIR);
	assert_int_equal(st.mode, 07777);
	archive_stat_free(&st);
	/* Bits Go gives no meaning, or only on Plan 9. */
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":4294967295}");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":1024}");
	expect_refused("{\"name\":\"f\",\"size\":1,\"mode\":262144}");
	expect_refused("{\"name\":\"f\",\"size\":1,"
	    "\"mode\":1073742244}");
}

/* Permission bits move to where chmod(2) has them. */
static void
test_mode_bits(void **state)
{
	static const struct {
		unsigned long long	 go;
		uint32_t		 perm;
		uint8_t			 kind;
	} modes[] = {
		{ 420, 0644, ARCHIVE_KIND_FILE },
		{ (1ULL << 23) | 0755, 04755, ARCHIVE_KIND_FILE },
		{ (1ULL << 31) | (1ULL << 22) | 0750, 02750,
		    ARCHIVE_KIND_DIR },
		{ (1ULL << 31) | (1ULL << 20) | 0777, 01777,
		    ARCHIVE_KIND_DIR },
		{ (1ULL << 31) | 0, 0, ARCHIVE_KIND_DIR },
	};
	struct archive_stat	 st;
	char			 json[256];
	size_t			 i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(json, sizeof(json), "{\"name\":\"x\",\"size\":0,"
		    "\"mode\":%llu,\"linkTarget\":\"\"}", modes[i].go);
		assert_int_equal(parse_json(json, &st), 0);
		assert_int_equal(st.kind, modes[i].kind);
		assert_int_equal(st.mode, modes[i].perm);
		archive_stat_free(&st);
	}
}

static void
expect_mtime(const char *text, int64_t sec, uint32_t nsec)
{
	int64_t		 s = 1;
	uint32_t	 ns = 1;

	if (archive_mtime_parse(text, &s, &ns) == -1)
		fail_msg("\"%s\" refused", text);
	assert_true(s == sec);
	assert_int_equal(ns, nsec);
}

/* RFC 3339 as Go's time.Time writes it, and nothing else. */
static void
test_mtime(void **state)
{
	static const char	*bad[] = { "", "2024-01-01",
	    "2024-01-01T00:00:00",
	    "2024-01-01t00:00:00Z", "2024-01-01T00:00:00z",
	    "2024-01-01 00:00:00Z", "2024-1-01T00:00:00Z",
	    "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z",
	    "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
	    "2024-04-31T00:00:00Z", "2024-01-01T24:00:00Z",
	    "2024-01-01T00:60:00Z", "2024-01-01T00:00:60Z",
	    "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00.1234567891Z",
	    "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00+24:00",
	    "2024-01-01T00:00:00+01:60", "2024-01-01T00:00:00Z ",
	    "+2024-01-01T00:00:00Z", "12024-01-01T00:00:00Z",
	    "2024-01-01T00:00:00.-1Z", NULL };
	int64_t			 s;
	uint32_t		 ns;
	size_t			 i;

	expect_mtime("1970-01-01T00:00:00Z", 0, 0);
	expect_mtime("2026-12-01T08:50:05.598050744Z", 1796115005,
	    598050744);
	expect_mtime("2001-02-03T04:05:06.1Z", 981173106, 100000000);
	expect_mtime("2001-02-03T04:05:06.000000001Z", 981173106, 1);
	/* Docker in another zone: the same instant. */
	expect_mtime("2001-02-03T05:35:06.5+01:30", 981173106, 500000000);
	expect_mtime("2001-02-02T23:05:06-05:00", 981173106, 0);
	expect_mtime("2024-02-29T12:00:00Z", 1709208000, 0);
	expect_mtime("2000-02-29T00:00:00Z", 951782400, 0);
	/* Before the epoch, and the ends of Go's range. */
	expect_mtime("1969-12-31T23:59:59.999999999Z", -1, 999999999);
	expect_mtime("0000-01-01T00:00:00Z", -62167219200LL, 0);
	expect_mtime("9999-12-31T23:59:59Z", 253402300799LL, 0);
	for (i = 0; bad[i] != NULL; i++)
		if (archive_mtime_parse(bad[i], &s, &ns) != -1)
			fail_msg("\"%s\" accepted", bad[i]);
}

/* mtime is needed, as a string of that form, so directories keep it. */
static void
test_mtime_field(void **state)
{
	struct archive_stat	 st;

	assert_int_equal(parse_raw("{\"name\":\"d\",\"size\":4096,"
	    "\"mode\":2147484141,\"mtime\":\"2026-12-01T08:50:05.598050744"
	    "Z\",\"linkTarget\":\"\"}", &st), 0);
	assert_true(st.mtime == 1796115005);
	assert_int_equal(st.mtime_nsec, 598050744);
	assert_int_equal(st.mode, 0755);
	archive_stat_free(&st);
	assert_int_equal(parse_raw("{\"name\":\"f\",\"size\":1,"
	    "\"mode\":420}", &st), -1);
	assert_int_equal(parse_raw("{\"name\":\"f\",\"size\":1,"
	    "\"mode\":420,\"mtime\":0}", &st), -1);
	assert_int_equal(parse_raw("{\"name\":\"f\",\"size\":1,"
	    "\"mode\":420,\"mtime\":\"yesterday\"}", &st), -1);
	assert_int_equal(parse_raw("{\"name\":\"f\",\"size\":1,"
	    "\"mode\":420,\"mtime\":\"2024-01-01T00:00:00\\u0000Z\"}",
	    &st), -1);
	assert_null(st.link_target);
}

/*
 * Names that are not UTF-8: Docker's JSON has U+FFFD for each bad byte
 * (and we take raw bytes too); a target keeps the bytes it came with.
 */
static void
test_odd_names(void **state)
{
	struct archive_stat	 st;

	assert_int_equal(parse_json("{\"name\":\"caf\\ufffd\",\"size\":1,"
	    "\"mode\":420}", &st), 0);
	assert_int_equal(st.kind, ARCHIVE_KIND_FILE);
	archive_stat_free(&st);
	assert_int_equal(parse_json("{\"name\":\"caf\xe9\\n x\",\"size\":1,"
	    "\"mode\":420}", &st), 0);
	archive_stat_free(&st);
	assert_int_equal(parse_json("{\"name\":\"l\\ufffd\",\"size\":2,"
	    "\"mode\":134218239,\"linkTarget\":\"/w/d\\ufffd\\n\xe9\"}",
	    &st), 0);
	assert_string_equal(st.link_target, "/w/d\xef\xbf\xbd\n\xe9");
	archive_stat_free(&st);
	/* No name, or one with a NUL in it, is not Docker's. */
	expect_refused("{\"name\":\"\",\"size\":1,\"mode\":420}");
	expect_refused("{\"name\":\"a\\u0000b\",\"size\":1,\"mode\":420}");
}

static void
test_header_caps(void **state)
{
	struct archive_stat	 st;
	const char		*why;
	char			*json, *h;
	size_t			 len;

	/* Valid base64 of valid JSON, but longer than any real header. */
	len = ARCHIVE_STAT_HEADER_MAX;
	json = malloc(len + 1);
	assert_non_null(json);
	memset(json, ' ', len);
	memcpy(json, "{\"name\":\"f\",\"size\":1,\"mode\":420", 32);
	json[len - 1] = '}';
	json[len] = '\0';
	h = b64(json, len);
	why = NULL;
	assert_int_equal(archive_path_stat_parse(h, &st, &why), -1);
	assert_non_null(why);
	free(h);
	free(json);
}

/* --- PUT refusals --------------------------------------------------------- */

static void
test_put_nondir(void **state)
{
	char	 text[8192];

	assert_int_equal(archive_put_error("Error processing tar file(exit "
	    "status 1): cannot overwrite non-directory \"/workspace/evil\" "
	    "with directory \"/workspace\"", text, sizeof(text)),
	    ERR_INVALID_REQUEST);
	assert_string_equal(text, "writes are limited to files under "
	    "/workspace: /workspace/evil is a symlink or not a directory");
}

static void
test_put_dir(void **state)
{
	char	 text[8192];

	assert_int_equal(archive_put_error("Error processing tar file(exit "
	    "status 1): cannot overwrite directory \"/workspace/d\" with "
	    "non-directory \"/workspace\"", text, sizeof(text)),
	    ERR_INVALID_REQUEST);
	assert_string_equal(text, "/workspace/d is a directory");
}

static void
test_put_quoting(void **state)
{
	char	 text[8192], msg[3 * MSG_MAX_PATH];
	size_t	 n;

	/* Go's %q: escaped quotes and backslashes, other escapes kept. */
	assert_int_equal(archive_put_error("cannot overwrite directory "
	    "\"/workspace/a\\\"b\\\\c\\nd\" with non-directory \"/workspace\"",
	    text, sizeof(text)), ERR_INVALID_REQUEST);
	assert_string_equal(text, "/workspace/a\"b\\c\\nd is a directory");

	/* Control and 8-bit bytes never reach the message. */
	assert_int_equal(archive_put_error("cannot overwrite directory "
	    "\"/workspace/\x01\xc3\xa9\" with non-directory \"/workspace\"",
	    text, sizeof(text)), ERR_INVALID_REQUEST);
	assert_string_equal(text, "/workspace/??? is a directory");

	/* Unterminated, empty, or longer than a path: not recognized. */
	assert_int_equal(archive_put_error("cannot overwrite directory "
	    "\"/workspace/d", text, sizeof(text)), 0);
	assert_int_equal(archive_put_error("cannot overwrite directory "
	    "\"/workspace/d\\", text, sizeof(text)), 0);
	assert_int_equal(archive_put_error("cannot overwrite directory \"\"",
	    text, sizeof(text)), 0);
	n = (size_t)snprintf(msg, sizeof(msg), "cannot overwrite directory "
	    "\"");
	memset(msg + n, 'a', MSG_MAX_PATH + 1);
	n += MSG_MAX_PATH + 1;
	snprintf(msg + n, sizeof(msg) - n, "\" with non-directory \"/w\"");
	assert_int_equal(archive_put_error(msg, text, sizeof(text)), 0);

	/* Exactly MSG_MAX_PATH fits. */
	n = (size_t)snprintf(msg, sizeof(msg), "cannot overwrite directory "
	    "\"");
	memset(msg + n, 'a', MSG_MAX_PATH);
	n += MSG_MAX_PATH;
	snprintf(msg + n, sizeof(msg) - n, "\" with non-directory \"/w\"");
	assert_int_equal(archive_put_error(msg, text, sizeof(text)),
	    ERR_INVALID_REQUEST);
	assert_int_equal(strlen(text),
	    MSG_MAX_PATH + strlen(" is a directory"));
}

static void
test_put_other(void **state)
{
	char	 text[256] = "untouched";

	assert_int_equal(archive_put_error(NULL, text, sizeof(text)), 0);
	assert_int_equal(archive_put_error("Could not find the file /x in "
	    "container", text, sizeof(text)), 0);
	assert_int_equal(archive_put_error("Error processing tar file(exit "
	    "status 1): open /workspace/f: permission denied", text,
	    sizeof(text)), 0);
	assert_int_equal(archive_put_error("cannot overwrite directory "
	    "/workspace/d with non-directory", text, sizeof(text)), 0);
	assert_string_equal(text, "untouched");
}

/* Docker's words for a symlink chain that does not end, or a file. */
static void
test_error_class(void **state)
{
	assert_int_equal(archive_error_class("evalSymlinksInScope: too many "
	    "links in /var/lib/docker/overlay2/x/merged/w/loop1"),
	    ARCHIVE_ERROR_LOOP);
	assert_int_equal(archive_error_class("lstat /var/lib/docker/overlay2/"
	    "x/merged/w/f/x: not a directory"), ARCHIVE_ERROR_NOTDIR);
	assert_int_equal(archive_error_class(": not a directory"),
	    ARCHIVE_ERROR_OTHER);
	assert_int_equal(archive_error_class("x: not a directory at all"),
	    ARCHIVE_ERROR_OTHER);
	assert_int_equal(archive_error_class("Could not find the file /x"),
	    ARCHIVE_ERROR_OTHER);
	assert_int_equal(archive_error_class(""), ARCHIVE_ERROR_OTHER);
	assert_int_equal(archive_error_class(NULL), ARCHIVE_ERROR_OTHER);
}

/*
 * The prime: a valid pax header whose one record says nothing a member
 * keeps, so the member after it comes out as its own header says.
 */
static void
test_prime(void **state)
{
	unsigned char		 blk[2 * TAR_BLOCK], member[TAR_BLOCK];
	struct tar_ext		 ext;
	struct tar_member	 m;
	char			 rec[TAR_BLOCK + 1];
	int64_t			 size;

	archive_prime(blk);
	assert_true(tar_checksum_ok(blk));
	assert_int_equal(blk[TAR_H_TYPE], 'x');
	assert_int_equal(tar_header_size(blk, &size), 0);
	assert_int_equal(size, 31);
	assert_memory_equal(blk + TAR_H_MAGIC, "ustar\0" "00", 8);
	memcpy(rec, blk + TAR_BLOCK, (size_t)size);
	memset(&ext, 0, sizeof(ext));
	assert_null(tar_pax_parse(&ext, rec, (size_t)size));
	assert_false(tar_ext_pending(&ext));
	assert_int_equal(ext.pax_has, 0);
	/* The data block is the record and NULs. */
	assert_int_equal(blk[TAR_BLOCK + 30], '\n');
	assert_int_equal(blk[TAR_BLOCK + 31], 0);
	assert_int_equal(blk[2 * TAR_BLOCK - 1], 0);

	memset(member, 0, sizeof(member));
	memcpy(member + TAR_H_NAME, "f.txt", 5);
	tar_number_put(member + TAR_H_MODE, 8, 0640);
	tar_number_put(member + TAR_H_UID, 8, 1000);
	tar_number_put(member + TAR_H_GID, 8, 1000);
	tar_number_put(member + TAR_H_SIZE, 12, 3);
	tar_number_put(member + TAR_H_MTIME, 12, 1234567890);
	member[TAR_H_TYPE] = '0';
	memcpy(member + TAR_H_MAGIC, "ustar", 6);
	memcpy(member + TAR_H_VERSION, "00", 2);
	tar_checksum_put(member);
	/* tar_member_make clears what m held first. */
	memset(&m, 0, sizeof(m));
	assert_null(tar_member_make(&m, &ext, member, 3));
	assert_string_equal(m.name, "f.txt");
	assert_int_equal(m.mode, 0640);
	assert_int_equal(m.uid, 1000);
	assert_int_equal(m.mtime, 1234567890);
	assert_int_equal(m.size, 3);
	tar_member_clear(&m);
	tar_ext_clear(&ext);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_regular_file),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_symlink),
		cmocka_unit_test(test_long_link_target),
		cmocka_unit_test(test_other_kinds),
		cmocka_unit_test(test_bad_base64),
		cmocka_unit_test(test_missing_fields),
		cmocka_unit_test(test_huge_values),
		cmocka_unit_test(test_mode_bits),
		cmocka_unit_test(test_mtime),
		cmocka_unit_test(test_mtime_field),
		cmocka_unit_test(test_odd_names),
		cmocka_unit_test(test_header_caps),
		cmocka_unit_test(test_put_nondir),
		cmocka_unit_test(test_put_dir),
		cmocka_unit_test(test_put_quoting),
		cmocka_unit_test(test_put_other),
		cmocka_unit_test(test_error_class),
		cmocka_unit_test(test_prime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
