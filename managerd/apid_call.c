/* Placeholder: replaced by managerd's requests to apid. */
#include <unistd.h>

#include "log.h"
#include "managerd.h"

uint32_t
apid_call(uint32_t type, int fd, struct msgw *w, uint32_t reply_type,
    proxy_done_cb done, void *arg)
{
	(void)type; (void)w; (void)reply_type; (void)done; (void)arg;
	if (fd != -1)
		close(fd);
	return 0;
}

void
apid_call_reply(struct peer *p, struct imsg *imsg)
{
	peer_bad_message(p, imsg, "reply to no call");
}
