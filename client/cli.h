/*
 * The agent-sandbox CLI verbs: what agent-sandbox.c dispatches to and
 * what the cli_*.c files share.  Each verb gets its own argv (argv[0] is
 * the verb) with every "--json" before a "--" already taken out, and
 * returns the process exit status: 0, 1 for an API or local failure, 2
 * for a usage error, or a command's own status for exec.
 */
#ifndef AS_CLIENT_CLI_H
#define AS_CLIENT_CLI_H

#include <signal.h>
#include <stdint.h>
#include <termios.h>

#include <json-c/json.h>

#include "rest.h"

#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2
#define CLI_EXIT_TIMEOUT 124	/* as timeout(1) */
#define CLI_EXIT_PIPE	141	/* stdout's reader went away: 128 + SIGPIPE */

struct cli {
	struct rest_client	 rc;
	int			 json;	/* --json: machine output */
};

struct cli_verb {
	const char	*name;
	int		(*run)(struct cli *, int, char **);
	const char	*usage;		/* options and operands */
	const char	*help;		/* one line */
};

/* The table of verbs, ended by a NULL name (agent-sandbox.c). */
extern const struct cli_verb	cli_verbs[];

const struct cli_verb	*cli_verb_find(const char *);
int	cli_usage(const char *verb);	/* prints to stderr, returns 2 */
int	cli_help(const char *verb);	/* prints to stdout, returns 0 */

/* Verbs. */
int	cli_create(struct cli *, int, char **);
int	cli_ls(struct cli *, int, char **);
int	cli_inspect(struct cli *, int, char **);
int	cli_rm(struct cli *, int, char **);
int	cli_timeout(struct cli *, int, char **);
int	cli_exec(struct cli *, int, char **);
int	cli_cp(struct cli *, int, char **);
int	cli_snapshot(struct cli *, int, char **);
int	cli_snapshots(struct cli *, int, char **);
int	cli_rollback(struct cli *, int, char **);
int	cli_fork(struct cli *, int, char **);
int	cli_snapshot_rm(struct cli *, int, char **);
int	cli_run(struct cli *, int, char **);
int	cli_ps(struct cli *, int, char **);
/* agent-sandbox hash-key: no server, no verb of the table. */
int	hash_key_main(int, char **);
int	cli_logs(struct cli *, int, char **);
int	cli_attach(struct cli *, int, char **);
int	cli_shell(struct cli *, int, char **);
int	cli_kill(struct cli *, int, char **);
int	cli_metrics(struct cli *, int, char **);
int	cli_label(struct cli *, int, char **);
int	cli_stats(struct cli *, int, char **);
int	cli_network(struct cli *, int, char **);
int	cli_network_log(struct cli *, int, char **);
/* --allow ENTRY into *policy, an allowlist from the first (cli_network.c). */
int	cli_allow_add(json_object **policy, const char *entry);
/* cli_labels.c */
int	cli_parse_label(json_object *labels, const char *kv);
int	cli_check_filter(const char *);
int	cli_label_change(json_object *patch, const char *);
char	*cli_labels_text(json_object *sandbox);
void	cli_human_size(int64_t, char *, size_t);	/* "1.5MiB" */
int	cli_delete_each(struct cli *, const char *collection, int, char **);
int	cli_sandbox_update(struct cli *, const char *id, const char *suffix,
	    const char *key, json_object *val);
/* Before the seccomp filter: a signal removes cp's partial download. */
int	cli_cp_signals(void);

/* Output (cli_output.c). */
void	cli_print_json(json_object *);
int	cli_call(struct cli *, const char *method, const char *path,
	    json_object *body, json_object **out);
int	cli_post(struct cli *, char *path, json_object *body,
	    json_object **out);
json_object **cli_members(json_object *, const char *key, size_t *);
int	cli_api_error(const struct rest_error *);	/* returns 1 */
void	cli_warn(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
/* All of p to fd, again after a signal; -1 with errno. */
int	cli_write_all(int fd, const void *p, size_t len);
const char *cli_str(json_object *, const char *key);	/* "-" if absent */
/* Columns padded to their widest cell; cells: nrow rows of ncol (<= 7). */
void	cli_table(const char *const *head, size_t ncol, const char **cells,
	    size_t nrow);
void	cli_sandbox_table(json_object **, size_t);
void	cli_sandbox_created(struct cli *, json_object *);
void	cli_snapshot_table(json_object **, size_t);
void	cli_key_values(json_object *);
void	cli_progress(uint64_t, int64_t, void *);
void	cli_progress_done(void *);

/* The process verbs' operands (cli_process_args.c): 0, or -1 for usage. */
struct cli_start {
	struct rest_process_spec spec;	/* its command and env are ours */
	json_object	*env;
	const char	*sandbox;
	int		 detach;	/* run -d */
};
struct cli_logs {
	const char	*sandbox;
	const char	*process;
	uint64_t	 after;
	int		 follow;
};
struct cli_attach {
	const char	*sandbox;
	const char	*process;
	int		 no_stdin;
};
struct cli_kill {
	const char	*sandbox;
	const char	*process;
	const char	*signal;	/* the API's name */
	int		 delete;
};
int	cli_run_args(int, char **, struct cli_start *);
int	cli_shell_args(int, char **, struct cli_start *);
void	cli_start_free(struct cli_start *);
int	cli_logs_args(int, char **, struct cli_logs *);
int	cli_attach_args(int, char **, struct cli_attach *);
int	cli_kill_args(int, char **, struct cli_kill *);

/* The processes' other shared parts (cli_process.c). */
/* The CLI's exit status for a process's exit event (say why if odd). */
int	cli_process_status(const struct rest_event *);
/* logs' stream: -f and run follow it to the end. */
int	cli_process_logs(struct cli *, const struct cli_logs *);
void	cli_process_table(json_object **, size_t);

/* The terminal and the signals of attach and shell (cli_tty.c). */
struct cli_tty {
	int		 raw;
	struct termios	 saved;
};
int	cli_tty_raw(struct cli_tty *);		/* stdin's */
void	cli_tty_restore(struct cli_tty *);
int	cli_tty_size(int *cols, int *rows);	/* -1: no terminal */
/*
 * Blocks SIGWINCH and every signal that would end the CLI from outside
 * (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, ..., the real-time
 * ones) and catches them; *wait is the mask to wait with, which lets
 * them through.  A fault (SIGSEGV, SIGABRT, ...) restores the terminal
 * before its default action.
 */
int	cli_signals_catch(sigset_t *wait);
/*
 * Lets in the caught signals that are pending: a ppoll that finds an fd
 * ready returns with them still blocked, however long they waited.
 */
void	cli_signals_take(const sigset_t *wait);
int	cli_signal_ended(void);		/* the first ending signal, or 0 */
int	cli_signal_resized(void);	/* 1 once per SIGWINCH */

/* Arguments (cli_args.c). */
/* For verbs without options: the first operand's index, or -1. */
int	cli_options(int argc, char **argv);
int	cli_put(json_object *, const char *key, json_object *val);
int	cli_parse_env(json_object *env, const char *kv);
/* "command": one operand as a shell line, several as an argv; NULL: ENOMEM. */
json_object *cli_command(int argc, char **argv);
int	cli_parse_int(const char *, long long min, long long max,
	    long long *);
int	cli_parse_number(const char *, double *);
/* "/v1/<collection>/<escaped id><suffix>", malloc'd. */
char	*cli_resource(const char *collection, const char *id,
	    const char *suffix);
/* A sandbox or snapshot ID as given, or a usage error. */
int	cli_id(const char *verb, const char *id);

#endif /* AS_CLIENT_CLI_H */
