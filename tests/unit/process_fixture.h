/*
 * What the apid process tests share (test_apid_process.c and
 * test_apid_process_body.c): a Process as managerd would describe it,
 * and an event stream as managerd writes it into an output pipe.
 */
#ifndef AS_TEST_PROCESS_FIXTURE_H
#define AS_TEST_PROCESS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "process_msg.h"

#define SB		"sb_0123456789abcdef"
#define PROC		"proc_0123456789abcdef"

/* A running process of argv (NULL-ended), 10 bytes of output kept. */
void	info_init(struct process_info *, char **argv, int shell);
/* And its JSON, cmd being the command's. */
#define RUNNING_JSON(cmd) "{\"id\":\"" PROC "\",\"sandbox_id\":\"" SB \
	"\",\"command\":" cmd ",\"workdir\":\"/workspace\",\"status\":" \
	"\"running\",\"running\":true,\"exit_code\":null,\"started_at\":" \
	"\"2025-12-01T21:40:00.500000Z\",\"ended_at\":null," \
	"\"timeout_seconds\":null,\"tty\":false,\"stdin\":false," \
	"\"cols\":null,\"rows\":null,\"client_id\":null,\"output_bytes\":10," \
	"\"kept_bytes\":10,\"dropped_bytes\":0}"

/* An event stream, built up in a buffer. */
struct stream {
	unsigned char	 b[65536];
	size_t		 len;
};
void	put_data(struct stream *, enum pev_type, uint64_t seq, const char *,
	    size_t);
void	put_gap(struct stream *, uint64_t dropped);
void	put_exit(struct stream *, uint64_t seq, enum process_status,
	    int has_code, int64_t code, uint64_t ms);

#endif /* AS_TEST_PROCESS_FIXTURE_H */
