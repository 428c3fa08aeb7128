/*
 * How often a child may be started again.  A child that dies now and then
 * (a crash on one odd request, a kill by hand) is started again at once,
 * each time; one that keeps dying is not going to get better by itself,
 * and starting it in a loop would only hide that.  Past RESTART_MAX
 * restarts within RESTART_WINDOW seconds managerd gives up and exits
 * non-zero, and the service manager (systemd's Restart=on-failure, with
 * its own delay) starts the whole service again; restart reconciliation
 * keeps every sandbox.  The times are monotonic.
 */
#include "managerd.h"

int
restart_allowed(struct restart_budget *b, double now)
{
	/* The oldest of the last RESTART_MAX restarts, once there are. */
	if (b->count == RESTART_MAX &&
	    now - b->at[b->next] < RESTART_WINDOW)
		return 0;
	b->at[b->next] = now;
	b->next = (b->next + 1) % RESTART_MAX;
	if (b->count < RESTART_MAX)
		b->count++;
	return 1;
}
