/*
 * Tests for common/config_audit.c: AGENT_SANDBOX_AUDIT_LOG, its default
 * (file), its words in any case, and the error for anything else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#define KEYS	"AGENT_SANDBOX_API_KEYS=aaaaaaaaaaaaaaaa"

static int
load(struct config *c, const char *audit, char *err, size_t errlen)
{
	char	*envp[3];
	int	 r;

	envp[0] = strdup(KEYS);
	envp[1] = audit != NULL ? strdup(audit) : NULL;
	envp[2] = NULL;
	r = config_load(c, envp, err, errlen);
	free(envp[0]);
	free(envp[1]);
	return r;
}

static void
expect_word(const char *setting, const char *want)
{
	struct config	 c;
	char		 err[256];

	if (load(&c, setting, err, sizeof(err)) != 0)
		fail_msg("%s: %s", setting != NULL ? setting : "(unset)", err);
	assert_string_equal(c.audit_log, want);
	config_free(&c);
}

static void
test_words(void **state)
{
	expect_word(NULL, "file");
	expect_word("AGENT_SANDBOX_AUDIT_LOG=", "file");
	expect_word("AGENT_SANDBOX_AUDIT_LOG=file", "file");
	expect_word("AGENT_SANDBOX_AUDIT_LOG=SysLog", "syslog");
	expect_word("AGENT_SANDBOX_AUDIT_LOG=off", "off");
}

static void
expect_bad(const char *setting)
{
	struct config	 c;
	char		 err[256];

	assert_int_equal(load(&c, setting, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "AGENT_SANDBOX_AUDIT_LOG"));
	config_free(&c);
}

static void
test_bad(void **state)
{
	expect_bad("AGENT_SANDBOX_AUDIT_LOG=journald");
	expect_bad("AGENT_SANDBOX_AUDIT_LOG=/var/log/audit.log");
	expect_bad("AGENT_SANDBOX_AUDIT_LOG=of");
	expect_bad("AGENT_SANDBOX_AUDIT_LOG=\xff\xfe");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
