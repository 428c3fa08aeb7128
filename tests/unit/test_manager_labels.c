/*
 * Labels and stats in managerd, the test playing apid and dockerd-proxy
 * (manager_fixture.c): a create's labels in its record, the list's
 * filter, the PATCH under the sandbox's lock (behind a TTL reset, and
 * behind a destroy: 404), its bound on the result with nothing changed,
 * and the stats relayed; and the lies of a peer that are fatal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "manager_fixture.h"
#include "stats_msg.h"

/* A running sandbox with the labels kv (key, value, ..., NULL). */
static void
create_labelled(char *id, size_t len, ...)
{
	struct create_request	 c;
	struct sandbox_info	 info;
	const char		*k, *v;
	uint32_t		 req, call;
	va_list			 ap;

	create_request_init(&c);
	va_start(ap, len);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		assert_int_equal(labels_set(&c.labels, k, v), 0);
	}
	va_end(ap);
	req = send_create(&c);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	strlcpy(id, info.id, len);
	sandbox_info_free(&info);
}

static uint32_t
send_patch(const char *id, const char *set_k, const char *set_v,
    const char *remove)
{
	struct label_patch	 p;
	struct msgw		 w;
	char			*rm[1];
	uint32_t		 req;

	memset(&p, 0, sizeof(p));
	p.id = strdup(id);
	if (set_k != NULL)
		assert_int_equal(labels_set(&p.set, set_k, set_v), 0);
	if (remove != NULL) {
		rm[0] = (char *)(uintptr_t)remove;
		p.remove = rm;
		p.nremove = 1;
	}
	msgw_init(&w);
	msg_put_label_patch(&w, &p);
	p.remove = NULL;
	p.nremove = 0;
	label_patch_free(&p);
	req = from_apid(MSG_SANDBOX_PATCH, -1, &w);
	return req;
}

/* The labels of id's record on disk, as the next start reads them. */
struct found {
	const char		*id;
	struct label_list	 labels;
};

static void
record_labels_cb(struct sandbox_record *rec, void *arg)
{
	struct found	*f = arg;

	if (strcmp(rec->id, f->id) == 0)
		assert_int_equal(labels_copy(&f->labels, &rec->labels), 0);
	sandbox_record_free(rec);
	free(rec);
}

static void
disk_labels(const char *id, struct label_list *out)
{
	struct found	 f;

	memset(&f, 0, sizeof(f));
	f.id = id;
	assert_int_equal(store_sandbox_load_all(env->datadir_fd,
	    record_labels_cb, &f), 0);
	*out = f.labels;
}

static void
test_create_and_patch(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	struct label_list	 l;
	uint32_t		 req, call;

	create_labelled(id, sizeof(id), "team", "ml", "env", "prod", NULL);
	disk_labels(id, &l);
	assert_int_equal(l.count, 2);
	assert_string_equal(labels_get(&l, "team"), "ml");
	labels_free(&l);
	req = send_patch(id, "owner", "me", "env");
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	/* On disk before the answer. */
	disk_labels(id, &l);
	assert_null(labels_get(&l, "env"));
	assert_string_equal(labels_get(&l, "owner"), "me");
	labels_free(&l);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_int_equal(info.labels.count, 2);
	assert_string_equal(labels_get(&info.labels, "team"), "ml");
	assert_string_equal(labels_get(&info.labels, "owner"), "me");
	sandbox_info_free(&info);
}

/* A TTL reset holds the lock until Docker answers: the PATCH waits. */
static void
test_patch_waits_for_the_lock(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_info	 info;
	uint32_t		 treq, tcall, preq, pcall;

	create_ok(100, id, sizeof(id));
	treq = send_timeout(id, 500);
	tcall = expect_proxy_id(MSG_DOCKER_STATE, id);
	preq = send_patch(id, "k", "v", NULL);
	no_proxy_message();
	no_apid_message();
	state_reply(tcall, 1, 1);
	expect_info(treq, &info);
	assert_int_equal(info.labels.count, 0);
	sandbox_info_free(&info);
	pcall = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(pcall, 1, 1);
	expect_info(preq, &info);
	assert_string_equal(labels_get(&info.labels, "k"), "v");
	sandbox_info_free(&info);
}

/* Queued behind a destroy: the sandbox is gone when its turn comes. */
static void
test_patch_behind_a_destroy(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], msg[64];
	uint32_t	 dreq, dcall, preq;

	create_ok(100, id, sizeof(id));
	dreq = send_id(MSG_SANDBOX_DELETE, id);
	dcall = expect_proxy_id(MSG_DOCKER_DESTROY, id);
	preq = send_patch(id, "k", "v", NULL);
	no_apid_message();
	from_proxy(MSG_DOCKER_DONE, dcall, NULL);
	expect_apid(dreq, MSG_OK);
	snprintf(msg, sizeof(msg), "sandbox %s not found", id);
	expect_apid_error(preq, ERR_NOT_FOUND, msg);
	no_proxy_message();
	assert_false(record_exists(id));
}

static void
test_patch_bound_and_unknown(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1], k[8];
	struct create_request	 c;
	struct sandbox_info	 info;
	struct label_list	 l;
	uint32_t		 req, call;
	int			 i;

	create_request_init(&c);
	for (i = 0; i < LABELS_MAX; i++) {
		snprintf(k, sizeof(k), "k%02d", i);
		labels_set(&c.labels, k, "");
	}
	req = send_create(&c);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_int_equal(info.labels.count, LABELS_MAX);
	strlcpy(id, info.id, sizeof(id));
	sandbox_info_free(&info);
	/* A 33rd: refused, nothing changed. */
	req = send_patch(id, "one", "more", NULL);
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "a sandbox has at most 32 labels");
	no_proxy_message();
	disk_labels(id, &l);
	assert_int_equal(l.count, LABELS_MAX);
	assert_null(labels_get(&l, "one"));
	labels_free(&l);
	/* Replacing one while removing another stays within the bound. */
	req = send_patch(id, "k00", "new", "k01");
	call = expect_proxy_id(MSG_DOCKER_STATE, id);
	state_reply(call, 1, 1);
	expect_info(req, &info);
	assert_int_equal(info.labels.count, LABELS_MAX - 1);
	assert_string_equal(labels_get(&info.labels, "k00"), "new");
	sandbox_info_free(&info);
	req = send_patch("sb_0000000000000000", "k", "v", NULL);
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox sb_0000000000000000 not found");
}

static void
test_list_filter(void **state)
{
	char			 a[SANDBOX_ID_LEN + 1], b[SANDBOX_ID_LEN + 1];
	char			 c[SANDBOX_ID_LEN + 1];
	struct label_filter	 f;
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_labelled(a, sizeof(a), "team", "ml", "env", "prod", NULL);
	create_labelled(b, sizeof(b), "team", "ml", NULL);
	create_ok(100, c, sizeof(c));
	memset(&f, 0, sizeof(f));
	label_filter_add(&f, "team", "ml");
	label_filter_add(&f, "env", NULL);
	req = send_sandbox_list(&f);
	label_filter_free(&f);
	call = expect_proxy(MSG_DOCKER_LIST, NULL);
	list_item(call, a, 1, 1);
	list_item(call, b, 1, 1);
	list_item(call, c, 1, 1);
	from_proxy(MSG_DOCKER_LIST_END, call, NULL);
	expect_info(req, &info);
	assert_string_equal(info.id, a);
	sandbox_info_free(&info);
	expect_apid(req, MSG_SANDBOX_LIST_END);
}

static void
test_stats_relayed(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct sandbox_stats	 st;
	struct msgw		 w;
	struct imsg		 m;
	uint32_t		 req, call;

	create_ok(100, id, sizeof(id));
	req = send_id(MSG_SANDBOX_STATS, id);
	call = expect_proxy_id(MSG_DOCKER_STATS, id);
	memset(&st, 0, sizeof(st));
	st.running = 1;
	st.has_workspace = 1;
	st.workspace_bytes = 4096;
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &st);
	from_proxy(MSG_DOCKER_STATS_RESULT, call, &w);
	assert_int_equal(to_apid(&m), 1);
	assert_int_equal(m.hdr.type, MSG_SANDBOX_STATS_RESULT);
	assert_int_equal(m.hdr.peerid, req);
	assert_int_equal(msg_get_sandbox_stats(&m, &st), 0);
	assert_int_equal(st.workspace_bytes, 4096);
	imsg_free(&m);
	req = send_id(MSG_SANDBOX_STATS, "sb_0000000000000000");
	expect_apid_error(req, ERR_NOT_FOUND,
	    "sandbox sb_0000000000000000 not found");
	no_proxy_message();
}

static void
lie_list_empty(void)
{
	from_apid(MSG_SANDBOX_LIST, -1, NULL);
}

static void
lie_patch_unsorted(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, "sb_0000000000000000");
	msgw_u8(&w, 0);
	msgw_u32(&w, 0);
	msgw_u32(&w, 2);
	msgw_str(&w, "b");
	msgw_str(&w, "a");
	from_apid(MSG_SANDBOX_PATCH, -1, &w);
}

static char	 lie_id[SANDBOX_ID_LEN + 1];

static void
lie_stats_of_a_stopped_sandbox(void)
{
	struct sandbox_stats	 st;
	struct msgw		 w;
	uint32_t		 call;

	send_id(MSG_SANDBOX_STATS, lie_id);
	call = expect_proxy_id(MSG_DOCKER_STATS, lie_id);
	memset(&st, 0, sizeof(st));
	st.has_pids = 1;	/* figures, and not running */
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &st);
	from_proxy(MSG_DOCKER_STATS_RESULT, call, &w);
}

static void
test_lies_are_fatal(void **state)
{
	expect_fatal(lie_list_empty,
	    "bad SANDBOX_LIST message from apid: malformed label filter");
	expect_fatal(lie_patch_unsorted,
	    "bad SANDBOX_PATCH message from apid: malformed label patch");
	create_ok(100, lie_id, sizeof(lie_id));
	expect_fatal(lie_stats_of_a_stopped_sandbox,
	    "bad DOCKER_STATS_RESULT message from dockerd-proxy: malformed "
	    "stats");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_create_and_patch),
		T(test_patch_waits_for_the_lock),
		T(test_patch_behind_a_destroy),
		T(test_patch_bound_and_unknown),
		T(test_list_filter),
		T(test_stats_relayed),
		T(test_lies_are_fatal),
#undef T
	};

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "test_manager_labels");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
