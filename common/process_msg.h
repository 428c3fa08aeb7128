/*
 * Processes that outlive a request (docs/rest-api.md "Processes"): the
 * payloads of the PROCESS_* and DOCKER_PROCESS_* messages (msg.h), and
 * the event stream managerd writes into the pipe of a PROCESS_OUTPUT.
 *
 * Where things live: dockerd-proxy runs the command as a Docker exec and
 * pumps its output, as frames, into a socketpair whose other end
 * managerd holds (stdin goes the other way on the same socket).  managerd
 * keeps each process's recent output in a ring, numbered by bytes, and
 * copies it to every reader (a PROCESS_OUTPUT pipe) from where that
 * reader is, so a slow reader never holds the process back: it falls
 * behind the ring and is told how much it missed.  apid turns the events
 * into NDJSON or WebSocket frames.
 */
#ifndef AS_PROCESS_MSG_H
#define AS_PROCESS_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "ids.h"
#include "sandbox_msg.h"

#define PROCESS_CLIENT_ID_MAX	128	/* bytes of a client_id */
#define PROCESS_TTY_MAX		1000	/* cols and rows, each */

enum process_status {
	PROCESS_RUNNING = 1,	/* it runs and its output is collected */
	PROCESS_EXITED,		/* it ended by itself: exit_code */
	PROCESS_KILLED,		/* ended after a signal or DELETE */
	PROCESS_TIMED_OUT,	/* killed at its timeout_seconds */
	PROCESS_LOST,		/* its output can no longer be followed */
	PROCESS_STATUS_MAX = PROCESS_LOST
};
/* "running", "exited", ...; NULL for a value out of range. */
const char	*process_status_name(enum process_status);

/*
 * The signals a client may send, by the names the API takes ("TERM",
 * "INT", "KILL", "HUP"): the number, or 0 for any other name.
 */
int		 process_signal_number(const char *name);
const char	*process_signal_name(int signo);	/* NULL if not one */

/* POST /v1/sandboxes/{id}/processes after schema checks (apid -> managerd). */
struct process_request {
	char		*sandbox_id;
	int		 shell;		/* argv[0] is a shell command line */
	size_t		 argc;
	char		**argv;		/* NULL-terminated */
	struct env_list	 env;
	char		*workdir;	/* NULL: not given */
	int		 has_timeout;
	double		 timeout_seconds;
	int		 tty;
	int		 stdin_open;	/* "stdin": true */
	uint32_t	 cols, rows;	/* 0: not given */
	char		*client_id;	/* NULL: not given */
};

/* What apid renders as a Process object (managerd -> apid). */
struct process_info {
	char		*id;
	char		*sandbox_id;
	int		 shell;		/* the command as the client gave it */
	size_t		 argc;
	char		**argv;
	char		*workdir;	/* normalized */
	enum process_status status;
	int		 running;	/* Docker still runs it (also when lost) */
	int		 has_exit_code;
	int64_t		 exit_code;
	double		 started_at;	/* wall clock, seconds */
	int		 has_ended_at;
	double		 ended_at;
	int		 has_timeout;
	double		 timeout_seconds;
	int		 tty;
	int		 stdin_open;
	uint32_t	 cols, rows;
	char		*client_id;	/* NULL: none */
	uint64_t	 output_bytes;	/* all output so far: the last seq */
	uint64_t	 kept_bytes;	/* of which still in the ring */
	uint64_t	 dropped_bytes;	/* of which dropped from it */
	int		 existed;	/* a client_id retry: 200, not 201 */
};

/* A process named by a route: {sandbox}/processes/{process}. */
struct process_ref {
	char		*sandbox_id;
	char		*process_id;
};

/* PROCESS_OUTPUT: events after byte `after`; follow: until the end. */
struct process_output {
	struct process_ref ref;
	uint64_t	 after;
	int		 follow;
};

/* PROCESS_STDIN: the pipe's bytes to its stdin, then maybe end of file. */
struct process_stdin {
	struct process_ref ref;
	int		 close_at_end;
};

struct process_signal {
	struct process_ref ref;
	uint32_t	 signo;		/* process_signal_number()'s */
};

struct process_resize {
	struct process_ref ref;
	uint32_t	 cols, rows;	/* 1..PROCESS_TTY_MAX */
};

/* A process for dockerd-proxy to start (managerd -> proxy). */
struct docker_process {
	char		*id;		/* sandbox id */
	size_t		 argc;
	char		**argv;		/* final argv, NULL-terminated */
	struct env_list	 env;
	char		*workdir;	/* normalized, absolute */
	int		 tty;
	int		 stdin_open;
	uint32_t	 cols, rows;	/* 0: Docker's default */
};

/* DOCKER_PROCESS_STARTED: Docker's exec id and the PID in the sandbox. */
struct docker_process_started {
	char		*exec_id;	/* 64 hex */
	int64_t		 pid;		/* > 0 */
};

/* DOCKER_PROCESS_SIGNAL: to the group of pid (tree: every descendant). */
struct docker_process_signal {
	char		*id;		/* sandbox id */
	int64_t		 pid;
	uint32_t	 signo;		/* one of process_signal_number()'s */
	int		 tree;		/* stop and SIGKILL the whole tree */
};

/* DOCKER_PROCESS_INSPECT and DOCKER_PROCESS_RESIZE name an exec. */
struct docker_process_exec {
	char		*id;		/* sandbox id */
	char		*exec_id;
	uint32_t	 cols, rows;	/* RESIZE only; 0 in an INSPECT */
};

/* DOCKER_PROCESS_STATE: what Docker says of the exec. */
struct docker_process_state {
	int		 exists;	/* 0: Docker does not know it (404) */
	int		 running;
	int		 has_exit_code;
	int64_t		 exit_code;
};

void	msg_put_process_request(struct msgw *, const struct process_request *);
int	msg_get_process_request(const struct imsg *, struct process_request *);
void	process_request_free(struct process_request *);

void	msg_put_process_info(struct msgw *, const struct process_info *);
int	msg_get_process_info(const struct imsg *, struct process_info *);
void	process_info_free(struct process_info *);

void	msg_put_process_ref(struct msgw *, const struct process_ref *);
int	msg_get_process_ref(const struct imsg *, struct process_ref *);
void	process_ref_free(struct process_ref *);

void	msg_put_process_output(struct msgw *, const struct process_output *);
int	msg_get_process_output(const struct imsg *, struct process_output *);
void	msg_put_process_stdin(struct msgw *, const struct process_stdin *);
int	msg_get_process_stdin(const struct imsg *, struct process_stdin *);
void	msg_put_process_signal(struct msgw *, const struct process_signal *);
int	msg_get_process_signal(const struct imsg *, struct process_signal *);
void	msg_put_process_resize(struct msgw *, const struct process_resize *);
int	msg_get_process_resize(const struct imsg *, struct process_resize *);

void	msg_put_docker_process(struct msgw *, const struct docker_process *);
int	msg_get_docker_process(const struct imsg *, struct docker_process *);
void	docker_process_free(struct docker_process *);

void	msg_put_docker_process_started(struct msgw *,
	    const struct docker_process_started *);
int	msg_get_docker_process_started(const struct imsg *,
	    struct docker_process_started *);

void	msg_put_docker_process_signal(struct msgw *,
	    const struct docker_process_signal *);
int	msg_get_docker_process_signal(const struct imsg *,
	    struct docker_process_signal *);

void	msg_put_docker_process_exec(struct msgw *,
	    const struct docker_process_exec *);
int	msg_get_docker_process_exec(const struct imsg *,
	    struct docker_process_exec *);
void	docker_process_exec_free(struct docker_process_exec *);

void	msg_put_docker_process_state(struct msgw *,
	    const struct docker_process_state *);
int	msg_get_docker_process_state(const struct imsg *,
	    struct docker_process_state *);

/*
 * The event stream of a PROCESS_OUTPUT pipe (managerd -> apid).  Each
 * event is a 16-byte header, then its payload:
 *
 *	u8 type, 3 zero bytes, u32 payload length, u64 value (big-endian)
 *
 * PEV_STDOUT, PEV_STDERR: 1..PEV_DATA_MAX bytes of output; value is its
 *	seq, the count of output bytes (both streams together) up to and
 *	including this event's last byte.  So `after` is the last seq a
 *	client saw, seqs rise strictly, and the next event's seq minus its
 *	length is where it starts.
 * PEV_GAP: no payload; value is the number of bytes dropped between the
 *	reader's `after` and the next event (the ring no longer reaches
 *	back that far).
 * PEV_EXIT: PEV_EXIT_LEN bytes: u8 status (enum process_status), u8
 *	has_exit_code, 6 zero bytes, i64 exit code, u64 milliseconds of
 *	the end on the wall clock (0: unknown); value is the last seq.
 *	Always last; after it managerd closes the pipe.  A pipe that ends
 *	without it: the process runs on (follow was false) or the reader
 *	was cut off.
 */
#define PEV_HEADER_LEN	16
#define PEV_DATA_MAX	(32 * 1024)
#define PEV_EXIT_LEN	24

enum pev_type {
	PEV_STDOUT = 1,
	PEV_STDERR = 2,
	PEV_GAP = 3,
	PEV_EXIT = 4
};

struct pev_exit {
	enum process_status status;
	int		 has_exit_code;
	int64_t		 exit_code;
	uint64_t	 ended_at_ms;
};

/* Header (and for PEV_EXIT, payload) into buf; returns bytes written. */
size_t	pev_header(unsigned char buf[PEV_HEADER_LEN], enum pev_type,
	    uint32_t len, uint64_t value);
size_t	pev_exit_event(unsigned char buf[PEV_HEADER_LEN + PEV_EXIT_LEN],
	    uint64_t last_seq, const struct pev_exit *);

/*
 * The reader: bytes in as they come, whole events out (a data event's
 * bytes all at once, so a UTF-8 character is never split by the pipe).  A malformed
 * stream (an unknown type, a length out of bounds, bytes after the exit,
 * nonzero padding) makes feed return -1; so does the callback's -1.
 */
typedef int	(*pev_cb)(void *arg, enum pev_type, uint64_t value,
		    const unsigned char *data, size_t len,
		    const struct pev_exit *exit);
struct pev_parser {
	unsigned char	 head[PEV_HEADER_LEN];
	size_t		 head_len;
	enum pev_type	 type;
	uint32_t	 left;		/* payload bytes still to come */
	uint64_t	 value;
	unsigned char	 data[PEV_DATA_MAX];	/* a data event, whole */
	size_t		 data_len;
	int		 ended;		/* the exit came */
	int		 failed;
	uint64_t	 last_seq;	/* seqs must rise */
};
void	pev_parser_init(struct pev_parser *);
int	pev_parser_feed(struct pev_parser *, const unsigned char *, size_t,
	    pev_cb, void *);
/* 1 if the stream stopped between two events (an EOF there is clean). */
int	pev_parser_clean(const struct pev_parser *);

#endif /* AS_PROCESS_MSG_H */
