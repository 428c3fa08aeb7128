/*
 * dockerd-proxy's cache of the containers archive calls found ours
 * (dockerd-proxy/container_cache.c): found, forgotten, replaced, bounded,
 * an answer asked before a forget, and what it refuses to keep; and the
 * 404 it tells a gone container by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

/* An inspect asked just now, nothing forgotten since. */
#define NOW	container_cache_epoch()

/* A 64-hex container id whose digits say n. */
static const char *
cid(unsigned int n)
{
	static char	 buf[DOCKER_ID_LEN + 1];

	snprintf(buf, sizeof(buf), "%064x", n);
	return buf;
}

static const char *
sid(unsigned int n)
{
	static char	 buf[SANDBOX_ID_LEN + 1];

	snprintf(buf, sizeof(buf), "sb_%016x", n);
	return buf;
}

static void
test_found_and_forgotten(void **state)
{
	char	 id[SANDBOX_ID_LEN + 1];

	(void)state;
	strcpy(id, sid(1));
	assert_null(container_cache_get(id));
	container_cache_put(id, cid(1), NOW);
	assert_string_equal(container_cache_get(id), cid(1));
	/* The same sandbox's new container replaces the old one's id. */
	container_cache_put(id, cid(2), NOW);
	assert_string_equal(container_cache_get(id), cid(2));
	container_cache_forget(id);
	assert_null(container_cache_get(id));
	container_cache_forget(id);
	assert_null(container_cache_get(sid(2)));
}

/* More sandboxes than slots: the oldest go first, the newest stay. */
static void
test_bounded(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	unsigned int	 i, kept = 0;

	(void)state;
	for (i = 100; i < 300; i++) {
		strcpy(id, sid(i));
		container_cache_put(id, cid(i), NOW);
	}
	for (i = 100; i < 300; i++) {
		strcpy(id, sid(i));
		if (container_cache_get(id) != NULL) {
			assert_string_equal(container_cache_get(id), cid(i));
			kept++;
		}
	}
	assert_int_equal(kept, 64);
	strcpy(id, sid(299));
	assert_non_null(container_cache_get(id));
	strcpy(id, sid(100));
	assert_null(container_cache_get(id));
}

/*
 * An inspect asked before a forget (a destroy's start or end, a
 * create's start, Docker's destroy event) may answer with the container
 * being removed: its answer is not kept, whichever sandbox was
 * forgotten; one asked after is.
 */
static void
test_asked_before_a_forget(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint64_t	 asked;

	(void)state;
	strcpy(id, sid(7));
	asked = container_cache_epoch();
	container_cache_forget(id);
	container_cache_put(id, cid(7), asked);
	assert_null(container_cache_get(id));
	asked = container_cache_epoch();
	container_cache_forget(sid(8));
	container_cache_put(id, cid(7), asked);
	assert_null(container_cache_get(id));
	asked = container_cache_epoch();
	container_cache_put(id, cid(9), asked);
	assert_string_equal(container_cache_get(id), cid(9));
	/* A forget after the answer was kept removes it, as before. */
	container_cache_forget(id);
	assert_null(container_cache_get(id));
}

/* What is not a sandbox id or a whole container id is not kept. */
static void
test_refuses_odd_ids(void **state)
{
	char	 longer[DOCKER_ID_LEN + 2];

	(void)state;
	container_cache_put("sb_0000000000000abc", "abc", NOW);
	assert_null(container_cache_get("sb_0000000000000abc"));
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	container_cache_put("sb_0000000000000abd", longer, NOW);
	assert_null(container_cache_get("sb_0000000000000abd"));
	container_cache_put("sb_0000000000000abcdef", cid(5), NOW);
	assert_null(container_cache_get("sb_0000000000000abcdef"));
}

static void
test_gone_message(void **state)
{
	(void)state;
	assert_true(container_gone_message("No such container: "
	    "0123456789abcdef"));
	assert_false(container_gone_message("Could not find the file "
	    "/workspace/x in container agent-sandbox-sb_1"));
	assert_false(container_gone_message(""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_and_forgotten),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_asked_before_a_forget),
		cmocka_unit_test(test_refuses_odd_ids),
		cmocka_unit_test(test_gone_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
