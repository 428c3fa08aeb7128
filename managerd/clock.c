/*
 * Time for managerd (API.md §8.1): the wall clock for record timestamps
 * and the monotonic clock for durations, behind pointers a test can
 * replace with a clock it controls.
 */
#include <time.h>

#include "managerd.h"

static double
timespec_seconds(clockid_t id)
{
	struct timespec	 ts;

	if (clock_gettime(id, &ts) == -1)
		return 0.0;
	/* Microseconds, like Python's time.time(). */
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000) / 1e6;
}

static double
real_wall(void)
{
	return timespec_seconds(CLOCK_REALTIME);
}

static double
real_monotonic(void)
{
	return timespec_seconds(CLOCK_MONOTONIC);
}

double	(*clock_wall)(void) = real_wall;
double	(*clock_monotonic)(void) = real_monotonic;
