/*
 * The unit tests under valgrind's memcheck (tests/unit/memcheck.sh):
 * how a test knows, and the tests that cannot check their subject there.
 */
#ifndef MEMCHECK_H
#define MEMCHECK_H

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND	0
#define VALGRIND_DISABLE_ERROR_REPORTING
#endif

/* 1 when the program runs under valgrind. */
static inline int
under_memcheck(void)
{
	return RUNNING_ON_VALGRIND != 0;
}

/*
 * Before a crash a test makes on purpose: valgrind reports nothing more
 * from this thread (a no-op outside valgrind).
 */
#define MEMCHECK_EXPECT_CRASH()	VALGRIND_DISABLE_ERROR_REPORTING

/*
 * cmocka's skip(), with the reason on stdout, under valgrind only: for a
 * test whose subject is a seccomp kill (memcheck.c says why no filter is
 * loaded there) or a kernel limit that valgrind emulates.
 */
#define SKIP_UNDER_MEMCHECK(why) do {					\
	if (under_memcheck()) {						\
		print_message("skipped under valgrind: %s\n", (why));	\
		skip();							\
	}								\
} while (0)

#endif /* MEMCHECK_H */
