/*
 * Docker's one-shot stats answer as dockerd-proxy reads it
 * (docker_stats_parse in dockerd-proxy/docker_stats_parse.c), and the
 * workspace probe's line (du_said_parse).  Input: a byte, then the bytes
 * (odd byte: a probe line, cut at its first NUL as helper_run's text
 * would be; even: Docker's answer).
 *
 * An accepted answer is of a running sandbox, and what it holds must
 * survive managerd's decoder (stats_msg.c), which refuses counts past
 * INT64_MAX and a percentage that is not finite and bounded.  An
 * accepted line is digits then "/workspace", and its bytes whole KiB.
 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "harness.h"
#include "stats_msg.h"

static void
check_answer(const uint8_t *data, size_t len)
{
	struct sandbox_stats	 st, back;
	struct msgw		 w;
	struct imsg		 m;
	const char		*why = NULL;

	if (docker_stats_parse(data, len, &st, &why) == -1) {
		CHECK(why != NULL);
		CHECK(!st.running && !st.has_cpu && !st.has_memory);
		return;
	}
	CHECK(st.running);
	CHECK(!st.has_memory || st.memory_bytes <= INT64_MAX);
	msgw_init(&w);
	msg_put_sandbox_stats(&w, &st);
	memset(&m, 0, sizeof(m));
	m.fd = -1;
	m.data = w.buf;
	m.len = w.len;
	CHECK(msg_get_sandbox_stats(&m, &back) == 0);
	CHECK(back.cpu_ns == st.cpu_ns && back.pids == st.pids &&
	    back.rx_bytes == st.rx_bytes && back.memory_limit ==
	    st.memory_limit);
}

static void
check_line(const uint8_t *data, size_t len)
{
	uint64_t	 bytes;
	char		*text;
	size_t		 n;

	CHECK((text = strndup((const char *)data, len)) != NULL);
	if (du_said_parse(text, &bytes) == 0) {
		n = strspn(text, "0123456789");
		CHECK(n > 0 && strcmp(text + n, "/workspace") == 0);
		CHECK(bytes % 1024 == 0 && bytes <= INT64_MAX);
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len == 0)
		return 0;
	if (data[0] & 1)
		check_line(data + 1, len - 1);
	else
		check_answer(data + 1, len - 1);
	return 0;
}
