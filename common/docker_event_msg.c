/*
 * MSG_DOCKER_EVENT's payload (sandbox_msg.h): apart from the other codecs
 * because it alone checks a sandbox id, which needs ids.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "sandbox_msg.h"

void
msg_put_docker_event(struct msgw *w, const struct docker_event *e)
{
	msgw_str(w, e->id);
	msgw_u8(w, (uint8_t)e->action);
	msgw_i64(w, e->time_ns);
	msgw_i64(w, e->exit_code);
}

int
msg_get_docker_event(const struct imsg *imsg, struct docker_event *e)
{
	struct msgr	 r;
	char		*id;

	memset(e, 0, sizeof(*e));
	msgr_init(&r, imsg);
	id = msgr_str(&r, MSG_MAX_ID);
	e->action = msgr_u8(&r);
	e->time_ns = msgr_i64(&r);
	e->exit_code = msgr_i64(&r);
	if (msgr_end(&r) == -1 || id == NULL || !id_is_sandbox(id) ||
	    e->action < DOCKER_EVENT_START ||
	    e->action > DOCKER_EVENT_ACTION_MAX || e->time_ns <= 0 ||
	    e->time_ns == INT64_MAX ||
	    e->exit_code < 0 || e->exit_code > 255 ||
	    (e->action != DOCKER_EVENT_DIE && e->exit_code != 0)) {
		free(id);
		return -1;
	}
	strlcpy(e->id, id, sizeof(e->id));
	free(id);
	return 0;
}
