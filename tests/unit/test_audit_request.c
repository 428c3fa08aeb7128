/*
 * Tests for managerd/audit_request.c: which requests are audited, the
 * ids read from a request's leading fields and from its last reply, the
 * outcome (the error kind's status and code, a retried process's 200),
 * the caller's fields, and a request that ends unanswered.  The lines go
 * to a real audit.log in a scratch directory; the clocks are the test's.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "audit.h"
#include "managerd.h"

#define SB	"sb_0123456789abcdef"
#define SB2	"sb_fedcba9876543210"
#define SNAP	"snap_0011223344556677"
#define PROC	"proc_8899aabbccddeeff"

static double	 fake_wall = 1764637323.5;
static double	 fake_mono = 100.0;
static char	 dir[] = "/tmp/test_audit_request.XXXXXX";
static int	 dirfd_ = -1;
static off_t	 seen;

static double
wall(void)
{
	return fake_wall;
}

static double
mono(void)
{
	return fake_mono;
}

static int
setup(void **state)
{
	static char	 word[] = "file";
	struct config	 c;

	if (mkdtemp(dir) == NULL ||
	    (dirfd_ = open(dir, O_RDONLY | O_DIRECTORY)) == -1)
		return -1;
	memset(&c, 0, sizeof(c));
	c.audit_log = word;
	audit_open(&c, dirfd_);
	clock_wall = wall;
	clock_monotonic = mono;
	return 0;
}

static int
teardown(void **state)
{
	unlinkat(dirfd_, "audit.log", 0);
	close(dirfd_);
	return rmdir(dir);
}

/* The line written since the last call, parsed; NULL if none. */
static json_object *
next_line(void)
{
	char		 buf[8192];
	ssize_t		 n;
	int		 fd;
	json_object	*o;

	fd = openat(dirfd_, "audit.log", O_RDONLY);
	assert_true(fd != -1);
	n = pread(fd, buf, sizeof(buf) - 1, seen);
	close(fd);
	assert_true(n >= 0);
	if (n == 0)
		return NULL;
	buf[n] = '\0';
	assert_ptr_equal(strchr(buf, '\n'), buf + n - 1);
	seen += n;
	o = json_tokener_parse(buf);
	assert_non_null(o);
	return o;
}

static const char *
field(json_object *o, const char *key)
{
	json_object	*v;

	return json_object_object_get_ex(o, key, &v) ?
	    json_object_get_string(v) : NULL;
}

static struct imsg
imsg_of(uint32_t type, struct msgw *w)
{
	struct imsg	 m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = type;
	m.fd = -1;
	m.len = w->len;
	m.data = w->buf;
	return m;
}

static struct audit_pending *
begin(uint32_t type, const char *a, const char *b)
{
	struct msgw	 w;
	struct imsg	 m;

	msgw_init(&w);
	if (a != NULL)
		msgw_str(&w, a);
	if (b != NULL)
		msgw_str(&w, b);
	m = imsg_of(type, &w);
	return audit_begin(&m);
}

static void
end_error(struct audit_pending *a, enum error_kind kind)
{
	struct msgw	 w;

	msgw_init(&w);
	msgw_u32(&w, kind);
	msgw_str(&w, "whatever the message");
	audit_end(a, NULL, MSG_ERROR, w.buf, w.len, 0);
}

static void
test_not_audited(void **state)
{
	assert_null(begin(MSG_SANDBOX_GET, SB, NULL));
	assert_null(begin(MSG_SANDBOX_LIST, NULL, NULL));
	assert_null(begin(MSG_HEALTH_REQUEST, NULL, NULL));
	assert_null(begin(MSG_FILE_READ, SB, "/workspace/x"));
	assert_null(begin(MSG_PROCESS_OUTPUT, SB, PROC));
	assert_null(next_line());
}

static void
test_error_outcome(void **state)
{
	struct audit_pending	*a;
	json_object		*o;

	a = begin(MSG_SANDBOX_DELETE, "sb_unknown", NULL);
	assert_non_null(a);
	fake_mono += 0.25;
	end_error(a, ERR_NOT_FOUND);
	o = next_line();
	assert_string_equal(field(o, "route"),
	    "DELETE /v1/sandboxes/{sandbox_id}");
	assert_string_equal(field(o, "sandbox_id"), "sb_unknown");
	assert_string_equal(field(o, "status"), "404");
	assert_string_equal(field(o, "error"), "not_found");
	assert_string_equal(field(o, "duration_ms"), "250");
	assert_string_equal(field(o, "time"), "2025-12-02T01:02:03.500Z");
	json_object_put(o);
	a = begin(MSG_SNAPSHOT_CREATE, SB, NULL);
	end_error(a, ERR_QUOTA_EXCEEDED);
	o = next_line();
	assert_string_equal(field(o, "status"), "403");
	assert_string_equal(field(o, "error"), "quota_exceeded");
	json_object_put(o);
}

static void
test_fork_ids(void **state)
{
	struct audit_pending	*a;
	struct sandbox_info	 si;
	struct msgw		 w;
	json_object		*o;
	char			 id[] = SB2, image[] = "busybox", snap[] = SNAP;

	a = begin(MSG_SNAPSHOT_FORK, SNAP, NULL);
	memset(&si, 0, sizeof(si));
	si.id = id;
	si.image = image;
	si.cpus = 1;
	si.memory_mb = 128;
	si.pids_limit = 64;
	si.source_snapshot_id = snap;
	msgw_init(&w);
	msg_put_sandbox_info(&w, &si);
	audit_end(a, NULL, MSG_SANDBOX_INFO, w.buf, w.len, 1);
	o = next_line();
	assert_string_equal(field(o, "route"),
	    "POST /v1/snapshots/{snapshot_id}/fork");
	assert_string_equal(field(o, "snapshot_id"), SNAP);
	assert_string_equal(field(o, "sandbox_id"), SB2);
	assert_string_equal(field(o, "status"), "201");
	assert_string_equal(field(o, "client_gone"), "true");
	assert_null(field(o, "error"));
	json_object_put(o);
}

static void
process_reply(struct audit_pending *a, int existed)
{
	struct process_info	 pi;
	struct msgw		 w;
	char			 id[] = PROC, sb[] = SB, cmd[] = "sleep 9";
	char			 wd[] = "/workspace", *argv[] = { cmd, NULL };

	memset(&pi, 0, sizeof(pi));
	pi.id = id;
	pi.sandbox_id = sb;
	pi.shell = 1;
	pi.argc = 1;
	pi.argv = argv;
	pi.workdir = wd;
	pi.status = PROCESS_RUNNING;
	pi.running = 1;
	pi.existed = existed;
	msgw_init(&w);
	msg_put_process_info(&w, &pi);
	audit_end(a, NULL, MSG_PROCESS_INFO, w.buf, w.len, 0);
}

static void
test_process_start(void **state)
{
	json_object	*o;

	process_reply(begin(MSG_PROCESS_START, SB, NULL), 0);
	o = next_line();
	assert_string_equal(field(o, "process_id"), PROC);
	assert_string_equal(field(o, "sandbox_id"), SB);
	assert_string_equal(field(o, "status"), "201");
	/* The command line is never in the line. */
	assert_null(strstr(json_object_to_json_string(o), "sleep"));
	json_object_put(o);
	/* A client_id retry found the first run: apid answers 200. */
	process_reply(begin(MSG_PROCESS_START, SB, NULL), 1);
	o = next_line();
	assert_string_equal(field(o, "status"), "200");
	json_object_put(o);
}

static void
test_caller_and_refs(void **state)
{
	struct audit_pending	*a;
	struct caller		 c;
	json_object		*o;
	char			 key[] = "ci-1", tenant[] = "";
	char			 addr[] = "[::1]:5000";
	char			 route[] = "POST /v1/sandboxes/{sandbox_id}/"
				    "processes/{process_id}/signal";

	memset(&c, 0, sizeof(c));
	c.key_name = key;
	c.tenant = tenant;
	c.client_addr = addr;
	c.route = route;
	a = begin(MSG_PROCESS_SIGNAL, SB, PROC);
	audit_end(a, &c, MSG_OK, NULL, 0, 0);
	o = next_line();
	assert_string_equal(field(o, "key"), "ci-1");
	assert_null(field(o, "tenant"));	/* "": left out */
	assert_string_equal(field(o, "client"), "[::1]:5000");
	assert_string_equal(field(o, "route"), c.route);
	assert_string_equal(field(o, "sandbox_id"), SB);
	assert_string_equal(field(o, "process_id"), PROC);
	assert_string_equal(field(o, "status"), "204");
	json_object_put(o);
	/* A rollback names both. */
	a = begin(MSG_SANDBOX_ROLLBACK, SB, SNAP);
	end_error(a, ERR_CONFLICT);
	o = next_line();
	assert_string_equal(field(o, "sandbox_id"), SB);
	assert_string_equal(field(o, "snapshot_id"), SNAP);
	assert_string_equal(field(o, "error"), "conflict");
	json_object_put(o);
}

static void
test_odd_payloads(void **state)
{
	struct audit_pending	*a;
	struct msgw		 w;
	struct imsg		 m;
	json_object		*o;

	/* A request payload that is no string: no ids, still a line. */
	msgw_init(&w);
	msgw_u8(&w, 7);
	m = imsg_of(MSG_SANDBOX_DELETE, &w);
	a = audit_begin(&m);
	assert_non_null(a);
	/* A reply that does not decode names nothing new. */
	audit_end(a, NULL, MSG_SANDBOX_INFO, "\x01", 1, 0);
	o = next_line();
	assert_null(field(o, "sandbox_id"));
	assert_string_equal(field(o, "status"), "204");
	json_object_put(o);
	/* An error kind out of range: 500 internal_error. */
	a = begin(MSG_SANDBOX_DELETE, SB, NULL);
	end_error(a, (enum error_kind)999);
	o = next_line();
	assert_string_equal(field(o, "status"), "500");
	assert_string_equal(field(o, "error"), "internal_error");
	json_object_put(o);
	/* An empty MSG_ERROR (a lying payload): still one valid line. */
	a = begin(MSG_SANDBOX_DELETE, SB, NULL);
	audit_end(a, NULL, MSG_ERROR, NULL, 0, 0);
	o = next_line();
	assert_string_equal(field(o, "status"), "500");
	json_object_put(o);
}

static void
test_unanswered(void **state)
{
	json_object	*o;

	audit_end_unanswered(begin(MSG_FILE_WRITE_BEGIN, SB, "/workspace/f"),
	    NULL);
	o = next_line();
	assert_string_equal(field(o, "route"),
	    "PUT /v1/sandboxes/{sandbox_id}/files");
	assert_string_equal(field(o, "status"), "0");
	assert_string_equal(field(o, "error"), "no_answer");
	/* The path is never in the line. */
	assert_null(strstr(json_object_to_json_string(o), "workspace"));
	json_object_put(o);
	audit_end(NULL, NULL, MSG_OK, NULL, 0, 0);
	audit_end_unanswered(NULL, NULL);
	assert_null(next_line());
}

static void
test_mode(void **state)
{
	struct stat	 st;

	assert_int_equal(fstatat(dirfd_, "audit.log", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(audit_lost(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_audited),
		cmocka_unit_test(test_error_outcome),
		cmocka_unit_test(test_fork_ids),
		cmocka_unit_test(test_process_start),
		cmocka_unit_test(test_caller_and_refs),
		cmocka_unit_test(test_odd_payloads),
		cmocka_unit_test(test_unanswered),
		cmocka_unit_test(test_mode),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
