/* What the apid process tests share (process_fixture.h). */
#include <string.h>

#include "process_fixture.h"

void
info_init(struct process_info *pi, char **argv, int shell)
{
	static char	 id[] = PROC, sb[] = SB, wd[] = "/workspace";

	memset(pi, 0, sizeof(*pi));
	pi->id = id;
	pi->sandbox_id = sb;
	pi->shell = shell;
	pi->argv = argv;
	for (pi->argc = 0; argv[pi->argc] != NULL; pi->argc++)
		;
	pi->workdir = wd;
	pi->status = PROCESS_RUNNING;
	pi->running = 1;
	pi->started_at = 1764625200.5;
	pi->output_bytes = 10;
	pi->kept_bytes = 10;
}


void
put_data(struct stream *s, enum pev_type t, uint64_t seq, const char *d,
    size_t len)
{
	s->len += pev_header(s->b + s->len, t, (uint32_t)len, seq);
	memcpy(s->b + s->len, d, len);
	s->len += len;
}

void
put_gap(struct stream *s, uint64_t dropped)
{
	s->len += pev_header(s->b + s->len, PEV_GAP, 0, dropped);
}

void
put_exit(struct stream *s, uint64_t seq, enum process_status st,
    int has_code, int64_t code, uint64_t ms)
{
	struct pev_exit	 x = { st, has_code, code, ms };

	s->len += pev_exit_event(s->b + s->len, seq, &x);
}
