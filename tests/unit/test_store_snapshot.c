/*
 * Snapshot records (managerd/store_snapshot.c, API.md §9): the exact text,
 * round trips of odd names, Unicode and floats, what counts as a snapshot
 * (record and tar, readable, named after its id) and ids that must never
 * reach the file system.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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

static char	datadir[64];
static int	dfd = -1;

static int
setup(void **state)
{
	strlcpy(datadir, "/tmp/test_store_snapshot.XXXXXX", sizeof(datadir));
	assert_non_null(mkdtemp(datadir));
	assert_true((dfd = open(datadir, O_RDONLY | O_DIRECTORY)) != -1);
	assert_int_equal(mkdirat(dfd, "snapshots", 0700), 0);
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[128];

	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", datadir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void
put_file(const char *path, const char *text)
{
	int	 fd;

	fd = openat(dfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
exists(const char *path)
{
	struct stat	 st;

	return fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void
record_init(struct snapshot_record *r, const char *id, const char *name)
{
	memset(r, 0, sizeof(*r));
	strlcpy(r->id, id, sizeof(r->id));
	r->name = name != NULL ? strdup(name) : NULL;
	r->sandbox_id = strdup("sb_0123456789abcdef");
	r->size_bytes = 10240;
	r->created_at = 1700000000.053406;
	r->spec.image = strdup("python:3.12-slim");
	r->spec.cpus = 0.5;
	r->spec.memory_mb = 256;
	r->spec.pids_limit = 64;
	r->spec.network = 1;
	r->spec.read_only_rootfs = 0;
}

/* A stored snapshot: record and tar. */
static void
store(struct snapshot_record *r)
{
	char	 path[SNAPSHOT_PATH_MAX];

	assert_int_equal(store_snapshot_write(dfd, r), 0);
	snprintf(path, sizeof(path), "snapshots/%s.tar", r->id);
	put_file(path, "tar");
}

static void
test_ids(void **state)
{
	char	 path[SNAPSHOT_PATH_MAX];

	/* The shape itself is test_ids.c's: only a snapshot id gets a path. */
	assert_int_equal(snapshot_path(path, sizeof(path), "../sandboxes",
	    ".json"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(snapshot_path(path, sizeof(path),
	    "snap_0123456789ABCDEF", ".json"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(snapshot_path(path, sizeof(path),
	    "sb_0123456789abcdef", ".json"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(snapshot_path(path, sizeof(path),
	    "snap_0123456789abcdef", ".tar"), 0);
	assert_string_equal(path, "snapshots/snap_0123456789abcdef.tar");
}

static void
test_text(void **state)
{
	struct snapshot_record	 r;
	char			*text;

	record_init(&r, "snap_0123456789abcdef", "caf\xc3\xa9 \"1\"\n");
	assert_int_equal(env_list_add(&r.spec.env, "B", "2"), 0);
	assert_int_equal(env_list_add(&r.spec.env, "A", "\xf0\x9f\x98\x80"),
	    0);
	assert_non_null(text = store_snapshot_to_json(&r));
	/* json.dumps(record, indent=2, sort_keys=True) */
	assert_string_equal(text,
	    "{\n"
	    "  \"created_at\": 1700000000.053406,\n"
	    "  \"id\": \"snap_0123456789abcdef\",\n"
	    "  \"name\": \"caf\\u00e9 \\\"1\\\"\\n\",\n"
	    "  \"sandbox_id\": \"sb_0123456789abcdef\",\n"
	    "  \"size_bytes\": 10240,\n"
	    "  \"spec\": {\n"
	    "    \"cpus\": 0.5,\n"
	    "    \"env\": {\n"
	    "      \"A\": \"\\ud83d\\ude00\",\n"
	    "      \"B\": \"2\"\n"
	    "    },\n"
	    "    \"image\": \"python:3.12-slim\",\n"
	    "    \"memory_mb\": 256,\n"
	    "    \"network\": true,\n"
	    "    \"pids_limit\": 64,\n"
	    "    \"read_only_rootfs\": false\n"
	    "  }\n"
	    "}");
	free(text);
	free(r.name);
	r.name = NULL;
	assert_non_null(text = store_snapshot_to_json(&r));
	assert_non_null(strstr(text, "\"name\": null,\n"));
	free(text);
	snapshot_record_free(&r);
}

static void
round_trip(const char *name, const char *sandbox_id, double created_at,
    const char *envval)
{
	struct snapshot_record	 r, back;

	record_init(&r, "snap_00000000000000ff", name);
	free(r.sandbox_id);
	r.sandbox_id = strdup(sandbox_id);
	r.created_at = created_at;
	r.size_bytes = UINT64_C(1) << 40;
	assert_int_equal(env_list_add(&r.spec.env, "K", envval), 0);
	store(&r);
	assert_int_equal(store_snapshot_load(dfd, r.id, &back), 0);
	assert_string_equal(back.id, r.id);
	if (name == NULL)
		assert_null(back.name);
	else
		assert_string_equal(back.name, name);
	assert_string_equal(back.sandbox_id, sandbox_id);
	assert_true(back.created_at == created_at);
	assert_true(back.size_bytes == r.size_bytes);
	assert_string_equal(back.spec.image, r.spec.image);
	assert_true(back.spec.cpus == r.spec.cpus);
	assert_int_equal(back.spec.memory_mb, 256);
	assert_int_equal(back.spec.pids_limit, 64);
	assert_true(back.spec.network);
	assert_false(back.spec.read_only_rootfs);
	assert_int_equal(back.spec.env.count, 1);
	assert_string_equal(back.spec.env.values[0], envval);
	snapshot_record_free(&back);
	snapshot_record_free(&r);
}

static void
test_round_trip(void **state)
{
	round_trip(NULL, "sb_0123456789abcdef", 1700000000.053406, "v");
	round_trip("", "anything / at all", 0.1 + 0.2, "");
	round_trip("\xf0\x9d\x84\x9e music \xf0\x9d\xa0\x80 \\ \t \x01",
	    "sb_x", 4e9, "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	round_trip("'quotes' \"and\" </script>", "sb_0123456789abcdef", 0,
	    "a\nb");
	round_trip("x", "sb_0123456789abcdef", 5e-324, "y");
	round_trip("x", "sb_0123456789abcdef", 1.7976931348623157e308, "y");
}

static void
test_what_exists(void **state)
{
	struct snapshot_record	 r, *all;
	size_t			 count, i;
	int			 seen = 0;

	record_init(&r, "snap_0000000000000001", "one");
	store(&r);
	snapshot_record_free(&r);
	/* A record without its tar is no snapshot. */
	record_init(&r, "snap_0000000000000002", "no tar");
	assert_int_equal(store_snapshot_write(dfd, &r), 0);
	snapshot_record_free(&r);
	assert_int_equal(store_snapshot_load(dfd, "snap_0000000000000002",
	    &r), -1);
	assert_int_equal(errno, ENOENT);
	/* A tar without its record neither. */
	put_file("snapshots/snap_0000000000000003.tar", "tar");
	assert_int_equal(store_snapshot_load(dfd, "snap_0000000000000003",
	    &r), -1);
	assert_int_equal(errno, ENOENT);
	/* Corrupt, partial, or of another id. */
	put_file("snapshots/snap_0000000000000004.json", "{\"id\": ");
	put_file("snapshots/snap_0000000000000004.tar", "tar");
	put_file("snapshots/snap_0000000000000005.json", "[]");
	put_file("snapshots/snap_0000000000000005.tar", "tar");
	record_init(&r, "snap_0000000000000001", "copy");
	assert_int_equal(store_snapshot_write(dfd, &r), 0);
	snapshot_record_free(&r);
	assert_int_equal(renameat(dfd, "snapshots/snap_0000000000000001.json",
	    dfd, "snapshots/snap_0000000000000006.json"), 0);
	put_file("snapshots/snap_0000000000000006.tar", "tar");
	record_init(&r, "snap_0000000000000001", "one again");
	store(&r);
	snapshot_record_free(&r);
	assert_int_equal(store_snapshot_load(dfd, "snap_0000000000000004",
	    &r), -1);
	assert_int_equal(store_snapshot_load(dfd, "snap_0000000000000006",
	    &r), -1);
	assert_int_equal(errno, ENOENT);
	/* Leftovers of a write, and names that are no id. */
	put_file("snapshots/snap_0000000000000007.json.tmp", "{");
	put_file("snapshots/snap_0000000000000008.tmp", "tar");
	put_file("snapshots/notes.json", "{}");
	put_file("snapshots/SNAP_0000000000000009.json", "{}");

	assert_int_equal(store_snapshot_load_all(dfd, NULL, &all, &count), 0);
	for (i = 0; i < count; i++) {
		if (strcmp(all[i].id, "snap_0000000000000001") == 0) {
			assert_string_equal(all[i].name, "one again");
			seen++;
		}
		snapshot_record_free(&all[i]);
	}
	free(all);
	assert_int_equal(count, 1);
	assert_int_equal(seen, 1);
	/* Nothing is deleted by looking. */
	assert_true(exists("snapshots/snap_0000000000000004.json"));
	assert_true(exists("snapshots/snap_0000000000000007.json.tmp"));
}

static void
test_bad_ids(void **state)
{
	struct snapshot_record	 r;
	static const char	*bad[] = {
		"../sandboxes/sb_0123456789abcdef", "snap_0000000000000001/",
		"snap_0000000000000001.json", "", "snap_", ".", "..",
		"snap_000000000000000G",
	};
	size_t			 i;

	record_init(&r, "snap_0000000000000001", "one");
	store(&r);
	snapshot_record_free(&r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(store_snapshot_load(dfd, bad[i], &r), -1);
		assert_int_equal(errno, ENOENT);
		assert_int_equal(store_snapshot_remove(dfd, bad[i]), -1);
	}
	/* A record may not be written under a bad id either. */
	record_init(&r, "snap_0000000000000001", "one");
	strlcpy(r.id, "snap_../../x", sizeof(r.id));
	assert_int_equal(store_snapshot_write(dfd, &r), -1);
	snapshot_record_free(&r);
	assert_true(exists("snapshots/snap_0000000000000001.tar"));
}

static void
test_remove(void **state)
{
	struct snapshot_record	 r;

	record_init(&r, "snap_0000000000000001", "one");
	store(&r);
	snapshot_record_free(&r);
	assert_int_equal(store_snapshot_remove(dfd, "snap_0000000000000001"),
	    0);
	assert_false(exists("snapshots/snap_0000000000000001.tar"));
	assert_false(exists("snapshots/snap_0000000000000001.json"));
	assert_int_equal(store_snapshot_load(dfd, "snap_0000000000000001",
	    &r), -1);
	/* Removing what is not there is no error. */
	assert_int_equal(store_snapshot_remove(dfd, "snap_0000000000000001"),
	    0);
}

/*
 * The record goes before the tar: a removal that stops half-way (here a
 * "tar" that is a directory) leaves no record pointing at nothing.
 */
static void
test_remove_record_first(void **state)
{
	struct snapshot_record	 r;

	record_init(&r, "snap_0000000000000001", "one");
	assert_int_equal(store_snapshot_write(dfd, &r), 0);
	snapshot_record_free(&r);
	assert_int_equal(mkdirat(dfd, "snapshots/snap_0000000000000001.tar",
	    0700), 0);
	assert_int_equal(store_snapshot_remove(dfd, "snap_0000000000000001"),
	    -1);
	assert_false(exists("snapshots/snap_0000000000000001.json"));
	assert_true(exists("snapshots/snap_0000000000000001.tar"));
	assert_int_equal(unlinkat(dfd, "snapshots/snap_0000000000000001.tar",
	    AT_REMOVEDIR), 0);
}

/* A record as the reference writes it (Python's json.dumps) reads. */
static void
test_reference_record(void **state)
{
	struct snapshot_record	 r;

	put_file("snapshots/snap_9a8b7c6d5e4f3a2b.json",
	    "{\n  \"created_at\": 1700000000,\n"
	    "  \"id\": \"snap_9a8b7c6d5e4f3a2b\",\n"
	    "  \"name\": \"\\ud834\\udd1e\",\n"
	    "  \"sandbox_id\": \"sb_4f1c2a9e0b7d6c31\",\n"
	    "  \"size_bytes\": 10240,\n"
	    "  \"spec\": {\n    \"cpus\": 1.0,\n    \"env\": {},\n"
	    "    \"image\": \"python:3.12-slim\",\n"
	    "    \"memory_mb\": 512,\n    \"network\": false,\n"
	    "    \"pids_limit\": 256,\n    \"read_only_rootfs\": true\n"
	    "  }\n}");
	put_file("snapshots/snap_9a8b7c6d5e4f3a2b.tar", "tar");
	assert_int_equal(store_snapshot_load(dfd, "snap_9a8b7c6d5e4f3a2b",
	    &r), 0);
	assert_string_equal(r.name, "\xf0\x9d\x84\x9e");
	assert_true(r.created_at == 1700000000.0);
	assert_true(r.spec.cpus == 1.0);
	assert_true(r.spec.read_only_rootfs);
	assert_int_equal(r.spec.env.count, 0);
	snapshot_record_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_text),
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_what_exists, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_record_first,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_record, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
