/*
 * managerd's processes (docs/rest-api.md "Processes"): the table, the
 * output ring, the readers that copy it into apid's pipes, the stdin
 * that goes the other way, and the records that outlive a restart.
 *
 *	process.c	the table, start, the proxy's replies, the end
 *	process_ops.c	get, list, signal, resize, delete, timeouts
 *	process_ring.c	the output ring (pure)
 *	process_io.c	the proxy's socket, readers, stdin
 *	process_recover.c the restart, and the lost ones
 *	store_process.c	processes/<id>.json
 */
#ifndef AS_MANAGERD_PROCESS_H
#define AS_MANAGERD_PROCESS_H

#include <sys/queue.h>

#include <stdint.h>

#include "process_msg.h"

struct event;
struct evbuffer;

/* --- process_ring.c --------------------------------------------------------- */

/* Output as it came, in pieces of at most PEV_DATA_MAX bytes. */
struct ring_chunk {
	TAILQ_ENTRY(ring_chunk)	 entry;
	uint64_t		 seq;		/* output bytes through its end */
	uint32_t		 len;
	uint32_t		 room;		/* data[] allocated */
	uint8_t			 stream;	/* PEV_STDOUT or PEV_STDERR */
	unsigned char		 data[];
};
TAILQ_HEAD(ring_chunks, ring_chunk);

/*
 * At most cap bytes of memory are held, headers included; the oldest
 * chunks go first.  Small pieces of one stream share a chunk (the last
 * one grows while it has room), so a process writing a byte at a time
 * does not pay a header per byte.  A chunk's seq may so grow after a
 * reader saw it: ring_next then hands that reader the rest of it.  A
 * character split by the pipe waits in carry (per stream) until its
 * other bytes come, so no chunk ends inside a well-formed character.
 * total counts only what is in chunks (kept or dropped), never the carry.
 */
#define RING_CHUNK_ROOM	4096	/* a new chunk's room for small pieces */
struct ring {
	struct ring_chunks	 chunks;
	uint64_t		 cap;
	uint64_t		 mem;		/* chunks' headers and room */
	uint64_t		 kept;		/* bytes of output in them */
	uint64_t		 total;
	unsigned char		 carry[2][4];
	size_t			 ncarry[2];
};

void	ring_init(struct ring *, uint64_t cap);
void	ring_free(struct ring *);
/* 0, or -1 (ENOMEM: what did not fit is dropped). */
int	ring_append(struct ring *, int stream, const void *, size_t);
/* The held bytes of a character that will not be completed. */
int	ring_flush(struct ring *);
/* Output bytes no longer kept: where the first kept chunk starts. */
uint64_t ring_dropped(const struct ring *);
/*
 * What a reader that has everything through byte pos gets next: the
 * chunk holding byte pos + 1 and, in *skip, how many of its bytes it
 * already has; NULL if nothing is kept past pos.  pos below
 * ring_dropped() is the caller's gap to report first.
 */
struct ring_chunk *ring_next(const struct ring *, uint64_t pos,
	    uint32_t *skip);

/* --- the table -------------------------------------------------------------- */

enum process_phase {
	PHASE_STARTING,		/* asked the proxy; not yet started */
	PHASE_RUNNING,		/* started: output and stdin flow */
	PHASE_ENDED		/* its status is final */
};

/*
 * How it ended: by itself (its status then says whether a signal or its
 * timeout was behind it), or lost (its stream cut).
 */
enum process_end_cause {
	END_BY_ITSELF,
	END_LOST
};

/* The part of a process its record file stores. */
struct process_record {
	char			 id[PROCESS_ID_LEN + 1];
	char			 sandbox_id[SANDBOX_ID_LEN + 1];
	int			 shell;
	size_t			 argc;
	char			**argv;
	char			*workdir;
	char			*client_id;	/* NULL: none */
	char			 digest[65];	/* SHA-256 of the request */
	char			 exec_id[65];
	int64_t			 pid;
	double			 started_at;
	int			 has_timeout;
	double			 timeout_seconds;
	int			 tty;
	int			 stdin_open;
	uint32_t		 cols, rows;
	enum process_status	 status;
	int			 running;	/* Docker runs it (lost ones) */
	int			 has_exit_code;
	int64_t			 exit_code;
	int			 has_ended_at;
	double			 ended_at;
	uint64_t		 output_bytes;	/* at the last write */
};

struct process;

/* A PROCESS_OUTPUT pipe being written (process_io.c). */
struct proc_reader {
	TAILQ_ENTRY(proc_reader) entry;
	struct process		*p;
	int			 fd;
	struct event		*ev;
	struct evbuffer		*out;
	uint64_t		 pos;		/* bytes it has through */
	int			 follow;
	int			 ending;	/* all it gets is in out */
};
TAILQ_HEAD(proc_readers, proc_reader);

/* A PROCESS_STDIN pipe being read into the process's stdin. */
struct proc_stdin {
	TAILQ_ENTRY(proc_stdin)	 entry;
	struct process		*p;
	uint32_t		 apid_id;
	int			 fd;
	struct event		*ev;
	int			 close_at_end;
	int			 eof;
	uint64_t		 end;		/* stdin bytes through its last */
};
TAILQ_HEAD(proc_stdins, proc_stdin);

/* A client_id retry that came while the first was starting. */
struct proc_waiter {
	TAILQ_ENTRY(proc_waiter) entry;
	uint32_t		 apid_id;
};
TAILQ_HEAD(proc_waiters, proc_waiter);

struct process {
	TAILQ_ENTRY(process)	 entry;
	struct process_record	 rec;
	enum process_phase	 phase;
	int			 signalled;	/* a signal went through the API */
	int			 timed_out;
	uint32_t		 apid_id;	/* the start's; 0 once answered */
	int			 inspecting;	/* a lost one's INSPECT is out */
	struct proc_waiters	 waiters;
	/* the proxy's socket */
	int			 sock;		/* -1: closed */
	struct event		*ev_read;
	struct event		*ev_write;
	unsigned char		 fhead[8];	/* a frame's header */
	size_t			 fhead_len;
	uint32_t		 fleft;		/* its payload still to come */
	uint8_t			 fstream;
	unsigned char		*fbuf;		/* its payload */
	uint32_t		 flen;
	int			 eof;		/* all output is in the ring */
	int			 exit_seen;	/* the proxy's EXEC_EXIT */
	int64_t			 exit_code;
	struct ring		 ring;
	struct proc_readers	 readers;
	/* stdin */
	struct evbuffer		*in;		/* bytes for the socket */
	uint64_t		 in_read;	/* from the pipes, in all */
	uint64_t		 in_written;	/* into the socket */
	int			 in_closing;	/* close once in is out */
	int			 in_closed;
	struct proc_stdins	 stdins;
	int			 nstdins;
	struct event		*ev_timeout;
	int			 refs;		/* calls that point at it */
	int			 gone;		/* left the table */
};
TAILQ_HEAD(processes, process);

extern struct processes	all_processes;

struct process	*process_find(const char *sandbox_id, const char *id);
/* The apid error for a ref no process answers: 404 with what is unknown. */
void	 process_not_found(uint32_t apid_id, const struct process_ref *);
void	 process_hold(struct process *);
void	 process_release(struct process *);
/* The final status, the record rewritten, readers told. */
void	 process_end(struct process *, enum process_end_cause);
/* Off the table: its record, socket, readers and stdin all gone. */
void	 process_forget(struct process *);
void	 process_start_failed(struct process *, enum error_kind,
	    const char *text);
int	 process_write_record(struct process *);
void	 process_fill_info(struct process *, struct process_info *);
int	 process_reply_info(uint32_t apid_id, struct process *,
	    int existed);

/* process_io.c */
int	 process_io_start(struct process *, int sock);
/* Read what the socket holds now (the proxy died after writing it). */
void	 process_io_drain(struct process *);
void	 process_io_close(struct process *);
/* New output or the end: every reader that waits goes on. */
void	 process_readers_kick(struct process *);
void	 process_readers_cut(struct process *);
void	 process_reader_add(uint32_t apid_id, struct process *, uint64_t after,
	    int follow, int fd);
void	 process_stdin_add(uint32_t apid_id, struct process *,
	    int close_at_end, int fd);
/* The stdin pipes fail (409 their requests, why saying why). */
void	 process_stdins_fail(struct process *, const char *why);

void	 process_maybe_ended(struct process *);
struct process *process_adopt(struct process_record *);

/* process_ops.c */
void	 process_timeout_arm(struct process *);
void	 process_timeout_fire(int, short, void *);
/*
 * Ask the proxy for a signal (tree: kill every descendant); apid_id, if
 * not 0, hears OK or the error.  -1 if it could not be asked.
 */
int	 process_send_signal(struct process *, int signo, int tree,
	    uint32_t apid_id);
void	 process_lost_watch(void);

/* store_process.c */
#define PROCESS_DIR	"processes"
int	 store_process_write(int dirfd, const struct process_record *);
int	 store_process_remove(int dirfd, const char *id);
int	 store_process_load_all(int dirfd,
	    void (*cb)(struct process_record *, void *), void *arg);
char	*store_process_to_json(const struct process_record *);
int	 store_process_from_json(const char *, struct process_record *);
void	 process_record_free(struct process_record *);

#endif /* AS_MANAGERD_PROCESS_H */
