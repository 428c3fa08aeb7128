/*
 * Process records (process.h): processes/<id>.json, written atomically
 * as every record here is (store_file.c), with store_json.c's string
 * encoder and strict parser.  They hold what a restart needs to tell the
 * truth about a process and still signal it (its exec id and PID), and
 * the digest of the request that started it (for client_id retries),
 * never the request's environment: it may hold secrets.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "format.h"
#include "log.h"
#include "managerd.h"
#include "process.h"

#define JSON_SUFFIX	".json"
#define TMP_SUFFIX	".json.tmp"
#define PATH_LEN	(sizeof(PROCESS_DIR) + PROCESS_ID_LEN + 16)

void
process_record_free(struct process_record *r)
{
	msg_free_argv(r->argv);
	free(r->workdir);
	free(r->client_id);
	r->argv = NULL;
	r->workdir = NULL;
	r->client_id = NULL;
}

/* --- writing -------------------------------------------------------------- */

static void
put_key(struct sbuf *b, const char *key)
{
	sbuf_puts(b, b->len > 1 ? ",\n  " : "\n  ");
	store_json_put_string(b, key);
	sbuf_puts(b, ": ");
}

static void
put_num(struct sbuf *b, const char *key, double v, int present)
{
	char	 num[FORMAT_PYFLOAT_LEN];

	put_key(b, key);
	if (!present || format_pyfloat(v, num, sizeof(num)) == NULL)
		sbuf_puts(b, "null");
	else
		sbuf_puts(b, num);
}

static void
put_int(struct sbuf *b, const char *key, int64_t v, int present)
{
	char	 num[32];

	put_key(b, key);
	snprintf(num, sizeof(num), "%" PRId64, v);
	sbuf_puts(b, present ? num : "null");
}

static void
put_str(struct sbuf *b, const char *key, const char *v)
{
	put_key(b, key);
	if (v == NULL)
		sbuf_puts(b, "null");
	else
		store_json_put_string(b, v);
}

static void
put_argv(struct sbuf *b, const struct process_record *r)
{
	size_t	 i;

	put_key(b, "argv");
	sbuf_puts(b, "[");
	for (i = 0; i < r->argc; i++) {
		sbuf_puts(b, i > 0 ? ", " : "");
		store_json_put_string(b, r->argv[i]);
	}
	sbuf_puts(b, "]");
}

/* Keys in sorted order, as every record here. */
char *
store_process_to_json(const struct process_record *r)
{
	struct sbuf	 b;

	memset(&b, 0, sizeof(b));
	sbuf_puts(&b, "{");
	put_argv(&b, r);
	put_str(&b, "client_id", r->client_id);
	put_int(&b, "cols", r->cols, 1);
	put_str(&b, "digest", r->digest);
	put_num(&b, "ended_at", r->ended_at, r->has_ended_at);
	put_str(&b, "exec_id", r->exec_id);
	put_int(&b, "exit_code", r->exit_code, r->has_exit_code);
	put_str(&b, "id", r->id);
	put_int(&b, "output_bytes", (int64_t)r->output_bytes, 1);
	put_int(&b, "pid", r->pid, 1);
	put_int(&b, "rows", r->rows, 1);
	put_int(&b, "running", r->running, 1);
	put_str(&b, "sandbox_id", r->sandbox_id);
	put_int(&b, "shell", r->shell, 1);
	put_num(&b, "started_at", r->started_at, 1);
	put_str(&b, "status", process_status_name(r->status));
	put_int(&b, "stdin", r->stdin_open, 1);
	put_num(&b, "timeout_seconds", r->timeout_seconds, r->has_timeout);
	put_int(&b, "tty", r->tty, 1);
	put_str(&b, "workdir", r->workdir);
	sbuf_puts(&b, "\n}");
	if (b.failed) {
		free(b.p);
		errno = b.failed;
		return NULL;
	}
	return b.p;
}

int
store_process_write(int dirfd, const struct process_record *r)
{
	char	 tmp[PATH_LEN], dst[PATH_LEN];
	char	*text;
	int	 ret, saved;

	if (!id_is_process(r->id)) {
		errno = EINVAL;
		return -1;
	}
	if (mkdirat(dirfd, PROCESS_DIR, 0700) == -1 && errno != EEXIST)
		return -1;
	if ((text = store_process_to_json(r)) == NULL)
		return -1;
	(void)snprintf(tmp, sizeof(tmp), PROCESS_DIR "/%s" TMP_SUFFIX, r->id);
	(void)snprintf(dst, sizeof(dst), PROCESS_DIR "/%s" JSON_SUFFIX, r->id);
	ret = store_write_file(dirfd, PROCESS_DIR, tmp, dst, text);
	saved = errno;
	free(text);
	errno = saved;
	return ret;
}

int
store_process_remove(int dirfd, const char *id)
{
	char	 dst[PATH_LEN];

	if (!id_is_process(id)) {
		errno = EINVAL;
		return -1;
	}
	(void)snprintf(dst, sizeof(dst), PROCESS_DIR "/%s" JSON_SUFFIX, id);
	return unlinkat(dirfd, dst, 0);
}

/* --- reading -------------------------------------------------------------- */

static int
get_nullable_num(struct json_object *o, const char *key, double *v,
    int *present)
{
	struct json_object	*x;

	if (!json_object_object_get_ex(o, key, &x))
		return -1;
	if ((*present = x != NULL))
		return store_json_get_double(o, key, v);
	return 0;
}

static int
get_nullable_int(struct json_object *o, const char *key, int64_t *v,
    int *present)
{
	struct json_object	*x;

	if (!json_object_object_get_ex(o, key, &x))
		return -1;
	if ((*present = x != NULL))
		return store_json_get_int(o, key, v);
	return 0;
}

static int
get_flag(struct json_object *o, const char *key, int *flag)
{
	int64_t	 v;

	if (store_json_get_int(o, key, &v) == -1 || (v != 0 && v != 1))
		return -1;
	*flag = (int)v;
	return 0;
}

static int
get_size(struct json_object *o, const char *key, uint32_t *v)
{
	int64_t	 n;

	if (store_json_get_int(o, key, &n) == -1 || n < 0 ||
	    n > PROCESS_TTY_MAX)
		return -1;
	*v = (uint32_t)n;
	return 0;
}

static int
get_fixed(struct json_object *o, const char *key, char *out, size_t len)
{
	char	*s;

	if ((s = store_json_get_string(o, key, len - 1)) == NULL)
		return -1;
	strlcpy(out, s, len);
	free(s);
	return 0;
}

static int
get_argv(struct json_object *o, struct process_record *r)
{
	struct json_object	*a, *v;
	size_t			 i, n;

	if (!json_object_object_get_ex(o, "argv", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    (n = json_object_array_length(a)) > MSG_MAX_ARGC ||
	    (r->argv = calloc(n + 1, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_string) ||
		    (size_t)json_object_get_string_len(v) > MSG_MAX_ARG ||
		    (r->argv[i] = strdup(json_object_get_string(v))) == NULL)
			return -1;
	}
	r->argc = n;
	return 0;
}

static int
get_status(struct json_object *o, struct process_record *r)
{
	char	*s;
	int	 i, ret = -1;

	if ((s = store_json_get_string(o, "status", 16)) == NULL)
		return -1;
	for (i = PROCESS_RUNNING; i <= PROCESS_STATUS_MAX; i++)
		if (strcmp(s, process_status_name((enum process_status)i)) ==
		    0) {
			r->status = (enum process_status)i;
			ret = 0;
		}
	free(s);
	return ret;
}

static int
get_record(struct json_object *o, void *arg)
{
	struct process_record	*r = arg;
	struct json_object	*v;
	int64_t			 n;

	if (get_fixed(o, "id", r->id, sizeof(r->id)) == -1 ||
	    get_fixed(o, "sandbox_id", r->sandbox_id,
	    sizeof(r->sandbox_id)) == -1 ||
	    get_fixed(o, "digest", r->digest, sizeof(r->digest)) == -1 ||
	    get_fixed(o, "exec_id", r->exec_id, sizeof(r->exec_id)) == -1 ||
	    get_argv(o, r) == -1 || get_status(o, r) == -1 ||
	    (r->workdir = store_json_get_string(o, "workdir",
	    MSG_MAX_PATH + 16)) == NULL ||
	    get_flag(o, "shell", &r->shell) == -1 ||
	    get_flag(o, "tty", &r->tty) == -1 ||
	    get_flag(o, "stdin", &r->stdin_open) == -1 ||
	    get_flag(o, "running", &r->running) == -1 ||
	    get_size(o, "cols", &r->cols) == -1 ||
	    get_size(o, "rows", &r->rows) == -1 ||
	    store_json_get_int(o, "pid", &r->pid) == -1 ||
	    store_json_get_int(o, "output_bytes", &n) == -1 || n < 0 ||
	    store_json_get_double(o, "started_at", &r->started_at) == -1 ||
	    get_nullable_num(o, "ended_at", &r->ended_at,
	    &r->has_ended_at) == -1 ||
	    get_nullable_num(o, "timeout_seconds", &r->timeout_seconds,
	    &r->has_timeout) == -1 ||
	    get_nullable_int(o, "exit_code", &r->exit_code,
	    &r->has_exit_code) == -1 ||
	    !json_object_object_get_ex(o, "client_id", &v))
		return -1;
	r->output_bytes = (uint64_t)n;
	if (v != NULL && (r->client_id = store_json_get_string(o, "client_id",
	    PROCESS_CLIENT_ID_MAX)) == NULL)
		return -1;
	if (!id_is_process(r->id) || !id_is_sandbox(r->sandbox_id) ||
	    (r->shell && r->argc != 1) || r->argc == 0)
		return -1;
	return 0;
}

int
store_process_from_json(const char *text, struct process_record *r)
{
	memset(r, 0, sizeof(*r));
	if (store_json_read(text, get_record, r) == -1) {
		process_record_free(r);
		return -1;
	}
	return 0;
}

static void
load_one(int dirfd, const char *name,
    void (*cb)(struct process_record *, void *), void *arg)
{
	struct process_record	*r;
	char			 path[PATH_LEN + 32];
	char			*text;

	(void)snprintf(path, sizeof(path), PROCESS_DIR "/%s", name);
	if (store_read_file(dirfd, path, &text) != STORE_READ_OK)
		return;
	if ((r = malloc(sizeof(*r))) == NULL ||
	    store_process_from_json(text, r) == -1 ||
	    strlen(name) != PROCESS_ID_LEN + sizeof(JSON_SUFFIX) - 1 ||
	    strncmp(name, r->id, PROCESS_ID_LEN) != 0) {
		log_warnx("removing unreadable process record %s", path);
		(void)unlinkat(dirfd, path, 0);
		if (r != NULL)
			process_record_free(r);
		free(r);
	} else
		cb(r, arg);
	free(text);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in processes/ (none if it is missing); -1 with errno. */
static int
list_names(int dirfd, char ***namesp, size_t *countp)
{
	DIR		*d;
	struct dirent	*de;
	char		**names = NULL, **nn;
	size_t		 count = 0;
	int		 fd, saved;

	*namesp = NULL;
	*countp = 0;
	fd = openat(dirfd, PROCESS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	/* A name left out would be a process forgotten: fail instead. */
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		if (de->d_name[0] == '.')
			continue;
		if ((nn = reallocarray(names, count + 1,
		    sizeof(*names))) == NULL ||
		    (nn[count] = strdup(de->d_name)) == NULL) {
			if (nn != NULL)
				names = nn;
			goto fail;
		}
		names = nn;
		count++;
	}
	if (errno != 0)
		goto fail;
	closedir(d);
	if (count > 0)
		qsort(names, count, sizeof(*names), name_cmp);
	*namesp = names;
	*countp = count;
	return 0;
fail:
	saved = errno;
	while (count > 0)
		free(names[--count]);
	free(names);
	closedir(d);
	errno = saved;
	return -1;
}

int
store_process_load_all(int dirfd,
    void (*cb)(struct process_record *, void *), void *arg)
{
	char		**names, path[PATH_LEN + 32];
	size_t		 count, i, n;

	if (list_names(dirfd, &names, &count) == -1)
		return -1;
	for (i = 0; i < count; i++) {
		n = strlen(names[i]);
		if (n > sizeof(TMP_SUFFIX) &&
		    strcmp(names[i] + n - strlen(TMP_SUFFIX), TMP_SUFFIX) ==
		    0) {
			(void)snprintf(path, sizeof(path), PROCESS_DIR "/%s",
			    names[i]);
			(void)unlinkat(dirfd, path, 0);
		} else
			load_one(dirfd, names[i], cb, arg);
		free(names[i]);
	}
	free(names);
	return 0;
}
