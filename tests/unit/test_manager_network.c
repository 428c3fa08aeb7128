/*
 * managerd's egress wiring (network.c, egress.c, child_call.c) with the
 * test playing apid, dockerd-proxy, the netns-helper and the egress
 * proxy: a policy sandbox's four calls in order, what a failure among
 * them leaves (nothing), GET and PUT of the policy, the log relayed, the
 * proxy variables in every exec, attaching again after the egress
 * proxy's restart, and the lies of the two children, each fatal.
 */
#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager_fixture.h"

#define ALLOWLIST	"{\"mode\": \"allowlist\", \"allow\": [\"pypi.org\"]}"

/* NETNS_LISTEN asked for FIXTURE_PID's container: a socket back. */
static void
netns_answers(void)
{
	struct imsg	 imsg;
	struct msgr	 r;
	char		*container;
	int		 sv[2];
	uint32_t	 call;

	call = expect_child(CHILD_NETNS, MSG_NETNS_LISTEN, &imsg);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), FIXTURE_PID);
	container = msgr_str(&r, 64);
	assert_int_equal(msgr_u32(&r), EGRESS_PORT);
	assert_int_equal(msgr_end(&r), 0);
	assert_string_equal(container, FIXTURE_CONTAINER);
	free(container);
	imsg_free(&imsg);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	from_child(CHILD_NETNS, MSG_NETNS_SOCKET, call, sv[0], NULL);
}

/* EGRESS_POLICY for id: its policy decoded into p (may be NULL). */
static void
egress_policy_answered(const char *id, struct egress_policy *p)
{
	struct egress_policy	 got;
	struct imsg		 imsg;
	struct msgr		 r;
	char			*sid;
	uint32_t		 call;

	call = expect_child(CHILD_EGRESS, MSG_EGRESS_POLICY, &imsg);
	msgr_init(&r, &imsg);
	sid = msgr_str(&r, SANDBOX_ID_LEN);
	assert_int_equal(msg_get_egress_policy(&r, &got), 0);
	assert_int_equal(msgr_end(&r), 0);
	if (id != NULL)
		assert_string_equal(sid, id);
	free(sid);
	imsg_free(&imsg);
	if (p != NULL)
		*p = got;
	else
		egress_policy_free(&got);
	from_child(CHILD_EGRESS, MSG_EGRESS_DONE, call, -1, NULL);
}

static void
egress_listen_answered(void)
{
	struct imsg	 imsg;
	uint32_t	 call;

	call = expect_child(CHILD_EGRESS, MSG_EGRESS_LISTEN, &imsg);
	assert_true(imsg.fd != -1);
	imsg_free(&imsg);
	from_child(CHILD_EGRESS, MSG_EGRESS_DONE, call, -1, NULL);
}

/* The four calls of an attach, answered; p: the policy sent. */
static void
attach_answered(const char *id, struct egress_policy *p)
{
	uint32_t	 call;

	call = expect_proxy(MSG_DOCKER_STATE, NULL);
	state_reply(call, 1, 1);
	netns_answers();
	egress_policy_answered(id, p);
	egress_listen_answered();
}

static uint32_t
send_policy_create(const char *text)
{
	struct create_request	 c;

	create_request_init(&c);
	c.network_policy = strdup(text);
	return send_create(&c);
}

/* A created policy sandbox; its id in id. */
static void
policy_sandbox(const char *text, char *id, size_t len)
{
	struct sandbox_info	 info;
	struct egress_policy	 p;
	uint32_t		 req, call;

	req = send_policy_create(text);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	/* Not recorded, not answered, before its way out exists. */
	no_apid_message();
	attach_answered(NULL, &p);
	egress_policy_free(&p);
	expect_info(req, &info);
	assert_true(info.network);
	strlcpy(id, info.id, len);
	assert_true(record_exists(id));
	sandbox_info_free(&info);
}

/* An error for req whose text begins with want. */
static void
expect_error_prefix(uint32_t req, enum error_kind kind, const char *want)
{
	struct imsg	 imsg;
	struct msgr	 r;
	char		*text;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_ERROR)
		fail_msg("apid got %s", msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	msgr_init(&r, &imsg);
	assert_int_equal(msgr_u32(&r), kind);
	text = msgr_str(&r, 8192);
	assert_int_equal(msgr_end(&r), 0);
	if (strncmp(text, want, strlen(want)) != 0)
		fail_msg("\"%s\" does not begin with \"%s\"", text, want);
	free(text);
	imsg_free(&imsg);
}

/* NETWORK_INFO's text for request req. */
static char *
network_info(uint32_t req)
{
	struct imsg	 imsg;
	char		*text;

	assert_int_equal(to_apid(&imsg), 1);
	if (imsg.hdr.type != MSG_NETWORK_INFO)
		fail_msg("apid got %s", msg_type_name(imsg.hdr.type));
	assert_int_equal(imsg.hdr.peerid, req);
	assert_non_null(text = msg_get_string(&imsg, 8192));
	imsg_free(&imsg);
	return text;
}

static void
expect_network(const char *id, const char *want)
{
	char	*text;

	text = network_info(send_id(MSG_NETWORK_GET, id));
	assert_string_equal(text, want);
	free(text);
}

static uint32_t
send_put(const char *id, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, id);
	msgw_str(&w, text);
	return from_apid(MSG_NETWORK_PUT, -1, &w);
}

static void
test_create_attaches_first(void **state)
{
	char	 id[SANDBOX_ID_LEN + 1];

	policy_sandbox(ALLOWLIST, id, sizeof(id));
	expect_network(id, "{ \"mode\": \"allowlist\", \"allow\": "
	    "[ \"pypi.org\" ] }");
}

static void
test_create_policy_refused(void **state)
{
	uint32_t	 req;

	req = send_policy_create("{\"mode\": \"open\"}");
	expect_apid_error(req, ERR_INVALID_REQUEST, "network: unknown mode "
	    "\"open\": none, public or allowlist");
	req = send_policy_create("[1]");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "network: the policy is not a JSON object");
	req = send_policy_create("{\"mode\": \"none\"} x");
	expect_apid_error(req, ERR_INVALID_REQUEST,
	    "network: the policy is not a JSON object");
	req = send_policy_create("{\"mode\": \"allowlist\", \"allow\": "
	    "[\"10.0.0.1/8\"]}");
	expect_error_prefix(req, ERR_INVALID_REQUEST, "network: ");
	no_proxy_message();
	assert_int_equal(sandbox_count(), 0);
}

/* Under gVisor a policy cannot be enforced: refused, never run without. */
static void
test_runsc_refuses_policies(void **state)
{
	static char	 runsc[] = "AGENT_SANDBOX_DOCKER_RUNTIME=runsc";
	char		*settings[] = { runsc, NULL };
	struct sandbox_info info;
	uint32_t	 req;

	teardown(state);
	setup_env(settings);
	req = send_policy_create("{\"mode\": \"public\"}");
	expect_error_prefix(req, ERR_INVALID_REQUEST, "this server cannot "
	    "enforce egress policies: its runtime is gVisor (runsc)");
	no_proxy_message();
	/* No network at all is no policy to enforce. */
	req = send_policy_create("{\"mode\": \"none\"}");
	from_proxy(MSG_DOCKER_DONE, expect_create(NULL), NULL);
	expect_info(req, &info);
	assert_false(info.network);
	sandbox_info_free(&info);
}

/* A listener that cannot be made undoes the sandbox. */
static void
test_create_listen_fails(void **state)
{
	struct docker_create	 dc;
	struct msgw		 w;
	uint32_t		 req, call;

	req = send_policy_create(ALLOWLIST);
	call = expect_create(&dc);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	call = expect_proxy(MSG_DOCKER_STATE, NULL);
	state_reply(call, 1, 1);
	call = expect_child(CHILD_NETNS, MSG_NETNS_LISTEN, NULL);
	msgw_init(&w);
	msgw_u32(&w, ERR_NOT_FOUND);
	msgw_str(&w, "pid 4242 is no longer the container's");
	from_child(CHILD_NETNS, MSG_ERROR, call, -1, &w);
	/* The egress proxy was told nothing of it: nothing to forget. */
	call = expect_proxy_id(MSG_DOCKER_DESTROY, dc.id);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	/* The helper's 404 is a backend's failure: the sandbox existed. */
	expect_error_prefix(req, ERR_BACKEND, "cannot give sandbox ");
	assert_false(record_exists(dc.id));
	assert_int_equal(sandbox_count(), 0);
	assert_int_equal(quota_pending(), 0);
	docker_create_free(&dc);
}

static void
exec_ends(struct exec_sent *x)
{
	struct exec_exit	 ex = { 0, 0 };
	struct msgw		 w;
	struct imsg		 imsg;

	from_proxy(MSG_DOCKER_EXEC_STARTED, x->call, NULL);
	expect_apid(x->req, MSG_EXEC_STARTED);
	msgw_init(&w);
	msg_put_exec_exit(&w, &ex);
	from_proxy(MSG_DOCKER_EXEC_EXIT, x->call, &w);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_EXEC_EXIT);
	imsg_free(&imsg);
	docker_exec_free(&x->dx);
	close(x->passed);
	assert_pipe_closed(x->rfd);
}

/* Every exec gets the proxy variables; its own win. */
static void
test_exec_gets_proxy_variables(void **state)
{
	char			 id[SANDBOX_ID_LEN + 1];
	struct exec_request	 e;
	struct exec_sent	 x;
	size_t			 i, n = 0;

	policy_sandbox("{\"mode\": \"public\"}", id, sizeof(id));
	exec_request_init(&e, id);
	exec_set_shell(&e, "true");
	assert_int_equal(env_list_add(&e.env, "HTTPS_PROXY", "mine"), 0);
	exec_sent(&e, &x);
	for (i = 0; i < x.dx.env.count; i++) {
		if (strcmp(x.dx.env.keys[i], "HTTPS_PROXY") == 0)
			assert_string_equal(x.dx.env.values[i], "mine");
		else if (strstr(x.dx.env.keys[i], "_PROXY") != NULL ||
		    strstr(x.dx.env.keys[i], "_proxy") != NULL) {
			assert_string_equal(x.dx.env.values[i],
			    "http://127.0.0.1:3128");
			n++;
		}
	}
	assert_int_equal(x.dx.env.count, 6);
	assert_int_equal(n, 5);
	exec_ends(&x);
}

static void
test_get_and_put(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1], *text;
	struct egress_policy	 p;
	uint32_t	 req;

	create_ok(0, id, sizeof(id));
	expect_network(id, "{ \"mode\": \"none\" }");
	/* The first policy of a sandbox without one makes its listener. */
	req = send_put(id, ALLOWLIST);
	attach_answered(id, &p);
	assert_int_equal(p.mode, EGRESS_ALLOWLIST);
	assert_int_equal(p.nrules, 1);
	egress_policy_free(&p);
	text = network_info(req);
	assert_non_null(strstr(text, "pypi.org"));
	free(text);
	/* A second is only sent: the listener is there. */
	req = send_put(id, "{\"mode\": \"none\"}");
	egress_policy_answered(id, &p);
	assert_int_equal(p.mode, EGRESS_NONE);
	egress_policy_free(&p);
	free(network_info(req));
	no_proxy_message();
	req = send_put(id, "{\"mode\": 3}");
	expect_error_prefix(req, ERR_INVALID_REQUEST, "network: ");
	req = send_put("sb_0000000000000000", "{\"mode\": \"none\"}");
	expect_error_prefix(req, ERR_NOT_FOUND, "");
	expect_network(id, "{ \"mode\": \"none\" }");
}

/* The shared bridge's traffic goes through no proxy: no policy. */
static void
test_bridge_cannot_change(void **state)
{
	struct create_request	 c;
	struct sandbox_info	 info;
	uint32_t		 req, call;

	create_request_init(&c);
	c.network = 1;
	req = send_create(&c);
	call = expect_create(NULL);
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	expect_info(req, &info);
	assert_true(info.network);
	expect_network(info.id, "{\"mode\": \"bridge\"}");
	req = send_put(info.id, "{\"mode\": \"public\"}");
	expect_error_prefix(req, ERR_CONFLICT, "sandbox sb_");
	sandbox_info_free(&info);
}

/* "network": true is a public policy where the operator says so. */
static void
test_true_is_public(void **state)
{
	static char	 pub[] = "AGENT_SANDBOX_NETWORK_TRUE=public";
	char		*settings[] = { pub, NULL };
	struct create_request	 c;
	struct docker_create	 dc;
	struct egress_policy	 p;
	struct sandbox_info	 info;
	uint32_t	 req, call;

	teardown(state);
	setup_env(settings);
	create_request_init(&c);
	c.network = 1;
	req = send_create(&c);
	call = expect_create(&dc);
	assert_false(dc.spec.network);	/* no bridge: NetworkMode none */
	from_proxy(MSG_DOCKER_DONE, call, NULL);
	attach_answered(dc.id, &p);
	assert_int_equal(p.mode, EGRESS_PUBLIC);
	egress_policy_free(&p);
	expect_info(req, &info);
	assert_true(info.network);
	sandbox_info_free(&info);
	expect_network(dc.id, "{ \"mode\": \"public\" }");
	docker_create_free(&dc);
}

static void
test_log_relayed(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	struct imsg	 imsg;
	struct msgw	 w;
	uint32_t	 req, call;
	char		*text;

	policy_sandbox(ALLOWLIST, id, sizeof(id));
	req = send_id(MSG_NETWORK_LOG, id);
	call = expect_child(CHILD_EGRESS, MSG_EGRESS_LOG, NULL);
	msgw_init(&w);
	msgw_str(&w, "{\"entries\": [], ");
	from_child(CHILD_EGRESS, MSG_EGRESS_LOG_TEXT, call, -1, &w);
	msgw_init(&w);
	msgw_str(&w, "\"dropped\": 0}");
	from_child(CHILD_EGRESS, MSG_EGRESS_LOG_TEXT, call, -1, &w);
	from_child(CHILD_EGRESS, MSG_EGRESS_LOG_END, call, -1, NULL);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_NETWORK_LOG_TEXT);
	text = msg_get_string(&imsg, 8192);
	assert_string_equal(text, "{\"entries\": [], ");
	free(text);
	imsg_free(&imsg);
	assert_int_equal(to_apid(&imsg), 1);
	assert_int_equal(imsg.hdr.type, MSG_NETWORK_LOG_TEXT);
	imsg_free(&imsg);
	expect_apid(req, MSG_NETWORK_LOG_END);
}

/*
 * An egress proxy that takes a call and never answers: after
 * CALL_ANSWER_SECONDS the call fails with 503, and the child is stopped
 * (its channel closed, the spawner asked to kill it), to be started
 * again when next needed.
 */
static void
test_silent_child(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 req, child, type;
	int		 killed = 0, i;

	policy_sandbox(ALLOWLIST, id, sizeof(id));
	req = send_id(MSG_NETWORK_LOG, id);
	expect_child(CHILD_EGRESS, MSG_EGRESS_LOG, NULL);
	run_deferred();
	no_apid_message();
	assert_true(child_up(CHILD_EGRESS));
	/* The timer is all that is pending: the loop blocks until it fires. */
	for (i = 0; i < 100 && child_up(CHILD_EGRESS); i++)
		assert_true(event_base_loop(env->base, EVLOOP_ONCE) != -1);
	assert_false(child_up(CHILD_EGRESS));
	run_deferred();
	expect_apid_error(req, ERR_UNAVAILABLE, "a helper process of the "
	    "server did not answer; try again");
	/* Asked to kill it (and, with a policy sandbox left, to start it). */
	while (to_spawner(&type, &child)) {
		assert_int_equal(child, CHILD_EGRESS);
		assert_true(type == MSG_SPAWN_KILL || type == MSG_SPAWN_START);
		killed += type == MSG_SPAWN_KILL;
	}
	assert_int_equal(killed, 1);
}

/* The egress proxy's sockets die with it: every sandbox again. */
static void
test_attached_again_after_restart(void **state)
{
	char	 id[SANDBOX_ID_LEN + 1];

	policy_sandbox(ALLOWLIST, id, sizeof(id));
	child_down(CHILD_EGRESS);
	child_up_again(CHILD_EGRESS);
	attach_answered(id, NULL);
	/* A container start with the same pid changes nothing. */
	egress_reattach(sandbox_find(id));
	state_reply(expect_proxy(MSG_DOCKER_STATE, NULL), 1, 1);
	run_deferred();
}

/* A start while an attach runs: attached once more when it ends. */
static void
test_start_during_attach(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	uint32_t	 call;

	policy_sandbox(ALLOWLIST, id, sizeof(id));
	child_down(CHILD_EGRESS);
	child_up_again(CHILD_EGRESS);
	call = expect_proxy(MSG_DOCKER_STATE, NULL);
	egress_reattach(sandbox_find(id));	/* Docker's start event */
	no_proxy_message();
	state_reply(call, 1, 1);
	netns_answers();
	egress_policy_answered(id, NULL);
	egress_listen_answered();
	/* The second attach asks Docker again; that pid is served. */
	state_reply(expect_proxy(MSG_DOCKER_STATE, NULL), 1, 1);
	run_deferred();
}

/* A port the sandbox holds fails the PUT: no 200 for no way out. */
static void
test_put_port_in_use(void **state)
{
	char		 id[SANDBOX_ID_LEN + 1];
	struct msgw	 w;
	uint32_t	 req, call;

	create_ok(0, id, sizeof(id));
	req = send_put(id, "{\"mode\": \"public\"}");
	state_reply(expect_proxy(MSG_DOCKER_STATE, NULL), 1, 1);
	call = expect_child(CHILD_NETNS, MSG_NETNS_LISTEN, NULL);
	msgw_init(&w);
	msgw_u32(&w, ERR_CONFLICT);
	msgw_str(&w, "127.0.0.1:3128 is already in use");
	from_child(CHILD_NETNS, MSG_ERROR, call, -1, &w);
	expect_error_prefix(req, ERR_BACKEND, "the new policy is recorded, "
	    "but the sandbox has no way out yet: cannot make its egress "
	    "listener: 127.0.0.1:3128");
	expect_network(id, "{ \"mode\": \"public\" }");
}

/* --- lies ----------------------------------------------------------------- */

static void
lie_socket_without_fd(void)
{
	char	 id[SANDBOX_ID_LEN + 1];
	uint32_t call;

	setup_env(NULL);
	create_ok(0, id, sizeof(id));
	send_put(id, ALLOWLIST);
	state_reply(expect_proxy(MSG_DOCKER_STATE, NULL), 1, 1);
	call = expect_child(CHILD_NETNS, MSG_NETNS_LISTEN, NULL);
	from_child(CHILD_NETNS, MSG_NETNS_SOCKET, call, -1, NULL);
}

static void
lie_done_to_nothing(void)
{
	setup_env(NULL);
	from_child(CHILD_EGRESS, MSG_EGRESS_DONE, 77, -1, NULL);
}

static void
lie_bad_audit(void)
{
	struct msgw	 w;

	setup_env(NULL);
	msgw_init(&w);
	msgw_str(&w, "not-a-sandbox");
	from_child(CHILD_EGRESS, MSG_EGRESS_AUDIT, 0, -1, &w);
}

static void
lie_netns_sends_egress(void)
{
	setup_env(NULL);
	from_child(CHILD_NETNS, MSG_EGRESS_DONE, 1, -1, NULL);
}

static void
test_lies(void **state)
{
	expect_fatal(lie_socket_without_fd, "bad NETNS_SOCKET message from "
	    "netns-helper: no socket");
	expect_fatal(lie_done_to_nothing, "bad EGRESS_DONE message from "
	    "egress-proxy: reply to no pending call");
	expect_fatal(lie_bad_audit, "bad EGRESS_AUDIT message from "
	    "egress-proxy: malformed audit record");
	expect_fatal(lie_netns_sends_egress, "bad EGRESS_DONE message from "
	    "netns-helper: not a message the helper sends");
}

int
main(void)
{
#define T(f)	cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_attaches_first),
		T(test_create_policy_refused),
		T(test_runsc_refuses_policies),
		T(test_create_listen_fails),
		T(test_exec_gets_proxy_variables),
		T(test_get_and_put),
		T(test_bridge_cannot_change),
		T(test_true_is_public),
		T(test_log_relayed),
		T(test_silent_child),
		T(test_attached_again_after_restart),
		T(test_start_during_attach),
		T(test_put_port_in_use),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
