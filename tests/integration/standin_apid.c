/*
 * A stand-in for apid against the real managerd (test_apid_lies.py): the
 * spawner starts it in apid's place, from a libexec directory whose
 * "apid" is this program.  It takes apid's settings, reports READY, then
 * sends managerd what a taken-over apid could: well-formed requests with
 * hostile fields, each of which must be refused with the right error and
 * reach nothing, and last a malformed one, which must end managerd.  One
 * line per step on stderr (the server's log): "standin: ok <step>" or
 * "standin: FAIL <step>: <why>", then "standin: done".
 */
#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "caller.h"
#include "msg.h"
#include "proc.h"
#include "sandbox_msg.h"

static int	 no_filter(enum seccomp_mode);

static const struct proc_child	standin_proc = {
	"standin-apid", MSG_APID_CONFIG, 1, no_filter
};

static struct imsgbuf	 chan;
static uint32_t		 next_peerid = 1;
static int		 failed;

static int
no_filter(enum seccomp_mode mode)
{
	(void)mode;
	return 0;
}

static void
send_or_die(uint32_t type, uint32_t peerid, const struct msgw *w)
{
	if (imsg_compose(&chan, type, peerid, -1, w ? w->buf : NULL,
	    w ? w->len : 0) == -1 || imsgbuf_flush(&chan) == -1) {
		fprintf(stderr, "standin: FAIL send: %s\n", strerror(errno));
		exit(1);
	}
}

/* What apid sends before every request: who makes it. */
static void
send_caller(uint32_t peerid)
{
	static char	 name[] = "key-1", tenant[] = "", addr[] = "127.0.0.1:1",
			 route[] = "standin";
	struct caller	 c = { name, tenant, 1, addr, route };
	struct msgw	 w;

	msgw_init(&w);
	msg_put_caller(&w, &c);
	send_or_die(MSG_CALLER, peerid, &w);
}

/* The next message for peerid; 0 at end-of-file (managerd is gone). */
static int
next_for(uint32_t peerid, struct imsg *imsg)
{
	struct pollfd	 pfd = { PROC_PARENT_FD, POLLIN, 0 };
	ssize_t		 n;
	int		 r;

	for (;;) {
		while ((r = imsg_get(&chan, imsg)) == 1) {
			if (imsg->hdr.peerid == peerid)
				return 1;
			imsg_free(imsg);
		}
		if (r == -1)
			return 0;
		if (poll(&pfd, 1, 30000) <= 0)
			return 0;
		if ((n = imsgbuf_read(&chan)) == 0)
			return 0;
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return 0;
	}
}

static void
verdict(const char *step, const char *why)
{
	if (why == NULL)
		fprintf(stderr, "standin: ok %s\n", step);
	else {
		fprintf(stderr, "standin: FAIL %s: %s\n", step, why);
		failed = 1;
	}
}

/* Send, then the reply must be MSG_ERROR of kind with text starting so. */
static void
expect_error(const char *step, uint32_t type, const struct msgw *w,
    enum error_kind kind, const char *text)
{
	struct imsg	 imsg;
	struct msgr	 r;
	uint32_t	 peerid = next_peerid++, got;
	char		*msg, why[512];

	send_caller(peerid);
	send_or_die(type, peerid, w);
	if (!next_for(peerid, &imsg)) {
		verdict(step, "no answer");
		return;
	}
	if (imsg.hdr.type != MSG_ERROR) {
		snprintf(why, sizeof(why), "answered with type %u",
		    imsg.hdr.type);
		verdict(step, why);
		imsg_free(&imsg);
		return;
	}
	msgr_init(&r, &imsg);
	got = msgr_u32(&r);
	msg = msgr_str(&r, MSG_MAX_STRING);
	if (msgr_end(&r) == -1 || msg == NULL)
		verdict(step, "malformed error");
	else if (got != kind || strncmp(msg, text, strlen(text)) != 0) {
		snprintf(why, sizeof(why), "error %u %s", got, msg);
		verdict(step, why);
	} else
		verdict(step, NULL);
	free(msg);
	imsg_free(&imsg);
}

static void
create_refused(const char *step, struct create_request *c,
    enum error_kind kind, const char *text)
{
	struct msgw	 w;

	msgw_init(&w);
	msg_put_create_request(&w, c);
	expect_error(step, MSG_SANDBOX_CREATE, &w, kind, text);
	create_request_free(c);
}

static void
create_init(struct create_request *c)
{
	memset(c, 0, sizeof(*c));
	c->read_only_rootfs = 1;
}

static void
hostile_creates(void)
{
	struct create_request	 c;

	create_init(&c);
	c.has_cpus = 1;
	c.cpus = 0.000001;
	create_refused("cpus Docker would not limit", &c, ERR_INVALID_REQUEST,
	    "cpus must be at least 0.01");
	create_init(&c);
	c.has_cpus = 1;
	c.cpus = 1e300;
	create_refused("cpus over the maximum", &c, ERR_INVALID_REQUEST,
	    "cpus must be in (0, ");
	create_init(&c);
	c.has_memory_mb = 1;
	c.memory_mb = INT64_MAX;
	create_refused("memory over the maximum", &c, ERR_INVALID_REQUEST,
	    "memory_mb must be in [16, ");
	create_init(&c);
	c.image = strdup("evil/miner:latest");
	create_refused("image outside the allowlist", &c, ERR_FORBIDDEN,
	    "image 'evil/miner:latest' is not in");
	create_init(&c);
	c.network = 1;
	create_refused("network the operator refused", &c, ERR_FORBIDDEN,
	    "this server does not allow sandboxes with network access");
	create_init(&c);
	if (env_list_add(&c.env, "NVIDIA_VISIBLE_DEVICES", "all") == -1)
		exit(1);
	create_refused("env key runtimes read", &c, ERR_FORBIDDEN,
	    "this server does not allow the environment key");
	create_init(&c);
	if (env_list_add(&c.env, "A=B", "1") == -1)
		exit(1);
	create_refused("env key with =", &c, ERR_INVALID_REQUEST,
	    "invalid environment variable name");
}

static void
hostile_lookups(void)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_str(&w, "sb_0123456789abcdef");
	expect_error("a sandbox this server never made", MSG_SANDBOX_GET, &w,
	    ERR_NOT_FOUND, "sandbox sb_0123456789abcdef not found");
	msgw_init(&w);
	msgw_str(&w, "sb_0123456789abcdef");
	expect_error("delete of one it never made", MSG_SANDBOX_DELETE, &w,
	    ERR_NOT_FOUND, "sandbox sb_0123456789abcdef not found");
}

/* A payload no codec takes: managerd must stop, not guess. */
static void
malformed(void)
{
	struct imsg	 imsg;
	struct msgw	 w;
	uint32_t	 peerid = next_peerid++;

	msgw_init(&w);
	msgw_u8(&w, 1);
	send_caller(peerid);
	send_or_die(MSG_SANDBOX_CREATE, peerid, &w);
	if (next_for(peerid, &imsg)) {
		verdict("a malformed create ends managerd", "it answered");
		imsg_free(&imsg);
	} else
		verdict("a malformed create ends managerd", NULL);
}

int
main(int argc, char *argv[])
{
	struct imsg	 settings;

	(void)argv;
	proc_child_init(&standin_proc, argc, &chan, &settings);
	imsg_free(&settings);
	send_or_die(MSG_READY, 0, NULL);
	hostile_creates();
	hostile_lookups();
	malformed();
	fprintf(stderr, "standin: done\n");
	return failed;
}
