/*
 * Every request apid may make is decided for the audit log: audited
 * (audit_request.c's table) or listed there as changing nothing.  A new
 * request type (a PATCH, a new action) fails here until it is one or
 * the other, so that no state change slips out of the log unnoticed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "audit.h"
#include "managerd.h"

static void
test_every_request_decided(void **state)
{
	uint32_t	 type;
	int		 requests = 0, undecided = 0;

	for (type = 200; type < 300; type++) {
		if (!apid_request_opens(type))
			continue;
		requests++;
		if (!audit_decided(type)) {
			print_error("%s (%u): neither audited nor listed as "
			    "changing nothing in managerd/audit_request.c\n",
			    msg_type_name(type), type);
			undecided++;
		}
	}
	/* The table is really read: today's 25 requests at least. */
	assert_true(requests >= 25);
	assert_int_equal(undecided, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_request_decided),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
