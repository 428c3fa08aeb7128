/*
 * Tests for client/cli_process_args.c: the operands and options of run,
 * shell, logs, attach and kill, what each makes of them, and the usage
 * errors, before any request could be made.
 */
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

#define NARGS(a)	((int)(sizeof(a) / sizeof((a)[0])) - 1)
/* A writable word, as main()'s argv has them. */
#define W(s)		((char []){ s })

/* getopt afresh for each parse, as agent-sandbox.c does for a verb. */
static void
fresh(void)
{
	optind = 0;
	opterr = 0;
}

static int
json_is(json_object *o, const char *text)
{
	json_object	*want = json_tokener_parse(text);
	int		 r = json_object_equal(o, want);

	json_object_put(want);
	return r;
}

static void
test_run(void **state)
{
	char *shell[] = { W("run"), W("-d"), W("--env"), W("A=1"), W("--env"),
	    W("B=x=y"), W("--workdir"), W("/src"), W("--timeout"), W("2.5"),
	    W("--client-id"), W("c1"), W("sb_1"), W("make test"), NULL };
	char *argv[] = { W("run"), W("-t"), W("-i"), W("sb_1"), W("--"),
	    W("ls"), W("-l"), NULL };
	char *own[] = { W("run"), W("sb_1"), W("grep"), W("-d"), W("x"), NULL };
	struct cli_start	 st;

	(void)state;
	fresh();
	assert_int_equal(cli_run_args(NARGS(shell), shell, &st), 0);
	assert_true(st.detach);
	assert_string_equal(st.sandbox, "sb_1");
	assert_true(json_is(st.spec.command, "\"make test\""));
	assert_true(json_is(st.spec.env, "{\"A\": \"1\", \"B\": \"x=y\"}"));
	assert_string_equal(st.spec.workdir, "/src");
	assert_true(st.spec.has_timeout);
	assert_true(st.spec.timeout == 2.5);
	assert_string_equal(st.spec.client_id, "c1");
	assert_false(st.spec.tty);
	assert_int_equal(st.spec.stdin_open, 0);
	cli_start_free(&st);

	fresh();
	assert_int_equal(cli_run_args(NARGS(argv), argv, &st), 0);
	assert_false(st.detach);
	assert_true(st.spec.tty);
	assert_int_equal(st.spec.stdin_open, 1);
	assert_true(json_is(st.spec.command, "[\"ls\", \"-l\"]"));
	/* No --env: no env in the request. */
	assert_null(st.spec.env);
	assert_false(st.spec.has_timeout);
	cli_start_free(&st);

	/* Options end at the ID: the command keeps its own -d. */
	fresh();
	assert_int_equal(cli_run_args(NARGS(own), own, &st), 0);
	assert_false(st.detach);
	assert_true(json_is(st.spec.command, "[\"grep\", \"-d\", \"x\"]"));
	cli_start_free(&st);
}

static void
test_run_usage(void **state)
{
	char *none[] = { W("run"), NULL };
	char *no_cmd[] = { W("run"), W("-d"), W("sb_1"), NULL };
	char *dashes[] = { W("run"), W("sb_1"), W("--"), NULL };
	char *bad_env[] = { W("run"), W("--env"), W("=x"), W("sb_1"), W("ls"),
	    NULL };
	char *bad_t[] = { W("run"), W("--timeout"), W("soon"), W("sb_1"),
	    W("ls"), NULL };
	char *empty_id[] = { W("run"), W("--client-id"), W(""), W("sb_1"),
	    W("ls"), NULL };
	char *slash[] = { W("run"), W("sb/1"), W("ls"), NULL };
	char *unknown[] = { W("run"), W("--tyy"), W("sb_1"), W("ls"), NULL };
	char **bad[] = { none, no_cmd, dashes, bad_env, bad_t, empty_id,
	    slash, unknown, NULL };
	struct cli_start	 st;
	size_t			 i;
	int			 n;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		for (n = 0; bad[i][n] != NULL; n++)
			;
		fresh();
		if (cli_run_args(n, bad[i], &st) != -1)
			fail_msg("run accepted case %zu", i);
		cli_start_free(&st);
	}
}

static void
test_shell(void **state)
{
	char *plain[] = { W("shell"), W("sb_1"), NULL };
	char *opts[] = { W("shell"), W("--shell"), W("/bin/bash"), W("--env"),
	    W("TERM=dumb"), W("--workdir"), W("/tmp"), W("sb_1"), NULL };
	char *extra[] = { W("shell"), W("sb_1"), W("ls"), NULL };
	char *empty[] = { W("shell"), W("--shell"), W(""), W("sb_1"), NULL };
	char *timeout[] = { W("shell"), W("--timeout"), W("5"), W("sb_1"),
	    NULL };
	struct cli_start	 st;

	(void)state;
	fresh();
	assert_int_equal(cli_shell_args(NARGS(plain), plain, &st), 0);
	assert_string_equal(st.sandbox, "sb_1");
	assert_true(json_is(st.spec.command, "[\"/bin/sh\"]"));
	assert_true(st.spec.tty);
	assert_int_equal(st.spec.stdin_open, 1);
	assert_null(st.spec.env);
	cli_start_free(&st);

	fresh();
	assert_int_equal(cli_shell_args(NARGS(opts), opts, &st), 0);
	assert_true(json_is(st.spec.command, "[\"/bin/bash\"]"));
	assert_true(json_is(st.spec.env, "{\"TERM\": \"dumb\"}"));
	assert_string_equal(st.spec.workdir, "/tmp");
	cli_start_free(&st);

	fresh();
	assert_int_equal(cli_shell_args(NARGS(extra), extra, &st), -1);
	cli_start_free(&st);
	fresh();
	assert_int_equal(cli_shell_args(NARGS(empty), empty, &st), -1);
	cli_start_free(&st);
	/* A shell lives as long as its session: no --timeout. */
	fresh();
	assert_int_equal(cli_shell_args(NARGS(timeout), timeout, &st), -1);
	cli_start_free(&st);
}

static void
test_logs(void **state)
{
	char *plain[] = { W("logs"), W("sb_1"), W("proc_1"), NULL };
	char *follow[] = { W("logs"), W("-f"), W("--after"), W("1048600"),
	    W("sb_1"), W("proc_1"), NULL };
	char *neg[] = { W("logs"), W("--after"), W("-1"), W("sb_1"),
	    W("proc_1"), NULL };
	char *word[] = { W("logs"), W("--after"), W("ten"), W("sb_1"),
	    W("proc_1"), NULL };
	char *one[] = { W("logs"), W("sb_1"), NULL };
	char *three[] = { W("logs"), W("sb_1"), W("proc_1"), W("x"), NULL };
	struct cli_logs		 l;

	(void)state;
	fresh();
	assert_int_equal(cli_logs_args(NARGS(plain), plain, &l), 0);
	assert_string_equal(l.sandbox, "sb_1");
	assert_string_equal(l.process, "proc_1");
	assert_false(l.follow);
	assert_int_equal(l.after, 0);
	fresh();
	assert_int_equal(cli_logs_args(NARGS(follow), follow, &l), 0);
	assert_true(l.follow);
	assert_int_equal(l.after, 1048600);
	fresh();
	assert_int_equal(cli_logs_args(NARGS(neg), neg, &l), -1);
	fresh();
	assert_int_equal(cli_logs_args(NARGS(word), word, &l), -1);
	fresh();
	assert_int_equal(cli_logs_args(NARGS(one), one, &l), -1);
	fresh();
	assert_int_equal(cli_logs_args(NARGS(three), three, &l), -1);
}

static void
test_attach(void **state)
{
	char *plain[] = { W("attach"), W("sb_1"), W("proc_1"), NULL };
	char *watch[] = { W("attach"), W("--no-stdin"), W("sb_1"), W("proc_1"),
	    NULL };
	char *bad[] = { W("attach"), W("sb_1"), W("proc/1"), NULL };
	struct cli_attach	 a;

	(void)state;
	fresh();
	assert_int_equal(cli_attach_args(NARGS(plain), plain, &a), 0);
	assert_false(a.no_stdin);
	assert_string_equal(a.process, "proc_1");
	fresh();
	assert_int_equal(cli_attach_args(NARGS(watch), watch, &a), 0);
	assert_true(a.no_stdin);
	fresh();
	assert_int_equal(cli_attach_args(NARGS(bad), bad, &a), -1);
}

static void
test_kill(void **state)
{
	char *plain[] = { W("kill"), W("sb_1"), W("proc_1"), NULL };
	char *sig[] = { W("kill"), W("sb_1"), W("proc_1"), W("sigkill"), NULL };
	char *num[] = { W("kill"), W("sb_1"), W("proc_1"), W("2"), NULL };
	char *del[] = { W("kill"), W("--delete"), W("sb_1"), W("proc_1"),
	    NULL };
	char *del_sig[] = { W("kill"), W("--delete"), W("sb_1"), W("proc_1"),
	    W("KILL"), NULL };
	char *usr1[] = { W("kill"), W("sb_1"), W("proc_1"), W("USR1"), NULL };
	char *more[] = { W("kill"), W("sb_1"), W("proc_1"), W("INT"), W("TERM"),
	    NULL };
	struct cli_kill		 k;

	(void)state;
	fresh();
	assert_int_equal(cli_kill_args(NARGS(plain), plain, &k), 0);
	assert_string_equal(k.signal, "TERM");
	assert_false(k.delete);
	fresh();
	assert_int_equal(cli_kill_args(NARGS(sig), sig, &k), 0);
	assert_string_equal(k.signal, "KILL");
	fresh();
	assert_int_equal(cli_kill_args(NARGS(num), num, &k), 0);
	assert_string_equal(k.signal, "INT");
	fresh();
	assert_int_equal(cli_kill_args(NARGS(del), del, &k), 0);
	assert_true(k.delete);
	fresh();
	assert_int_equal(cli_kill_args(NARGS(del_sig), del_sig, &k), -1);
	fresh();
	assert_int_equal(cli_kill_args(NARGS(usr1), usr1, &k), -1);
	fresh();
	assert_int_equal(cli_kill_args(NARGS(more), more, &k), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_run_usage),
		cmocka_unit_test(test_shell),
		cmocka_unit_test(test_logs),
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
