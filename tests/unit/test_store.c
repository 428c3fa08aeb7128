/*
 * Tests for managerd/store.c and store_json.c: sandbox records (API.md
 * §9), item 65 of REFERENCE-TESTS.md (exact round trips of random
 * records), the exact text Python's json.dumps(record, indent=2,
 * sort_keys=True) gives (golden strings from CPython 3.11), atomic
 * replacement, and what loading does with files that are not records.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
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

#include "managerd.h"

#define ROUNDS		2000
#define FILE_ROUNDS	60
#define MAX_LOADED	256

#define ID_A		"sb_4f1c2a9e0b7d6c31"
#define ID_B		"sb_0000000000000000"

/* A temporary data directory and what load_all handed over. */
struct fixture {
	char			 path[64];
	int			 dirfd;
	size_t			 nloaded;
	struct sandbox_record	*loaded[MAX_LOADED];
};

static const char golden_a[] =
	    "{\n"
	    "  \"created_at\": 1700000000.053406,\n"
	    "  \"expires_at\": 1700000600.053406,\n"
	    "  \"id\": \"sb_4f1c2a9e0b7d6c31\",\n"
	    "  \"source_snapshot_id\": \"snap_9a8b7c6d5e4f3a2b\",\n"
	    "  \"spec\": {\n"
	    "    \"cpus\": 0.5,\n"
	    "    \"env\": {\n"
	    "      \"A\": \"\",\n"
	    "      \"B\": \"</script>\",\n"
	    "      \"MODE\": \"test\",\n"
	    "      \"Z_KEY\": \"quote\\\" back\\\\ nl\\n cr\\r tab\\t bs\\b "
	    "ff\\f ctl\\u0001\\u001f del\\u007f \\u00e9 \\u20ac "
	    "\\ud83d\\ude00 /\",\n"
	    "      \"\\u00e9t\\u00e9\": \"x\"\n"
	    "    },\n"
	    "    \"image\": \"python:3.12-slim\",\n"
	    "    \"memory_mb\": 512,\n"
	    "    \"network\": false,\n"
	    "    \"pids_limit\": 256,\n"
	    "    \"read_only_rootfs\": true\n"
	    "  }\n"
	    "}";

static const char golden_b[] =
	    "{\n"
	    "  \"created_at\": 1e-05,\n"
	    "  \"expires_at\": 4000000000.0,\n"
	    "  \"id\": \"sb_0000000000000000\",\n"
	    "  \"source_snapshot_id\": null,\n"
	    "  \"spec\": {\n"
	    "    \"cpus\": 2.0,\n"
	    "    \"env\": {},\n"
	    "    \"image\": \"alpine\",\n"
	    "    \"memory_mb\": 16,\n"
	    "    \"network\": true,\n"
	    "    \"pids_limit\": 8,\n"
	    "    \"read_only_rootfs\": false\n"
	    "  }\n"
	    "}";

/* json.dumps(indent=2, sort_keys=True) of a record with labels. */
static const char golden_labels[] =
	    "{\n"
	    "  \"created_at\": 1700000000.25,\n"
	    "  \"expires_at\": 1700003600.25,\n"
	    "  \"id\": \"sb_1111111111111111\",\n"
	    "  \"labels\": {\n"
	    "    \"0\": \"\",\n"
	    "    \"a.b/c-d_e\": \"v\\u00e9 \\ud83d\\ude00 \\\"q\\\"\",\n"
	    "    \"team\": \"ml\"\n"
	    "  },\n"
	    "  \"source_snapshot_id\": null,\n"
	    "  \"spec\": {\n"
	    "    \"cpus\": 1.0,\n"
	    "    \"env\": {},\n"
	    "    \"image\": \"python:3.12-slim\",\n"
	    "    \"memory_mb\": 512,\n"
	    "    \"network\": false,\n"
	    "    \"pids_limit\": 256,\n"
	    "    \"read_only_rootfs\": true\n"
	    "  }\n"
	    "}";

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
setup(void **state)
{
	struct fixture	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	strlcpy(f->path, "/tmp/test_store.XXXXXX", sizeof(f->path));
	if (mkdtemp(f->path) == NULL)
		return -1;
	if ((f->dirfd = open(f->path, O_RDONLY | O_DIRECTORY)) == -1)
		return -1;
	if (mkdirat(f->dirfd, "sandboxes", 0700) == -1)
		return -1;
	*state = f;
	return 0;
}

static void
drop_loaded(struct fixture *f)
{
	size_t	 i;

	for (i = 0; i < f->nloaded; i++) {
		sandbox_record_free(f->loaded[i]);
		free(f->loaded[i]);
	}
	f->nloaded = 0;
}

static int
teardown(void **state)
{
	struct fixture	*f = *state;

	drop_loaded(f);
	close(f->dirfd);
	nftw(f->path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void
collect(struct sandbox_record *r, void *arg)
{
	struct fixture	*f = arg;

	assert_true(f->nloaded < MAX_LOADED);
	f->loaded[f->nloaded++] = r;
}

static void
load(struct fixture *f)
{
	drop_loaded(f);
	assert_int_equal(store_sandbox_load_all(f->dirfd, collect, f), 0);
}

static void
put_file(struct fixture *f, const char *name, const char *text, size_t len)
{
	char	 path[128];
	int	 fd;

	snprintf(path, sizeof(path), "sandboxes/%s", name);
	fd = openat(f->dirfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static int
exists(struct fixture *f, const char *name)
{
	char		 path[128];
	struct stat	 st;

	snprintf(path, sizeof(path), "sandboxes/%s", name);
	return fstatat(f->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int
not_dot(const struct dirent *de)
{
	return strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
}

/* Every name in sandboxes/, sorted, each followed by a space. */
static void
listing(struct fixture *f, char *buf, size_t len)
{
	struct dirent	**list;
	char		 path[128];
	int		 i, n;

	snprintf(path, sizeof(path), "%s/sandboxes", f->path);
	n = scandir(path, &list, not_dot, alphasort);
	assert_true(n >= 0);
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		strlcat(buf, list[i]->d_name, len);
		strlcat(buf, " ", len);
		free(list[i]);
	}
	free(list);
}

static void
record_init(struct sandbox_record *r, const char *id)
{
	memset(r, 0, sizeof(*r));
	strlcpy(r->id, id, sizeof(r->id));
	assert_non_null(r->spec.image = strdup("python:3.12-slim"));
	r->spec.cpus = 1.0;
	r->spec.memory_mb = 512;
	r->spec.pids_limit = 256;
	r->spec.read_only_rootfs = 1;
	r->created_at = 1700000000.25;
	r->expires_at = 1700003600.25;
}

static void
record_a(struct sandbox_record *r)
{
	record_init(r, ID_A);
	r->created_at = 1700000000.053406;
	r->expires_at = 1700000600.053406;
	assert_non_null(r->source_snapshot_id =
	    strdup("snap_9a8b7c6d5e4f3a2b"));
	r->spec.cpus = 0.5;
	assert_int_equal(env_list_add(&r->spec.env, "MODE", "test"), 0);
	assert_int_equal(env_list_add(&r->spec.env, "Z_KEY",
	    "quote\" back\\ nl\n cr\r tab\t bs\b ff\f ctl\x01\x1f del\x7f "
	    "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 /"), 0);
	assert_int_equal(env_list_add(&r->spec.env, "A", ""), 0);
	assert_int_equal(env_list_add(&r->spec.env, "\xc3\xa9t\xc3\xa9", "x"),
	    0);
	assert_int_equal(env_list_add(&r->spec.env, "B", "</script>"), 0);
}

static void
record_b(struct sandbox_record *r)
{
	record_init(r, ID_B);
	free(r->spec.image);
	assert_non_null(r->spec.image = strdup("alpine"));
	r->created_at = 1e-05;
	r->expires_at = 4e9;
	r->spec.cpus = 2.0;
	r->spec.memory_mb = 16;
	r->spec.pids_limit = 8;
	r->spec.network = 1;
	r->spec.read_only_rootfs = 0;
}

/* Same value down to the bits (so -0.0 is not 0.0). */
static void
assert_same_double(double a, double b)
{
	if (memcmp(&a, &b, sizeof(a)) != 0)
		fail_msg("%.17g != %.17g", a, b);
}

static int
env_cmp(const void *a, const void *b)
{
	const char *const	*x = a, *const *y = b;

	return strcmp(x[0], y[0]);
}

/* The env as sorted (key, value) pairs, for comparing as a map. */
static const char **
env_sorted(const struct env_list *el)
{
	const char	**pairs;
	size_t		 i;

	assert_non_null(pairs = calloc(el->count * 2 + 1, sizeof(*pairs)));
	for (i = 0; i < el->count; i++) {
		pairs[2 * i] = el->keys[i];
		pairs[2 * i + 1] = el->values[i];
	}
	qsort(pairs, el->count, 2 * sizeof(*pairs), env_cmp);
	return pairs;
}

static void
assert_records_equal(const struct sandbox_record *a,
    const struct sandbox_record *b)
{
	const char	**pa, **pb;
	size_t		 i;

	assert_string_equal(a->id, b->id);
	assert_same_double(a->created_at, b->created_at);
	assert_same_double(a->expires_at, b->expires_at);
	if (a->source_snapshot_id == NULL)
		assert_null(b->source_snapshot_id);
	else {
		assert_non_null(b->source_snapshot_id);
		assert_string_equal(a->source_snapshot_id,
		    b->source_snapshot_id);
	}
	assert_string_equal(a->spec.image, b->spec.image);
	assert_same_double(a->spec.cpus, b->spec.cpus);
	assert_int_equal(a->spec.memory_mb, b->spec.memory_mb);
	assert_int_equal(a->spec.pids_limit, b->spec.pids_limit);
	assert_int_equal(a->spec.network, b->spec.network);
	assert_int_equal(a->spec.read_only_rootfs, b->spec.read_only_rootfs);
	assert_int_equal(a->spec.env.count, b->spec.env.count);
	pa = env_sorted(&a->spec.env);
	pb = env_sorted(&b->spec.env);
	for (i = 0; i < 2 * a->spec.env.count; i++)
		assert_string_equal(pa[i], pb[i]);
	free(pa);
	free(pb);
}

static void
test_golden_text(void **state)
{
	struct sandbox_record	 r, back;
	char			*text;

	record_a(&r);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_string_equal(text, golden_a);
	assert_int_equal(store_sandbox_from_json(text, &back), 0);
	assert_records_equal(&r, &back);
	free(text);
	sandbox_record_free(&back);
	sandbox_record_free(&r);

	record_b(&r);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_string_equal(text, golden_b);
	assert_int_equal(store_sandbox_from_json(golden_b, &back), 0);
	assert_records_equal(&r, &back);
	assert_null(back.source_snapshot_id);
	free(text);
	sandbox_record_free(&back);
	sandbox_record_free(&r);
}

/*
 * An egress policy: "egress" after "created_at", only when it is not
 * none, read back the same; one that would not parse is no record.
 */
static void
test_egress_text(void **state)
{
	struct sandbox_record	 r, back;
	json_object		*obj;
	char			*text, *bad, err[256];
	size_t			 i;
	static const char *const bad_egress[] = {
		"\"egress\": {\"mode\": \"public\"},",	/* the control */
		"\"egress\": {\"mode\": \"open\"},",
		"\"egress\": [],", "\"egress\": \"public\",",
		"\"egress\": {\"mode\": \"allowlist\", \"allow\": [1]},",
	};

	record_init(&r, "sb_1111111111111111");
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_null(strstr(text, "egress"));
	free(text);
	obj = json_tokener_parse("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"*.pypi.org\", \"203.0.113.0/24:443\", \"[2001:db8::1]\"]}");
	assert_int_equal(egress_policy_parse(obj, NULL, &r.egress, err,
	    sizeof(err)), 0);
	json_object_put(obj);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_non_null(strstr(text, "{\n  \"created_at\": 1700000000.25,\n"
	    "  \"egress\": {\"mode\":\"allowlist\",\"allow\":"
	    "[\"*.pypi.org\",\"203.0.113.0/24:443\",\"[2001:db8::1]\"]},\n"
	    "  \"expires_at\""));
	assert_int_equal(store_sandbox_from_json(text, &back), 0);
	assert_true(egress_policy_equal(&back.egress, &r.egress));
	sandbox_record_free(&back);
	free(text);
	sandbox_record_free(&r);
	for (i = 0; i < sizeof(bad_egress) / sizeof(bad_egress[0]); i++) {
		assert_true(asprintf(&bad, "{\"created_at\": 1.0, %s "
		    "\"expires_at\": 2.0, \"id\": \"sb_1111111111111111\", "
		    "\"source_snapshot_id\": null, \"spec\": {\"cpus\": 1.0, "
		    "\"env\": {}, \"image\": \"x\", \"memory_mb\": 16, "
		    "\"network\": false, \"pids_limit\": 8, "
		    "\"read_only_rootfs\": true}}", bad_egress[i]) != -1);
		assert_int_equal(store_sandbox_from_json(bad, &back),
		    i == 0 ? 0 : -1);
		if (i == 0) {
			assert_int_equal(back.egress.mode, EGRESS_PUBLIC);
			sandbox_record_free(&back);
		}
		free(bad);
	}
}

/*
 * Labels: written in key order between "id" and "source_snapshot_id",
 * read back; none is no field at all (golden_b has none).  A record's
 * labels are held to labels.h: one that breaks it is no record.
 */
static void
test_labels_text(void **state)
{
	struct sandbox_record	 r, back;
	char			*text, *bad;
	size_t			 i;
	static const char *const bad_labels[] = {
		"", "\"labels\": {\"ok\": \"v\"},",	/* the control */
		"\"labels\": [],", "\"labels\": {\"-x\": \"1\"},",
		"\"labels\": {\"x\": 1},", "\"labels\": {\"x\": \"\\n\"},",
		"\"labels\": {\"\\u00e9\": \"1\"},",
		"\"labels\": {\"x\": \"\\u0000\"},",
	};

	record_init(&r, "sb_1111111111111111");
	assert_int_equal(labels_set(&r.labels, "team", "ml"), 0);
	assert_int_equal(labels_set(&r.labels, "a.b/c-d_e",
	    "v\xc3\xa9 \xf0\x9f\x98\x80 \"q\""), 0);
	assert_int_equal(labels_set(&r.labels, "0", ""), 0);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_string_equal(text, golden_labels);
	assert_int_equal(store_sandbox_from_json(text, &back), 0);
	assert_int_equal(back.labels.count, 3);
	assert_string_equal(labels_get(&back.labels, "team"), "ml");
	assert_string_equal(labels_get(&back.labels, "a.b/c-d_e"),
	    "v\xc3\xa9 \xf0\x9f\x98\x80 \"q\"");
	sandbox_record_free(&back);
	free(text);
	sandbox_record_free(&r);
	for (i = 0; i < sizeof(bad_labels) / sizeof(bad_labels[0]); i++) {
		assert_true(asprintf(&bad, "{\"created_at\": 1.0, "
		    "\"expires_at\": 2.0, \"id\": \"sb_1111111111111111\", %s "
		    "\"source_snapshot_id\": null, \"spec\": {\"cpus\": 1.0, "
		    "\"env\": {}, \"image\": \"x\", \"memory_mb\": 16, "
		    "\"network\": false, \"pids_limit\": 8, "
		    "\"read_only_rootfs\": true}}", bad_labels[i]) != -1);
		if (i < 2) {
			assert_int_equal(store_sandbox_from_json(bad, &back),
			    0);
			assert_int_equal(back.labels.count, i);
			sandbox_record_free(&back);
		} else if (store_sandbox_from_json(bad, &back) != -1)
			fail_msg("accepted %s", bad_labels[i]);
		free(bad);
	}
}

/* Valid UTF-8 of random code points: controls, Latin-1, BMP, astral. */
static void
random_text(char *buf, size_t len)
{
	size_t		 n = 0, count, i;
	uint32_t	 cp;

	count = random() % 24;
	for (i = 0; i < count && n + 5 < len; i++) {
		switch (random() % 6) {
		case 0:
			cp = 1 + random() % 0x7f;	/* no NUL */
			break;
		case 1:
			cp = 0x20 + random() % 0x5f;
			break;
		case 2:
			cp = 0x80 + random() % 0x780;
			break;
		case 3:
			do
				cp = 0x800 + random() % 0xf800;
			while (cp >= 0xd800 && cp <= 0xdfff);
			break;
		case 4:
			cp = 0x10000 + random() % 0x100000;
			break;
		default:
			cp = "\"\\/\n\t{}:,"[random() % 10];
			break;
		}
		if (cp < 0x80)
			buf[n++] = cp;
		else if (cp < 0x800) {
			buf[n++] = 0xc0 | (cp >> 6);
			buf[n++] = 0x80 | (cp & 0x3f);
		} else if (cp < 0x10000) {
			buf[n++] = 0xe0 | (cp >> 12);
			buf[n++] = 0x80 | ((cp >> 6) & 0x3f);
			buf[n++] = 0x80 | (cp & 0x3f);
		} else {
			buf[n++] = 0xf0 | (cp >> 18);
			buf[n++] = 0x80 | ((cp >> 12) & 0x3f);
			buf[n++] = 0x80 | ((cp >> 6) & 0x3f);
			buf[n++] = 0x80 | (cp & 0x3f);
		}
	}
	buf[n] = '\0';
}

static double
random_time(void)
{
	double	 t;

	switch (random() % 4) {
	case 0:		/* whole seconds */
		return (double)(random() % 4000000001LL);
	case 1:		/* microseconds, as time.time() gives */
		return (double)(random() % 4000000000LL) +
		    (double)(random() % 1000000) / 1e6;
	default:	/* any double in range */
		t = (double)random() / (double)RAND_MAX * 4e9;
		return t;
	}
}

static double
random_double(void)
{
	uint64_t	 bits;
	double		 d;

	if (random() % 2)
		return (double)(1 + random() % 6400) / 100.0;
	do {
		bits = ((uint64_t)random() << 42) ^ ((uint64_t)random() << 21) ^
		    (uint64_t)random();
		memcpy(&d, &bits, sizeof(d));
	} while (!isfinite(d));
	return d;
}

static int64_t
random_int64(void)
{
	static const int64_t	 edges[] = {
		0, 1, -1, INT64_MAX, INT64_MIN
	};

	if (random() % 8 == 0)
		return edges[random() % 5];
	return (int64_t)(((uint64_t)random() << 33) ^ (uint64_t)random());
}

static void
random_record(struct sandbox_record *r)
{
	char	 id[SANDBOX_ID_LEN + 1], k[128], v[128];
	size_t	 i, j, count;
	int	 dup;

	snprintf(id, sizeof(id), "sb_%08lx%08lx",
	    (unsigned long)random() & 0xffffffff,
	    (unsigned long)random() & 0xffffffff);
	record_init(r, id);
	r->created_at = random_time();
	r->expires_at = random_time();
	if (random() % 2) {
		random_text(v, sizeof(v));
		assert_non_null(r->source_snapshot_id = strdup(v));
	}
	random_text(v, sizeof(v));
	free(r->spec.image);
	assert_non_null(r->spec.image = strdup(v));
	r->spec.cpus = random_double();
	r->spec.memory_mb = random_int64();
	r->spec.pids_limit = random_int64();
	r->spec.network = random() % 2;
	r->spec.read_only_rootfs = random() % 2;
	count = random() % 8;
	for (i = 0; i < count; i++) {
		random_text(k, sizeof(k));
		for (dup = 0, j = 0; j < r->spec.env.count; j++)
			dup |= strcmp(r->spec.env.keys[j], k) == 0;
		if (dup)
			continue;
		random_text(v, sizeof(v));
		assert_int_equal(env_list_add(&r->spec.env, k, v), 0);
	}
}

/* Item 65: text round trips are exact, and the text is stable. */
static void
test_random_roundtrip(void **state)
{
	struct sandbox_record	 r, back;
	char			*text, *again;
	int			 i;

	srandom(65);
	for (i = 0; i < ROUNDS; i++) {
		random_record(&r);
		assert_non_null(text = store_sandbox_to_json(&r));
		if (store_sandbox_from_json(text, &back) != 0)
			fail_msg("cannot read back:\n%s", text);
		assert_records_equal(&r, &back);
		assert_non_null(again = store_sandbox_to_json(&back));
		assert_string_equal(text, again);
		free(again);
		free(text);
		sandbox_record_free(&back);
		sandbox_record_free(&r);
	}
}

static int
record_cmp(const void *a, const void *b)
{
	const struct sandbox_record	*x = a, *y = b;

	return strcmp(x->id, y->id);
}

/* Through the file system: written, loaded in name order, identical. */
static void
test_write_and_load(void **state)
{
	struct fixture		*f = *state;
	struct sandbox_record	 recs[FILE_ROUNDS];
	struct stat		 st;
	char			 path[64], names[8192];
	size_t			 i;

	srandom(9);
	for (i = 0; i < FILE_ROUNDS; i++) {
		random_record(&recs[i]);
		assert_int_equal(store_sandbox_write(f->dirfd, &recs[i]), 0);
	}
	snprintf(path, sizeof(path), "sandboxes/%s.json", recs[0].id);
	assert_int_equal(fstatat(f->dirfd, path, &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	listing(f, names, sizeof(names));
	assert_null(strstr(names, ".tmp"));

	load(f);
	assert_int_equal(f->nloaded, FILE_ROUNDS);
	qsort(recs, FILE_ROUNDS, sizeof(recs[0]), record_cmp);
	for (i = 0; i < FILE_ROUNDS; i++) {
		/* Handed over in file-name order. */
		if (i > 0)
			assert_true(strcmp(f->loaded[i - 1]->id,
			    f->loaded[i]->id) < 0);
		assert_records_equal(&recs[i], f->loaded[i]);
		sandbox_record_free(&recs[i]);
	}
}

static void
test_overwrite_and_remove(void **state)
{
	struct fixture		*f = *state;
	struct sandbox_record	 r;
	char			 names[512];

	record_a(&r);
	assert_int_equal(store_sandbox_write(f->dirfd, &r), 0);
	r.expires_at += 60;
	assert_int_equal(store_sandbox_write(f->dirfd, &r), 0);
	listing(f, names, sizeof(names));
	assert_string_equal(names, ID_A ".json ");
	load(f);
	assert_int_equal(f->nloaded, 1);
	assert_records_equal(&r, f->loaded[0]);

	assert_int_equal(store_sandbox_remove(f->dirfd, ID_A), 0);
	assert_false(exists(f, ID_A ".json"));
	/* Already gone is fine. */
	assert_int_equal(store_sandbox_remove(f->dirfd, ID_A), 0);
	load(f);
	assert_int_equal(f->nloaded, 0);
	sandbox_record_free(&r);
}

/* No id can name a file outside sandboxes/ or one not of a record. */
static void
test_bad_ids(void **state)
{
	static const char *const bad[] = {
		"../../etc/passwd", "sb_../../../../etc", "sb_0123/56789abcdef",
		"sb_0123456789ABCDEF", "sb_0123456789abcde", "", ".", "..",
		"sb_0123456789abcdeg", "snap_0123456789abcd", "sb_..",
		"sb_0123456789abcdef/../../x",
	};
	struct fixture		*f = *state;
	struct sandbox_record	 r;
	char			*text, names[512];
	size_t			 i;

	record_init(&r, ID_A);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* The record's id field holds the short ones only. */
		if (strlen(bad[i]) < sizeof(r.id)) {
			strlcpy(r.id, bad[i], sizeof(r.id));
			errno = 0;
			assert_int_equal(store_sandbox_write(f->dirfd, &r), -1);
			assert_int_equal(errno, EINVAL);
			assert_null(text = store_sandbox_to_json(&r));
		}
		errno = 0;
		assert_int_equal(store_sandbox_remove(f->dirfd, bad[i]), -1);
		assert_int_equal(errno, EINVAL);
	}
	listing(f, names, sizeof(names));
	assert_string_equal(names, "");
	sandbox_record_free(&r);
}

/* A record as the Python reference writes it, and a looser one. */
static void
test_reference_records(void **state)
{
	static const char python[] =
	    "{\n"
	    "  \"created_at\": 1700000000.053406,\n"
	    "  \"expires_at\": 1700003600.053406,\n"
	    "  \"id\": \"sb_4f1c2a9e0b7d6c31\",\n"
	    "  \"source_snapshot_id\": \"snap_9a8b7c6d5e4f3a2b\",\n"
	    "  \"spec\": {\n"
	    "    \"cpus\": 0.5,\n"
	    "    \"env\": {\n"
	    "      \"MODE\": \"test\",\n"
	    "      \"N\": \"caf\\u00e9 \\ud83d\\ude00\"\n"
	    "    },\n"
	    "    \"image\": \"python:3.12-slim\",\n"
	    "    \"memory_mb\": 512,\n"
	    "    \"network\": false,\n"
	    "    \"pids_limit\": 256,\n"
	    "    \"read_only_rootfs\": true\n"
	    "  }\n"
	    "}";
	/* Ints where floats go, no source_snapshot_id, keys unsorted. */
	static const char loose[] =
	    " {\"spec\": {\"read_only_rootfs\": false, \"network\": true,"
	    " \"env\": {}, \"memory_mb\": 128, \"pids_limit\": 64,"
	    " \"cpus\": 1, \"image\": \"alpine:3.20\", \"extra\": 1},"
	    " \"id\": \"sb_00000000000000ff\", \"expires_at\": 1700000060,"
	    " \"created_at\": 1700000000, \"future\": [1, 2]}\n";
	struct fixture		*f = *state;
	struct sandbox_record	*r;

	put_file(f, ID_A ".json", python, sizeof(python) - 1);
	put_file(f, "sb_00000000000000ff.json", loose, sizeof(loose) - 1);
	load(f);
	assert_int_equal(f->nloaded, 2);

	r = f->loaded[0];
	assert_string_equal(r->id, "sb_00000000000000ff");
	assert_same_double(r->created_at, 1700000000.0);
	assert_same_double(r->expires_at, 1700000060.0);
	assert_null(r->source_snapshot_id);
	assert_string_equal(r->spec.image, "alpine:3.20");
	assert_same_double(r->spec.cpus, 1.0);
	assert_int_equal(r->spec.memory_mb, 128);
	assert_int_equal(r->spec.pids_limit, 64);
	assert_int_equal(r->spec.network, 1);
	assert_int_equal(r->spec.read_only_rootfs, 0);
	assert_int_equal(r->spec.env.count, 0);

	r = f->loaded[1];
	assert_string_equal(r->id, ID_A);
	assert_same_double(r->created_at, 1700000000.053406);
	assert_same_double(r->expires_at, 1700003600.053406);
	assert_string_equal(r->source_snapshot_id, "snap_9a8b7c6d5e4f3a2b");
	assert_same_double(r->spec.cpus, 0.5);
	assert_int_equal(r->spec.env.count, 2);
	assert_string_equal(r->spec.env.keys[0], "MODE");
	assert_string_equal(r->spec.env.values[0], "test");
	assert_string_equal(r->spec.env.keys[1], "N");
	assert_string_equal(r->spec.env.values[1],
	    "caf\xc3\xa9 \xf0\x9f\x98\x80");
	assert_true(exists(f, ID_A ".json"));
	assert_true(exists(f, "sb_00000000000000ff.json"));
}

#define REC(id, body)							\
	"{\"created_at\": 1.0, \"expires_at\": 2.0, "			\
	"\"id\": \"" id "\", "						\
	"\"spec\": {\"cpus\": 1.0, \"env\": {}, \"image\": \"a\", "	\
	"\"memory_mb\": 16, \"network\": false, \"pids_limit\": 8, "	\
	"\"read_only_rootfs\": true" body "}}"

/* Anything that is not a record is deleted, and only that. */
static void
test_corrupt_files(void **state)
{
	static const struct {
		const char	*name;
		const char	*text;
	} bad[] = {
		{ "sb_a000000000000001.json", "{not json" },
		{ "sb_a000000000000002.json", "" },
		{ "sb_a000000000000003.json", "[1, 2]" },
		{ "sb_a000000000000004.json",
		    "{\"id\": \"sb_a000000000000004\"}" },
		/* Named after another record. */
		{ "sb_a000000000000005.json", REC("sb_a000000000000006", "") },
		{ "sb_a000000000000007.json", REC("sb_a000000000000007", "")
		    " trailing" },
		{ "sb_a000000000000008.json",
		    REC("sb_a000000000000008", ", \"memory_mb\": \"16\"") },
		{ "sb_a000000000000009.json",
		    REC("sb_a000000000000009", ", \"network\": 0") },
		{ "sb_a00000000000000a.json",
		    REC("sb_a00000000000000a", ", \"env\": {\"A\": 1}") },
		{ "sb_a00000000000000b.json",
		    REC("sb_a00000000000000b",
		    ", \"env\": {\"A\": \"\\u0000\"}") },
		{ "sb_a00000000000000c.json",
		    REC("sb_a00000000000000c", ", \"cpus\": NaN") },
		{ "sb_a00000000000000d.json",
		    REC("sb_a00000000000000d", ", \"image\": \"\xff\"") },
		{ "sb_a00000000000000e.json",
		    REC("sb_a00000000000000e",
		    ", \"pids_limit\": 9223372036854775808") },
		{ "sb_A00000000000000F.json", REC("sb_A00000000000000F", "") },
		{ "junk.json", REC("sb_a000000000000010", "") },
		{ "sb_a000000000000011.json", REC("sb_a000000000000011", "")
		    "{}" },
	};
	static const char good[] = REC("sb_b000000000000001", "");
	static const char nul[] = "{\"id\": \"sb_a0\0\"}";
	struct fixture	*f = *state;
	char		 names[4096];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		put_file(f, bad[i].name, bad[i].text, strlen(bad[i].text));
	/* A NUL byte inside an otherwise good record. */
	put_file(f, "sb_a000000000000012.json", nul, sizeof(nul) - 1);
	put_file(f, "sb_b000000000000001.json", good, sizeof(good) - 1);
	put_file(f, "notes.txt", "keep", 4);
	put_file(f, "sb_b000000000000002.json.tmp", good, sizeof(good) - 1);
	/* A symlink is removed, its target is not followed. */
	assert_int_equal(symlinkat("../target.json", f->dirfd,
	    "sandboxes/sb_b000000000000003.json"), 0);
	assert_int_equal(mkdirat(f->dirfd, "sandboxes/sb_b000000000000004.json",
	    0700), 0);
	assert_int_equal(mkfifoat(f->dirfd,
	    "sandboxes/sb_b000000000000005.json", 0600), 0);

	load(f);
	assert_int_equal(f->nloaded, 1);
	assert_string_equal(f->loaded[0]->id, "sb_b000000000000001");
	listing(f, names, sizeof(names));
	assert_string_equal(names, "notes.txt sb_b000000000000001.json "
	    "sb_b000000000000004.json ");
}

static void
test_oversized_file(void **state)
{
	struct fixture	*f = *state;
	char		*big;
	size_t		 n = STORE_RECORD_MAX + 1;

	assert_non_null(big = malloc(n));
	memset(big, ' ', n);
	memcpy(big, REC("sb_c000000000000001", ""),
	    sizeof(REC("sb_c000000000000001", "")) - 1);
	put_file(f, "sb_c000000000000001.json", big, n);
	/* One byte less is still a record. */
	memcpy(big, REC("sb_c000000000000002", ""),
	    sizeof(REC("sb_c000000000000002", "")) - 1);
	put_file(f, "sb_c000000000000002.json", big, n - 1);
	free(big);
	load(f);
	assert_int_equal(f->nloaded, 1);
	assert_string_equal(f->loaded[0]->id, "sb_c000000000000002");
	assert_false(exists(f, "sb_c000000000000001.json"));
}

/* Too big to be read back: refused when writing. */
static void
test_oversized_record(void **state)
{
	struct fixture		*f = *state;
	struct sandbox_record	 r;
	char			*v;
	size_t			 n = STORE_RECORD_MAX / 6 + 1;

	record_init(&r, ID_A);
	assert_non_null(v = malloc(n + 1));
	memset(v, '\x01', n);
	v[n] = '\0';
	assert_int_equal(env_list_add(&r.spec.env, "X", v), 0);
	free(v);
	errno = 0;
	assert_null(store_sandbox_to_json(&r));
	assert_int_equal(errno, EFBIG);
	assert_int_equal(store_sandbox_write(f->dirfd, &r), -1);
	assert_int_equal(errno, EFBIG);
	assert_false(exists(f, ID_A ".json"));
	assert_false(exists(f, ID_A ".json.tmp"));
	sandbox_record_free(&r);
}

/* A failed write leaves neither a temp file nor a damaged record. */
static void
test_atomic_failures(void **state)
{
	struct fixture		*f = *state;
	struct sandbox_record	 r;
	struct rlimit		 old, small;
	char			*v, names[512], path[128];
	size_t			 n = 8192;

	/* The rename fails: a directory sits where the record goes. */
	record_init(&r, ID_B);
	assert_int_equal(mkdirat(f->dirfd, "sandboxes/" ID_B ".json", 0700),
	    0);
	assert_int_equal(mkdirat(f->dirfd, "sandboxes/" ID_B ".json/x", 0700),
	    0);
	assert_int_equal(store_sandbox_write(f->dirfd, &r), -1);
	assert_true(errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST);
	assert_false(exists(f, ID_B ".json.tmp"));
	sandbox_record_free(&r);

	/* The write fails half-way (file size limit): the old text stays. */
	record_a(&r);
	assert_int_equal(store_sandbox_write(f->dirfd, &r), 0);
	assert_non_null(v = malloc(n + 1));
	memset(v, 'v', n);
	v[n] = '\0';
	assert_int_equal(env_list_add(&r.spec.env, "BIG", v), 0);
	free(v);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	errno = 0;
	assert_int_equal(store_sandbox_write(f->dirfd, &r), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_false(exists(f, ID_A ".json.tmp"));
	load(f);
	sandbox_record_free(&r);
	record_a(&r);
	assert_int_equal(f->nloaded, 1);
	assert_records_equal(&r, f->loaded[0]);
	sandbox_record_free(&r);

	/* No sandboxes directory: nothing is made anywhere. */
	snprintf(path, sizeof(path), "%s/sandboxes", f->path);
	assert_int_equal(nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
	record_a(&r);
	errno = 0;
	assert_int_equal(store_sandbox_write(f->dirfd, &r), -1);
	assert_int_equal(errno, ENOENT);
	sandbox_record_free(&r);
	assert_int_equal(mkdirat(f->dirfd, "sandboxes", 0700), 0);
	listing(f, names, sizeof(names));
	assert_string_equal(names, "");
}

static void
test_load_directory(void **state)
{
	struct fixture	*f = *state;
	struct stat	 st;
	int		 fd;

	/* A missing directory is made. */
	assert_int_equal(unlinkat(f->dirfd, "sandboxes", AT_REMOVEDIR), 0);
	load(f);
	assert_int_equal(f->nloaded, 0);
	assert_int_equal(fstatat(f->dirfd, "sandboxes", &st, 0), 0);
	assert_true(S_ISDIR(st.st_mode));

	/* One that cannot be read is an error. */
	assert_int_equal(unlinkat(f->dirfd, "sandboxes", AT_REMOVEDIR), 0);
	fd = openat(f->dirfd, "sandboxes", O_WRONLY | O_CREAT, 0600);
	assert_true(fd != -1);
	close(fd);
	errno = 0;
	assert_int_equal(store_sandbox_load_all(f->dirfd, collect, f), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_int_equal(f->nloaded, 0);
}

static void
test_from_json_invalid(void **state)
{
	static const char *const bad[] = {
		"", " ", "null", "1", "\"x\"", "{}", "{\"id\": 1}",
		REC("sb_0000000000000001", "") "x",
		REC("sb_0000000000000001", ", \"read_only_rootfs\": null"),
		"{\"created_at\": \"1\", \"expires_at\": 2.0, "
		    "\"id\": \"sb_0000000000000001\", "
		    "\"spec\": {\"cpus\": 1.0, \"env\": {}, \"image\": \"a\", "
		    "\"memory_mb\": 16, \"network\": false, "
		    "\"pids_limit\": 8, \"read_only_rootfs\": true}}",
		"{\"created_at\": 1.0, \"expires_at\": 2.0, "
		    "\"id\": \"sb_0000000000000001\", \"spec\": []}",
		"{\"created_at\": 1.0, \"expires_at\": 2.0, "
		    "\"id\": \"sb_0000000000000001\"}",
		"{\"created_at\": 1.0, \"id\": \"sb_0000000000000001\", "
		    "\"spec\": {\"cpus\": 1.0, \"env\": {}, \"image\": \"a\", "
		    "\"memory_mb\": 16, \"network\": false, "
		    "\"pids_limit\": 8, \"read_only_rootfs\": true}}",
		REC("sb_0000000000000001", ", \"env\": []"),
		REC("sb_0000000000000001", ", \"memory_mb\": 1.5"),
		REC("sb_0000000000000001", ", \"cpus\": 1e400"),
		REC("sb_0000000000000001", ", \"cpus\": true"),
		REC("sb_0000000000000001", "") ",",
		REC("bad", ""),
		"{\"created_at\": 1.0, \"expires_at\": 2.0, "
		    "\"id\": \"sb_0000000000000001\", "
		    "\"source_snapshot_id\": 5, \"spec\": {\"cpus\": 1.0, "
		    "\"env\": {\"K\": \"v\"}, \"image\": \"a\", "
		    "\"memory_mb\": 16, \"network\": false, "
		    "\"pids_limit\": 8, \"read_only_rootfs\": true}}",
		/* Everything right but a missing key in spec. */
		"{\"created_at\": 1.0, \"expires_at\": 2.0, "
		    "\"id\": \"sb_0000000000000001\", "
		    "\"spec\": {\"cpus\": 1.0, \"env\": {\"K\": \"v\"}, "
		    "\"image\": \"a\", \"memory_mb\": 16, \"network\": false, "
		    "\"pids_limit\": 8}}",
	};
	struct sandbox_record	 r, zero;
	size_t			 i;

	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 0xa5, sizeof(r));
		if (store_sandbox_from_json(bad[i], &r) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(errno, EINVAL);
		/* Nothing left allocated, nothing half-filled. */
		assert_memory_equal(&r, &zero, sizeof(r));
	}
	assert_int_equal(store_sandbox_from_json(REC("sb_0000000000000001",
	    ""), &r), 0);
	sandbox_record_free(&r);
}

static void
test_to_json_invalid(void **state)
{
	struct sandbox_record	 r, back;
	char			*text;

	record_init(&r, ID_A);
	r.created_at = INFINITY;
	errno = 0;
	assert_null(store_sandbox_to_json(&r));
	assert_int_equal(errno, EINVAL);
	r.created_at = 1.0;
	r.spec.cpus = NAN;
	assert_null(store_sandbox_to_json(&r));
	r.spec.cpus = 1.0;
	free(r.spec.image);
	r.spec.image = NULL;
	assert_null(store_sandbox_to_json(&r));
	assert_non_null(r.spec.image = strdup("x"));

	/* A repeated env key is written once, the last value winning. */
	assert_int_equal(env_list_add(&r.spec.env, "K", "first"), 0);
	assert_int_equal(env_list_add(&r.spec.env, "A", "a"), 0);
	assert_int_equal(env_list_add(&r.spec.env, "K", "last"), 0);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_non_null(strstr(text, "\"env\": {\n      \"A\": \"a\",\n"
	    "      \"K\": \"last\"\n    },"));
	assert_int_equal(store_sandbox_from_json(text, &back), 0);
	assert_int_equal(back.spec.env.count, 2);
	free(text);
	sandbox_record_free(&back);

	/* Bytes that are not UTF-8 come out as Python's surrogateescape. */
	assert_int_equal(env_list_add(&r.spec.env, "B", "\xff\xc3("), 0);
	assert_non_null(text = store_sandbox_to_json(&r));
	assert_non_null(strstr(text, "\"B\": \"\\udcff\\udcc3(\""));
	free(text);
	sandbox_record_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_text),
		cmocka_unit_test(test_labels_text),
		cmocka_unit_test(test_egress_text),
		cmocka_unit_test(test_random_roundtrip),
		cmocka_unit_test_setup_teardown(test_write_and_load, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_overwrite_and_remove,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_records, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_files, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_oversized_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_oversized_record, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_atomic_failures, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_load_directory, setup,
		    teardown),
		cmocka_unit_test(test_from_json_invalid),
		cmocka_unit_test(test_to_json_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
