/*
 * Tests for dockerd-proxy/docker_names.c: what may reach a Docker path.
 * Tables for instance and Docker ids, image references and their
 * repo/tag split, Docker names, and percent-encoding of every slot
 * (sandbox ids are test_ids.c's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "docker_http.h"
#include "proxy.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static void
test_other_ids(void **state)
{
	char	 id[DOCKER_ID_LEN + 2];

	assert_true(valid_instance_id("0123456789abcdef"));
	assert_true(valid_instance_id("a"));
	assert_false(valid_instance_id(""));
	assert_false(valid_instance_id("ABC"));
	assert_false(valid_instance_id("a=b"));
	assert_false(valid_instance_id(NULL));
	memset(id, 'a', DOCKER_ID_LEN);
	id[DOCKER_ID_LEN] = '\0';
	assert_true(valid_docker_id(id));
	id[3] = 'A';
	assert_false(valid_docker_id(id));
	id[3] = 'a';
	id[DOCKER_ID_LEN] = 'a';
	id[DOCKER_ID_LEN + 1] = '\0';
	assert_false(valid_docker_id(id));
	assert_false(valid_docker_id("abc"));
	assert_false(valid_docker_id(NULL));
}

static void
test_docker_names(void **state)
{
	static const struct {
		const char	*name;
		int		 ok;
	} cases[] = {
		{ "agent-sandbox-net", 1 },
		{ "runsc", 1 },
		{ "Net_1.2", 1 },
		{ "a", 1 },
		{ "", 0 },
		{ "-net", 0 },
		{ ".net", 0 },
		{ "container:abc", 0 },
		{ "a/b", 0 },
		{ "a b", 0 },
		{ "a%2f", 0 },
		{ "n\xc3\xa9t", 0 },
	};
	char	 long_name[200];
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++)
		if (valid_docker_name(cases[i].name) != cases[i].ok)
			fail_msg("valid_docker_name(\"%s\")", cases[i].name);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_false(valid_docker_name(long_name));
	long_name[128] = '\0';
	assert_true(valid_docker_name(long_name));
}

#define DIGEST	"sha256:" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void
test_image_refs(void **state)
{
	static const struct {
		const char	*ref;
		int		 ok;
	} cases[] = {
		{ "python", 1 },
		{ "python:3.12-slim", 1 },
		{ "library/python:3.12", 1 },
		{ "agent-sandbox/busybox:test", 1 },
		{ "docker.io/library/python:latest", 1 },
		{ "registry:5000/x", 1 },
		{ "registry:5000/x:tag", 1 },
		{ "localhost/a/b/c:v1", 1 },
		{ "my-registry.example.com:443/team/img_name__x:1.0", 1 },
		{ "a.b-c__d---e", 1 },
		{ "python@" DIGEST, 1 },
		{ "python:3@" DIGEST, 1 },
		{ "registry:5000/x@" DIGEST, 1 },
		{ "", 0 },
		{ "Python", 0 },		/* uppercase repository */
		{ "python:", 0 },
		{ ":tag", 0 },
		{ "/python", 0 },
		{ "python/", 0 },
		{ "a//b", 0 },
		{ "../x", 0 },
		{ "x/../y", 0 },
		{ "x/./y", 0 },
		{ "..", 0 },
		{ "%2e%2e/containers/json", 0 },
		{ "python:3 12", 0 },
		{ "python:-x", 0 },
		{ "python:.x", 0 },
		{ "a_", 0 },
		{ "a___b", 0 },
		{ "-a", 0 },
		{ "a:b:c", 0 },
		{ "registry:/x", 0 },
		{ "registry:99999999/x", 0 },
		{ "-reg.com/x", 0 },
		{ "reg-.com/x", 0 },
		{ "python@sha256:0123", 0 },	/* digest too short */
		{ "python@" DIGEST "@" DIGEST, 0 },
		{ "python@", 0 },
		{ "python@sha256", 0 },
		{ "python?x=1", 0 },
		{ "python#x", 0 },
		{ "python\n", 0 },
	};
	char	 long_ref[600];
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++)
		if (valid_image_ref(cases[i].ref) != cases[i].ok)
			fail_msg("valid_image_ref(\"%s\") != %d", cases[i].ref,
			    cases[i].ok);
	assert_false(valid_image_ref(NULL));
	/* A tag is at most 128 characters, a name at most 255. */
	memset(long_ref, 'a', sizeof(long_ref));
	memcpy(long_ref, "x:", 2);
	long_ref[2 + 128] = '\0';
	assert_true(valid_image_ref(long_ref));
	long_ref[2 + 128] = 'a';
	long_ref[2 + 129] = '\0';
	assert_false(valid_image_ref(long_ref));
	memset(long_ref, 'a', sizeof(long_ref));
	long_ref[255] = '\0';
	assert_true(valid_image_ref(long_ref));
	long_ref[255] = 'a';
	long_ref[256] = '\0';
	assert_false(valid_image_ref(long_ref));
}

static void
test_image_split(void **state)
{
	static const struct {
		const char	*ref;
		const char	*repo;
		const char	*tag;
	} cases[] = {
		{ "python", "python", "latest" },
		{ "python:3.12-slim", "python", "3.12-slim" },
		{ "library/python:3", "library/python", "3" },
		{ "registry:5000/x", "registry:5000/x", "latest" },
		{ "registry:5000/x:v2", "registry:5000/x", "v2" },
		{ "registry:5000/a/b", "registry:5000/a/b", "latest" },
		{ "localhost:5000/a/b:c", "localhost:5000/a/b", "c" },
		/* By digest: the whole reference, no tag (API.md §16 #13). */
		{ "python@" DIGEST, "python@" DIGEST, "" },
		{ "python:3@" DIGEST, "python:3@" DIGEST, "" },
		{ "registry:5000/x@" DIGEST, "registry:5000/x@" DIGEST, "" },
	};
	char	 repo[1024], tag[256];
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++) {
		assert_true(valid_image_ref(cases[i].ref));
		assert_int_equal(image_ref_split(cases[i].ref, repo,
		    sizeof(repo), tag, sizeof(tag)), 0);
		assert_string_equal(repo, cases[i].repo);
		assert_string_equal(tag, cases[i].tag);
	}
	assert_int_equal(image_ref_split("python:3", repo, 6, tag,
	    sizeof(tag)), -1);
	assert_int_equal(image_ref_split("python:3", repo, 7, tag,
	    sizeof(tag)), 0);
	assert_int_equal(image_ref_split("python", repo, sizeof(repo), tag,
	    6), -1);
}

static void
test_object_names(void **state)
{
	char	 buf[DOCKER_NAME_MAX];

	sandbox_container_name("sb_0123456789abcdef", buf, sizeof(buf));
	assert_string_equal(buf, "agent-sandbox-sb_0123456789abcdef");
	sandbox_prep_name("sb_0123456789abcdef", buf, sizeof(buf));
	assert_string_equal(buf, "agent-sandbox-sb_0123456789abcdef-init");
	sandbox_volume_name("sb_0123456789abcdef", buf, sizeof(buf));
	assert_string_equal(buf,
	    "agent-sandbox-sb_0123456789abcdef-workspace");
}

static void
test_percent_encode(void **state)
{
	char	 buf[64];

	assert_int_equal(percent_encode(buf, sizeof(buf), "aZ09-._~"), 8);
	assert_string_equal(buf, "aZ09-._~");
	percent_encode(buf, sizeof(buf), "a/b:c@d ?&=%#+");
	assert_string_equal(buf, "a%2Fb%3Ac%40d%20%3F%26%3D%25%23%2B");
	percent_encode(buf, sizeof(buf), "..");
	assert_string_equal(buf, "..");
	percent_encode(buf, sizeof(buf), "\xc3\xa9\x01\x7f");
	assert_string_equal(buf, "%C3%A9%01%7F");
	/* Too small: says how much it needs, writes nothing half-encoded. */
	assert_int_equal(percent_encode(buf, 4, "a/b"), 5);
	assert_string_equal(buf, "a");
	assert_int_equal(percent_encode(buf, 5, "a/b"), 5);
	assert_string_equal(buf, "a%2F");
	assert_int_equal(percent_encode(buf, 6, "a/b"), 5);
	assert_string_equal(buf, "a%2Fb");
	assert_int_equal(percent_encode(buf, 0, "abc"), 3);
}

static void
test_docker_path(void **state)
{
	char	 buf[128];

	assert_int_equal(docker_path(buf, sizeof(buf),
	    "/v1.41/images/%s/json", "registry:5000/x:y"), 0);
	assert_string_equal(buf, "/v1.41/images/registry%3A5000%2Fx%3Ay/json");
	assert_int_equal(docker_path(buf, sizeof(buf),
	    "/c/%s?path=%s&x=%s", "../..", "/", "a b"), 0);
	assert_string_equal(buf, "/c/..%2F..?path=%2F&x=a%20b");
	assert_int_equal(docker_path(buf, sizeof(buf), "/plain"), 0);
	assert_string_equal(buf, "/plain");
	/* Only %s slots exist. */
	assert_int_equal(docker_path(buf, sizeof(buf), "/%d", 1), -1);
	assert_int_equal(docker_path(buf, sizeof(buf), "/100%"), -1);
	/* Every boundary of a too-small buffer fails cleanly. */
	assert_int_equal(docker_path(buf, 10, "/abc/%s", "defgh"), -1);
	assert_int_equal(docker_path(buf, 10, "/abc/%s", "def"), 0);
	assert_string_equal(buf, "/abc/def");
	assert_int_equal(docker_path(buf, 9, "/abc/%s", "def"), 0);
	assert_int_equal(docker_path(buf, 8, "/abc/%s", "def"), -1);
	assert_int_equal(docker_path(buf, 8, "/abc/%s", "/"), -1);
	assert_int_equal(docker_path(buf, 4, "/abcdef"), -1);
	assert_int_equal(docker_path(buf, 0, "/"), -1);
}

/* Undo %XX; a byte left as it is must be one of RFC 3986's unreserved. */
static size_t
percent_decode(const char *in, unsigned char *out)
{
	unsigned int	 v;
	size_t		 n = 0;

	while (*in != '\0') {
		if (*in == '%') {
			assert_int_equal(sscanf(in + 1, "%2X", &v), 1);
			out[n++] = (unsigned char)v;
			in += 3;
			continue;
		}
		assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl"
		    "mnopqrstuvwxyz0123456789-._~", *in));
		out[n++] = (unsigned char)*in++;
	}
	return n;
}

/*
 * An archive path of MSG_MAX_PATH bytes, every byte but NUL among them,
 * fits a request line in the worst case and comes back byte for byte.
 */
static void
test_archive_path_any_bytes(void **state)
{
	char		*path, *url;
	unsigned char	*back;
	const char	*q;
	size_t		 i;

	assert_non_null(path = malloc(MSG_MAX_PATH + 1));
	assert_non_null(url = malloc(DOCKER_HTTP_MAX_PATH + 1));
	assert_non_null(back = malloc(MSG_MAX_PATH + 1));
	path[0] = '/';
	for (i = 1; i < MSG_MAX_PATH; i++)
		path[i] = (char)(i % 255 + 1);
	path[MSG_MAX_PATH] = '\0';
	assert_int_equal(docker_path(url, DOCKER_HTTP_MAX_PATH + 1,
	    DOCKER_API "/containers/%s/archive?path=%s&noOverwriteDirNonDir="
	    "true", "0123456789abcdef0123456789abcdef0123456789abcdef012345"
	    "6789abcdef", path), 0);
	assert_non_null(q = strstr(url, "?path="));
	*strchr(q, '&') = '\0';
	assert_int_equal(percent_decode(q + 6, back), MSG_MAX_PATH);
	assert_memory_equal(back, path, MSG_MAX_PATH);
	/* Nothing a request line may not hold. */
	for (i = 0; url[i] != '\0'; i++)
		assert_true(url[i] > ' ' && url[i] < 0x7f);
	free(path);
	free(url);
	free(back);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_ids),
		cmocka_unit_test(test_docker_names),
		cmocka_unit_test(test_image_refs),
		cmocka_unit_test(test_image_split),
		cmocka_unit_test(test_object_names),
		cmocka_unit_test(test_percent_encode),
		cmocka_unit_test(test_docker_path),
		cmocka_unit_test(test_archive_path_any_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
