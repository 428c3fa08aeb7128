/*
 * What the CLI verbs print: tables and key/value lines for people, the
 * server's JSON for --json, and "agent-sandbox: ..." lines on stderr for
 * failures.  Progress of a long copy goes to stderr, and only when that
 * is a terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "utf8.h"

#define CLI_TABLE_COLS	7
#define CLI_COMMAND_CELL 64	/* a command in ps's table, cut */

void
cli_print_json(json_object *o)
{
	const char	*s;

	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	printf("%s\n", s != NULL ? s : "null");
	fflush(stdout);
}

void
cli_warn(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fprintf(stderr, "agent-sandbox: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

int
cli_write_all(int fd, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int
cli_api_error(const struct rest_error *e)
{
	char	buf[sizeof(e->code) + sizeof(e->message) + 32];

	rest_error_string(e, buf, sizeof(buf));
	cli_warn("%s", buf);
	return CLI_EXIT_FAIL;
}

/* A field as text: strings as they are, "-" for null or absent. */
const char *
cli_str(json_object *o, const char *key)
{
	json_object	*v;
	const char	*s;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return "-";
	if (json_object_is_type(v, json_type_string))
		s = json_object_get_string(v);
	else
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	return s != NULL ? s : "-";
}

/* "1.5MiB": sizes in a table. */
void
cli_human_size(int64_t n, char *buf, size_t len)
{
	static const char	*units[] = { "KiB", "MiB", "GiB", "TiB" };
	double			 v = (double)n;
	size_t			 i;

	if (n < 1024) {
		snprintf(buf, len, "%dB", (int)n);
		return;
	}
	for (i = 0, v /= 1024; v >= 1024 && i + 1 < 4; i++)
		v /= 1024;
	snprintf(buf, len, "%.1f%s", v, units[i]);
}

/*
 * Columns padded to their widest cell, two spaces apart, the last one
 * not padded.  cells holds nrow rows of ncol strings.
 */
void
cli_table(const char *const *head, size_t ncol, const char **cells,
    size_t nrow)
{
	size_t	width[CLI_TABLE_COLS], r, c, w;

	for (c = 0; c < ncol; c++)
		width[c] = strlen(head[c]);
	for (r = 0; r < nrow; r++)
		for (c = 0; c < ncol; c++)
			if ((w = strlen(cells[r * ncol + c])) > width[c])
				width[c] = w;
	for (r = 0; r <= nrow; r++) {
		for (c = 0; c + 1 < ncol; c++)
			printf("%-*s  ", (int)width[c],
			    r == 0 ? head[c] : cells[(r - 1) * ncol + c]);
		printf("%s\n", r == 0 ? head[c] : cells[(r - 1) * ncol + c]);
	}
	fflush(stdout);
}

/* "running", or "stopped (oom_killed)" with the server's reason. */
static void
status_text(json_object *sb, char *buf, size_t len)
{
	json_object	*v;

	if (json_object_object_get_ex(sb, "status_reason", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(buf, len, "%s (%s)", cli_str(sb, "status"),
		    json_object_get_string(v));
	else
		snprintf(buf, len, "%s", cli_str(sb, "status"));
}

void
cli_sandbox_table(json_object **sb, size_t n)
{
	static const char *const	 head[] = { "ID", "STATUS", "IMAGE",
	    "EXPIRES", "SOURCE", "LABELS" };
	const char			**cells;
	char				**labels, (*status)[64];
	size_t				  i;

	cells = calloc(n + 1, sizeof(*cells) * 6);
	labels = calloc(n + 1, sizeof(*labels));
	status = calloc(n + 1, sizeof(*status));
	if (cells == NULL || labels == NULL || status == NULL) {
		free(cells);
		free(labels);
		free(status);
		cli_warn("out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		cells[i * 6] = cli_str(sb[i], "id");
		status_text(sb[i], status[i], sizeof(status[i]));
		cells[i * 6 + 1] = status[i];
		cells[i * 6 + 2] = cli_str(sb[i], "image");
		cells[i * 6 + 3] = cli_str(sb[i], "expires_at");
		cells[i * 6 + 4] = cli_str(sb[i], "source_snapshot_id");
		labels[i] = cli_labels_text(sb[i]);
		cells[i * 6 + 5] = labels[i] != NULL ? labels[i] : "?";
	}
	cli_table(head, 6, cells, n);
	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	free(status);
	free(cells);
}

/*
 * A new sandbox (create, fork): its ID alone on stdout, so that
 * SB=$(agent-sandbox create) works, and a short table after it when
 * stdout is a terminal.
 */
void
cli_sandbox_created(struct cli *cli, json_object *sb)
{
	if (cli->json) {
		cli_print_json(sb);
		return;
	}
	printf("%s\n", cli_str(sb, "id"));
	if (isatty(STDOUT_FILENO)) {
		printf("\n");
		cli_sandbox_table(&sb, 1);
	}
	fflush(stdout);
}

void
cli_snapshot_table(json_object **snap, size_t n)
{
	static const char *const	 head[] = { "ID", "SANDBOX", "NAME",
	    "SIZE", "CREATED" };
	const char			**cells;
	char				(*sizes)[32];
	json_object			*v;
	size_t				  i;

	cells = calloc(n + 1, sizeof(*cells) * 5);
	sizes = calloc(n + 1, sizeof(*sizes));
	if (cells == NULL || sizes == NULL) {
		cli_warn("out of memory");
		free(cells);
		free(sizes);
		return;
	}
	for (i = 0; i < n; i++) {
		if (json_object_object_get_ex(snap[i], "size_bytes", &v) &&
		    json_object_is_type(v, json_type_int))
			cli_human_size(json_object_get_int64(v), sizes[i],
			    sizeof(sizes[i]));
		else
			strlcpy(sizes[i], "-", sizeof(sizes[i]));
		cells[i * 5] = cli_str(snap[i], "id");
		cells[i * 5 + 1] = cli_str(snap[i], "sandbox_id");
		cells[i * 5 + 2] = cli_str(snap[i], "name");
		cells[i * 5 + 3] = sizes[i];
		cells[i * 5 + 4] = cli_str(snap[i], "created_at");
	}
	cli_table(head, 5, cells, n);
	free(cells);
	free(sizes);
}

/* An argument as a shell would need it: bare, or in single quotes. */
static void
quoted(char *buf, size_t len, const char *arg)
{
	char		 one[2] = "";
	const char	*p;

	if (*arg != '\0' && strspn(arg, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%") == strlen(arg)) {
		strlcat(buf, arg, len);
		return;
	}
	strlcat(buf, "'", len);
	for (p = arg; *p != '\0'; p++) {
		one[0] = *p;
		strlcat(buf, *p == '\'' ? "'\\''" : one, len);
	}
	strlcat(buf, "'", len);
}

/*
 * A process's command for the table: a shell line as it is, an argv
 * quoted, on one line without control characters (what a sandbox
 * started may not drive the terminal), cut to the cell.
 */
static void
command_cell(json_object *proc, char *cell, size_t len)
{
	char		 buf[CLI_COMMAND_CELL * 4];
	json_object	*cmd;
	const char	*arg;
	size_t		 i, n;
	char		*p;

	buf[0] = '\0';
	if (!json_object_object_get_ex(proc, "command", &cmd))
		strlcpy(buf, "-", sizeof(buf));
	else if (!json_object_is_type(cmd, json_type_array))
		strlcpy(buf, cli_str(proc, "command"), sizeof(buf));
	else
		for (i = 0, n = json_object_array_length(cmd); i < n; i++) {
			if (i > 0)
				strlcat(buf, " ", sizeof(buf));
			arg = json_object_get_string(
			    json_object_array_get_idx(cmd, i));
			quoted(buf, sizeof(buf), arg != NULL ? arg : "null");
		}
	for (p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
			*p = '?';
	n = strlen(buf);
	if (n < len) {
		memcpy(cell, buf, n + 1);
		return;
	}
	n = utf8_cut(buf, len - 4);
	memcpy(cell, buf, n);
	memcpy(cell + n, "...", 4);
}

void
cli_process_table(json_object **proc, size_t n)
{
	static const char *const	 head[] = { "ID", "STATUS", "EXIT",
	    "STARTED", "COMMAND" };
	const char			**cells;
	char				(*cmds)[CLI_COMMAND_CELL];
	size_t				  i;

	cells = calloc(n + 1, sizeof(*cells) * 5);
	cmds = calloc(n + 1, sizeof(*cmds));
	if (cells == NULL || cmds == NULL) {
		cli_warn("out of memory");
		free(cells);
		free(cmds);
		return;
	}
	for (i = 0; i < n; i++) {
		command_cell(proc[i], cmds[i], sizeof(cmds[i]));
		cells[i * 5] = cli_str(proc[i], "id");
		cells[i * 5 + 1] = cli_str(proc[i], "status");
		cells[i * 5 + 2] = cli_str(proc[i], "exit_code");
		cells[i * 5 + 3] = cli_str(proc[i], "started_at");
		cells[i * 5 + 4] = cmds[i];
	}
	cli_table(head, 5, cells, n);
	free(cells);
	free(cmds);
}

/* "key: value", one line per field, in the server's order. */
void
cli_key_values(json_object *o)
{
	char	*labels;

	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "labels") == 0 &&
		    (labels = cli_labels_text(o)) != NULL) {
			printf("%s: %s\n", key, labels);
			free(labels);
		} else
			printf("%s: %s\n", key, cli_str(o, key));
	}
	fflush(stdout);
}

/*
 * rest_progress_cb: "\r<done> / <total> bytes" on stderr, redrawn every
 * 256 KiB and at the end.  arg points to an int64_t: the count drawn
 * last, -1 before the first.
 */
void
cli_progress(uint64_t done, int64_t total, void *arg)
{
	int64_t	*last = arg;

	if (*last >= 0 && done != (uint64_t)total &&
	    done - (uint64_t)*last < 256 * 1024)
		return;
	*last = (int64_t)done;
	if (total >= 0)
		fprintf(stderr, "\r%" PRIu64 " / %" PRId64 " bytes", done,
		    total);
	else
		fprintf(stderr, "\r%" PRIu64 " bytes", done);
}

void
cli_progress_done(void *arg)
{
	int64_t	*last = arg;

	if (*last >= 0)
		fprintf(stderr, "\n");
}

/*
 * One JSON exchange; an API failure is printed.  0 with *out (NULL for
 * a 204) or -1.
 */
int
cli_call(struct cli *cli, const char *method, const char *path,
    json_object *body, json_object **out)
{
	struct rest_error	err;

	*out = NULL;
	if (rest_json(&cli->rc, method, path, body, out, &err) == -1) {
		cli_api_error(&err);
		return -1;
	}
	return 0;
}

/* cli_call for a POST of body to path; it releases both. */
int
cli_post(struct cli *cli, char *path, json_object *body, json_object **out)
{
	int	ret;

	ret = cli_call(cli, "POST", path, body, out);
	json_object_put(body);
	free(path);
	return ret;
}

/*
 * The members of wrapper[key] (a list response), for the tables; NULL
 * and 0 when the response does not have that shape.
 */
json_object **
cli_members(json_object *wrapper, const char *key, size_t *n)
{
	json_object	*arr, **v;
	size_t		 i;

	*n = 0;
	if (!json_object_object_get_ex(wrapper, key, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		cli_warn("the server's answer has no '%s' list", key);
		return NULL;
	}
	*n = json_object_array_length(arr);
	if ((v = calloc(*n + 1, sizeof(*v))) == NULL) {
		cli_warn("out of memory");
		*n = 0;
		return NULL;
	}
	for (i = 0; i < *n; i++)
		v[i] = json_object_array_get_idx(arr, i);
	return v;
}
