/*
 * One line of Docker's event stream as dockerd-proxy reads it
 * (docker_event_parse in dockerd-proxy/docker_events_parse.c).  An
 * accepted event is one managerd's decoder (docker_event_msg.c) takes as
 * it is: a sandbox id, a known action, a time, an exit code in range.
 */
#include <string.h>

#include "proxy.h"
#include "harness.h"
#include "sandbox_msg.h"

#define INSTANCE	"0123456789abcdef"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct docker_event	 ev, back;
	struct msgw		 w;
	struct imsg		 m;

	if (!docker_event_parse((const char *)data, len, INSTANCE, &ev)) {
		CHECK(ev.action == 0 && ev.id[0] == '\0');
		return 0;
	}
	msgw_init(&w);
	msg_put_docker_event(&w, &ev);
	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.data = w.buf;
	m.len = w.len;
	CHECK(msg_get_docker_event(&m, &back) == 0);
	CHECK(memcmp(&ev, &back, sizeof(ev)) == 0);
	return 0;
}
