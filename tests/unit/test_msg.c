/*
 * Payload writer and reader: round trips of every field type, and every
 * way a peer's payload can be malformed.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msg.h"
#include "sandbox_msg.h"

/* Wrap a writer's bytes as a received message. */
static void
as_imsg(struct imsg *imsg, struct msgw *w)
{
	memset(imsg, 0, sizeof(*imsg));
	imsg->fd = -1;
	imsg->data = w->buf;
	imsg->len = w->len;
}

static void
test_roundtrip_all_types(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;
	char		*s, *n;

	msgw_init(&w);
	msgw_u8(&w, 0xfe);
	msgw_u32(&w, 0xdeadbeef);
	msgw_u64(&w, UINT64_C(0x0123456789abcdef));
	msgw_i64(&w, INT64_MIN);
	msgw_double(&w, 1700000000.053406);
	msgw_str(&w, "héllo");
	msgw_str(&w, NULL);
	msgw_str(&w, "");
	assert_false(w.overflow);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u8(&r), 0xfe);
	assert_int_equal(msgr_u32(&r), 0xdeadbeef);
	assert_true(msgr_u64(&r) == UINT64_C(0x0123456789abcdef));
	assert_true(msgr_i64(&r) == INT64_MIN);
	assert_true(msgr_double(&r) == 1700000000.053406);
	s = msgr_str(&r, 64);
	assert_string_equal(s, "héllo");
	assert_null(msgr_str(&r, 64));
	n = msgr_str(&r, 64);
	assert_non_null(n);
	assert_string_equal(n, "");
	assert_int_equal(msgr_end(&r), 0);
	free(s);
	free(n);
}

/* The wire order is fixed (little-endian), whatever the host's order. */
static void
test_wire_layout(void **state)
{
	struct msgw	 w;
	static const unsigned char want[] = { 0x04, 0x03, 0x02, 0x01, 0x02,
	    0x00, 0x00, 0x00, 'o', 'k' };

	msgw_init(&w);
	msgw_u32(&w, 0x01020304);
	msgw_str(&w, "ok");
	assert_int_equal(w.len, sizeof(want));
	assert_memory_equal(w.buf, want, sizeof(want));
}

static void
test_special_doubles(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	msgw_init(&w);
	msgw_double(&w, -0.0);
	msgw_double(&w, INFINITY);
	msgw_double(&w, DBL_MIN);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_true(signbit(msgr_double(&r)));
	assert_true(isinf(msgr_double(&r)));
	assert_true(msgr_double(&r) == DBL_MIN);
	assert_int_equal(msgr_end(&r), 0);
}

static void
test_short_payload(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	msgw_init(&w);
	msgw_u8(&w, 1);
	msgw_u8(&w, 2);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	(void)msgr_u32(&r);
	assert_true(r.error);
	/* Once in error, every later field is zero and the end fails. */
	assert_int_equal(msgr_u8(&r), 0);
	assert_int_equal(msgr_end(&r), -1);
	assert_int_equal(errno, EBADMSG);
}

static void
test_trailing_bytes(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	msgw_init(&w);
	msgw_u32(&w, 5);
	msgw_u8(&w, 0);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), 5);
	assert_false(r.error);
	assert_int_equal(msgr_end(&r), -1);
}

static void
test_string_with_nul_rejected(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	msgw_init(&w);
	msgw_u32(&w, 3);
	msgw_bytes(&w, "a\0b", 3);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_null(msgr_str(&r, 16));
	assert_true(r.error);
	assert_int_equal(msgr_end(&r), -1);
}

static void
test_string_length_lies(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	/* Claims 100 bytes, carries 2. */
	msgw_init(&w);
	msgw_u32(&w, 100);
	msgw_bytes(&w, "ab", 2);
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_null(msgr_str(&r, 1000));
	assert_true(r.error);
}

static void
test_string_over_maxlen(void **state)
{
	struct msgw	 w;
	struct msgr	 r;
	struct imsg	 imsg;

	msgw_init(&w);
	msgw_str(&w, "0123456789");
	as_imsg(&imsg, &w);
	msgr_init(&r, &imsg);
	assert_null(msgr_str(&r, 9));
	assert_true(r.error);
	msgr_init(&r, &imsg);
	free(msgr_str(&r, 10));
	assert_int_equal(msgr_end(&r), 0);
}

static void
test_writer_overflow(void **state)
{
	struct msgw	*w = malloc(sizeof(*w));
	char		*big = malloc(MSG_MAX_STRING + 2);
	int		 i;

	assert_non_null(w);
	assert_non_null(big);
	memset(big, 'k', MSG_MAX_STRING + 1);
	big[MSG_MAX_STRING + 1] = '\0';
	msgw_init(w);
	msgw_str(w, big);	/* one byte over the string limit */
	assert_true(w->overflow);
	msgw_init(w);
	big[MSG_MAX_STRING] = '\0';
	for (i = 0; i < 3 && !w->overflow; i++)
		msgw_str(w, big);
	assert_true(w->overflow);
	assert_true(w->len <= IMSG_MAX_PAYLOAD);
	msgw_clear(w);
	assert_int_equal(w->len, 0);
	free(big);
	free(w);
}

static void
test_type_names(void **state)
{
	assert_string_equal(msg_type_name(MSG_APID_CONFIG), "APID_CONFIG");
	assert_string_equal(msg_type_name(MSG_HEALTH_REQUEST),
	    "HEALTH_REQUEST");
	assert_string_equal(msg_type_name(MSG_DOCKER_PONG), "DOCKER_PONG");
	assert_string_equal(msg_type_name(MSG_ERROR), "ERROR");
	assert_string_equal(msg_type_name(12345), "UNKNOWN");
}


static void
test_create_request_roundtrip(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct create_request	 in, out;
	char			 lit1[] = "python:3.12-slim";

	memset(&in, 0, sizeof(in));
	in.image = lit1;
	in.has_cpus = 1;
	in.cpus = 0.5;
	in.has_memory_mb = 1;
	in.memory_mb = 256;
	in.read_only_rootfs = 1;
	in.has_timeout_seconds = 1;
	in.timeout_seconds = 60;
	assert_int_equal(env_list_add(&in.env, "MODE", "test"), 0);
	assert_int_equal(env_list_add(&in.env, "EMPTY", ""), 0);
	msgw_init(&w);
	msg_put_create_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_create_request(&imsg, &out), 0);
	assert_string_equal(out.image, "python:3.12-slim");
	assert_true(out.has_cpus && out.cpus == 0.5);
	assert_true(out.has_memory_mb && out.memory_mb == 256);
	assert_false(out.has_pids_limit);
	assert_false(out.network);
	assert_true(out.read_only_rootfs);
	assert_int_equal(out.timeout_seconds, 60);
	assert_int_equal(out.env.count, 2);
	assert_string_equal(out.env.keys[1], "EMPTY");
	assert_string_equal(out.env.values[0], "test");
	assert_null(out.network_policy);
	create_request_free(&out);
	env_list_free(&in.env);
}

/* A policy's text rides whole, up to its bound and not a byte past it. */
static void
test_create_request_policy(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct create_request	 in, out;
	char			 policy[] = "{\"mode\": \"public\"}";
	char			*big;

	memset(&in, 0, sizeof(in));
	in.network_policy = policy;
	msgw_init(&w);
	msg_put_create_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_create_request(&imsg, &out), 0);
	assert_string_equal(out.network_policy, policy);
	assert_false(out.network);
	create_request_free(&out);

	big = malloc(EGRESS_POLICY_TEXT_MAX + 2);
	assert_non_null(big);
	memset(big, 'a', EGRESS_POLICY_TEXT_MAX + 1);
	big[EGRESS_POLICY_TEXT_MAX] = '\0';
	in.network_policy = big;
	msgw_init(&w);
	msg_put_create_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_create_request(&imsg, &out), 0);
	assert_int_equal(strlen(out.network_policy), EGRESS_POLICY_TEXT_MAX);
	create_request_free(&out);
	big[EGRESS_POLICY_TEXT_MAX] = 'a';
	big[EGRESS_POLICY_TEXT_MAX + 1] = '\0';
	msgw_init(&w);
	msg_put_create_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_create_request(&imsg, &out), -1);
	assert_null(out.network_policy);
	free(big);
}

/* Every strict prefix of a valid payload, and any extra byte, is refused. */
static void
test_exec_request_truncations(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct exec_request	 in, out;
	size_t			 len;
	char			 lit2[] = "sb_0123456789abcdef";
	char			 lit3[] = "src";
	char			 lit4[] = "printf";
	char			 lit5[] = "%s|";
	char			 lit6[] = "a b";
	char			*argv[] = { lit4, lit5, lit6, NULL };

	memset(&in, 0, sizeof(in));
	in.sandbox_id = lit2;
	in.argc = 3;
	in.argv = argv;
	in.workdir = lit3;
	in.has_timeout = 1;
	in.timeout_seconds = 1.5;
	msgw_init(&w);
	msg_put_exec_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_exec_request(&imsg, &out), 0);
	assert_int_equal(out.argc, 3);
	assert_string_equal(out.argv[2], "a b");
	assert_null(out.argv[3]);
	assert_string_equal(out.workdir, "src");
	assert_true(out.timeout_seconds == 1.5);
	exec_request_free(&out);
	for (len = 0; len < w.len; len++) {
		imsg.len = len;
		assert_int_equal(msg_get_exec_request(&imsg, &out), -1);
	}
	msgw_u8(&w, 0);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_exec_request(&imsg, &out), -1);
}

/* A shell command is exactly one string; a boolean is 0 or 1. */
static void
test_exec_request_lies(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct exec_request	 in, out;
	char			 lit7[] = "sb_0123456789abcdef";
	char			 lit8[] = "echo hi";
	char			 lit9[] = "extra";
	char			*argv[] = { lit8, lit9, NULL };

	memset(&in, 0, sizeof(in));
	in.sandbox_id = lit7;
	in.shell = 1;
	in.argc = 2;
	in.argv = argv;
	msgw_init(&w);
	msg_put_exec_request(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_exec_request(&imsg, &out), -1);
	in.argc = 1;
	msgw_init(&w);
	msg_put_exec_request(&w, &in);
	w.buf[4 + strlen(in.sandbox_id)] = 2;	/* the shell flag */
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_exec_request(&imsg, &out), -1);
}

static void
test_sandbox_info_roundtrip(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct sandbox_info	 in, out;
	char			 lit10[] = "sb_4f1c2a9e0b7d6c31";
	char			 lit11[] = "alpine:3.20";

	memset(&in, 0, sizeof(in));
	in.id = lit10;
	in.running = 1;
	in.image = lit11;
	in.cpus = 1.0;
	in.memory_mb = 512;
	in.pids_limit = 256;
	in.read_only_rootfs = 1;
	in.created_at = 1700000000.053406;
	in.expires_at = 1700000900.053406;
	msgw_init(&w);
	msg_put_sandbox_info(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_sandbox_info(&imsg, &out), 0);
	assert_string_equal(out.id, in.id);
	assert_true(out.created_at == in.created_at);
	assert_null(out.source_snapshot_id);
	sandbox_info_free(&out);
}

static void
test_docker_exec_needs_argv(void **state)
{
	struct msgw		 w;
	struct imsg		 imsg;
	struct docker_exec	 in, out;
	char			 lit12[] = "sb_0123456789abcdef";
	char			 lit13[] = "/workspace";
	char			*argv[] = { NULL };

	memset(&in, 0, sizeof(in));
	in.id = lit12;
	in.argv = argv;
	in.workdir = lit13;
	in.timeout_seconds = 60;
	msgw_init(&w);
	msg_put_docker_exec(&w, &in);
	as_imsg(&imsg, &w);
	assert_int_equal(msg_get_docker_exec(&imsg, &out), -1);
}

/* Exact names and the NVIDIA_ prefix, case-sensitive as the hooks are. */
static void
test_env_reserved(void **state)
{
	static const struct {
		const char	*key;
		int		 reserved;
	} cases[] = {
		{ "NVIDIA_VISIBLE_DEVICES", 1 },
		{ "NVIDIA_DRIVER_CAPABILITIES", 1 },
		{ "NVIDIA_REQUIRE_CUDA", 1 },
		{ "NVIDIA_", 1 },
		{ "AMD_VISIBLE_DEVICES", 1 },
		{ "HABANA_VISIBLE_DEVICES", 1 },
		{ "ASCEND_VISIBLE_DEVICES", 1 },
		{ "nvidia_visible_devices", 0 },
		{ "NVIDIA", 0 },
		{ "CUDA_VISIBLE_DEVICES", 0 },
		{ "AMD_VISIBLE_DEVICES_X", 0 },
		{ "XNVIDIA_VISIBLE_DEVICES", 0 },
		{ "PATH", 0 },
	};
	struct env_list	 env;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&env, 0, sizeof(env));
		assert_int_equal(env_list_add(&env, "OK", "1"), 0);
		assert_int_equal(env_list_add(&env, cases[i].key, "1"), 0);
		if (cases[i].reserved)
			assert_string_equal(env_list_reserved_key(&env),
			    cases[i].key);
		else if (env_list_reserved_key(&env) != NULL)
			fail_msg("%s is not reserved", cases[i].key);
		env_list_free(&env);
	}
	memset(&env, 0, sizeof(env));
	assert_null(env_list_reserved_key(&env));
}

static void
test_env_bound(void **state)
{
	struct env_list	 env;
	int		 i;

	memset(&env, 0, sizeof(env));
	for (i = 0; i < MSG_MAX_ENV; i++)
		assert_int_equal(env_list_add(&env, "K", "V"), 0);
	assert_int_equal(env_list_add(&env, "K", "V"), -1);
	assert_int_equal(errno, E2BIG);
	env_list_free(&env);
}

static void
test_single_string(void **state)
{
	struct msgw	 w;
	struct imsg	 imsg;
	char		*s;

	msgw_init(&w);
	msg_put_string(&w, "sb_0123456789abcdef");
	as_imsg(&imsg, &w);
	s = msg_get_string(&imsg, MSG_MAX_ID);
	assert_string_equal(s, "sb_0123456789abcdef");
	free(s);
	assert_null(msg_get_string(&imsg, 5));
	msgw_u8(&w, 0);
	as_imsg(&imsg, &w);
	assert_null(msg_get_string(&imsg, MSG_MAX_ID));
}

/* A full disk or quota is the client's 507; anything else is the caller's. */
static void
test_storage_error(void **state)
{
	assert_int_equal(storage_error(ENOSPC, ERR_INTERNAL),
	    ERR_INSUFFICIENT_STORAGE);
	assert_int_equal(storage_error(EDQUOT, ERR_BACKEND),
	    ERR_INSUFFICIENT_STORAGE);
	assert_int_equal(storage_error(EIO, ERR_INTERNAL), ERR_INTERNAL);
	assert_int_equal(storage_error(EPIPE, ERR_BACKEND), ERR_BACKEND);
	assert_int_equal(storage_error(0, ERR_INTERNAL), ERR_INTERNAL);
	assert_int_equal(ERR_KIND_MAX, ERR_QUOTA_EXCEEDED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_error),
		cmocka_unit_test(test_roundtrip_all_types),
		cmocka_unit_test(test_wire_layout),
		cmocka_unit_test(test_special_doubles),
		cmocka_unit_test(test_short_payload),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_string_with_nul_rejected),
		cmocka_unit_test(test_string_length_lies),
		cmocka_unit_test(test_string_over_maxlen),
		cmocka_unit_test(test_writer_overflow),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_create_request_roundtrip),
		cmocka_unit_test(test_create_request_policy),
		cmocka_unit_test(test_exec_request_truncations),
		cmocka_unit_test(test_exec_request_lies),
		cmocka_unit_test(test_sandbox_info_roundtrip),
		cmocka_unit_test(test_docker_exec_needs_argv),
		cmocka_unit_test(test_env_reserved),
		cmocka_unit_test(test_env_bound),
		cmocka_unit_test(test_single_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
