/*
 * The TTL reaper (API.md §8.2): one timer, set for the next expiry and
 * moved whenever an expiry changes or a sandbox comes or goes, instead of
 * the reference's sleep-then-scan loop.  Expired sandboxes are destroyed
 * through the same locked path as DELETE, in created_at order.  A destroy
 * that fails is logged and tried again reap_interval_seconds later: that
 * is all AGENT_SANDBOX_REAP_INTERVAL_SECONDS means here.
 */
#include <math.h>
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "format.h"
#include "managerd.h"

/*
 * Expiries are wall-clock times but the timer counts monotonic time, so
 * it never sleeps longer than this: a step of the wall clock delays a
 * reap by at most this much.
 */
#define REAPER_MAX_SLEEP	300.0

static struct event	*timer;
static double		 next_at = -1;

static void
reaper_cb(evutil_socket_t fd, short events, void *arg)
{
	reaper_run();
}

void
reaper_init(struct event_base *base)
{
	if ((timer = evtimer_new(base, reaper_cb, NULL)) == NULL)
		fatalx("cannot create the reaper's timer");
	reaper_schedule();
}

void
reaper_stop(void)
{
	if (timer != NULL)
		event_free(timer);
	timer = NULL;
	next_at = -1;
}

double
reaper_next(void)
{
	return next_at;
}

/* When a sandbox is due: its expiry, or its retry after a failure. */
static double
reaper_due(const struct sandbox *sb)
{
	return sb->retry_at > sb->rec.expires_at ? sb->retry_at :
	    sb->rec.expires_at;
}

static double
reaper_retry_delay(void)
{
	double	 d = env->conf.reap_interval_seconds;

	if (!(d >= 1.0))
		d = 1.0;
	return d;
}

void
reaper_schedule(void)
{
	struct sandbox	*sb;
	struct timeval	 tv;
	double		 next = -1, delay;

	if (timer == NULL)
		return;		/* not started yet */
	for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb)) {
		if (sb->reaping)
			continue;
		if (next < 0 || reaper_due(sb) < next)
			next = reaper_due(sb);
	}
	next_at = next;
	if (next < 0) {
		evtimer_del(timer);
		return;
	}
	delay = next - clock_wall();
	if (!(delay > 0))
		delay = 0;
	if (delay > REAPER_MAX_SLEEP)
		delay = REAPER_MAX_SLEEP;
	tv.tv_sec = (time_t)delay;
	/* Round up: firing a little late is fine, early is a wasted run. */
	tv.tv_usec = (suseconds_t)fp_ceil((delay - (double)tv.tv_sec) * 1e6);
	if (tv.tv_usec >= 1000000) {
		tv.tv_sec++;
		tv.tv_usec -= 1000000;
	}
	if (evtimer_add(timer, &tv) == -1)
		fatalx("cannot set the reaper's timer");
}

static void
reap_done(struct sandbox *sb, int ok)
{
	sb->reaping = 0;
	if (!ok)
		sb->retry_at = clock_wall() + reaper_retry_delay();
	reaper_schedule();
}

static void
reap_one(struct sandbox *sb, double now)
{
	if (sb->reaping || reaper_due(sb) > now)
		return;
	log_info("sandbox %s expired", sb->rec.id);
	sb->reaping = 1;
	if (sandbox_destroy(sb, reap_done) == -1) {
		sb->reaping = 0;
		sb->retry_at = now + reaper_retry_delay();
	}
}

void
reaper_run(void)
{
	struct sandbox	**v, *sb;
	size_t		  i, n;
	double		  now;

	/*
	 * A destroy only leaves the table when Docker answers, so neither
	 * walk below sees the table change under it.
	 */
	now = clock_wall();
	if ((v = sandbox_sorted(&n)) == NULL) {
		/* Out of memory (or empty): in id order then. */
		for (sb = sandbox_first(); sb != NULL; sb = sandbox_next(sb))
			reap_one(sb, now);
	}
	for (i = 0; i < n; i++)
		reap_one(v[i], now);
	free(v);
	reaper_schedule();
}
