/*
 * The agent-sandbox CLI verbs: what agent-sandbox.c dispatches to and
 * what the cli_*.c files share.  Each verb gets its own argv (argv[0] is
 * the verb) with every "--json" before a "--" already taken out, and
 * returns the process exit status: 0, 1 for an API or local failure, 2
 * for a usage error, or a command's own status for exec.
 */
#ifndef AS_CLIENT_CLI_H
#define AS_CLIENT_CLI_H

#include <stdint.h>

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
const char *cli_str(json_object *, const char *key);	/* "-" if absent */
void	cli_sandbox_table(json_object **, size_t);
void	cli_sandbox_created(struct cli *, json_object *);
void	cli_snapshot_table(json_object **, size_t);
void	cli_key_values(json_object *);
void	cli_progress(uint64_t, int64_t, void *);
void	cli_progress_done(void *);

/* Arguments (cli_args.c). */
/* For verbs without options: the first operand's index, or -1. */
int	cli_options(int argc, char **argv);
int	cli_put(json_object *, const char *key, json_object *val);
int	cli_parse_env(json_object *env, const char *kv);
int	cli_parse_int(const char *, long long min, long long max,
	    long long *);
int	cli_parse_number(const char *, double *);
/* "/v1/<collection>/<escaped id><suffix>", malloc'd. */
char	*cli_resource(const char *collection, const char *id,
	    const char *suffix);
/* A sandbox or snapshot ID as given, or a usage error. */
int	cli_id(const char *verb, const char *id);

#endif /* AS_CLIENT_CLI_H */
