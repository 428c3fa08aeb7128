/*
 * agent-sandbox cp SRC DST: one file between here and a sandbox, in
 * docker cp's notation: exactly one side is SANDBOX:PATH, "-" is stdin or
 * stdout.  Uploads keep the local file's permission bits (API.md §4.10);
 * downloads go to a temporary file next to the destination that is
 * renamed over it only when every byte has arrived.  Directories are
 * refused, both here and in the sandbox.  A destination that is a
 * directory (or a remote path ending in '/') gets the source's name.
 * SIGINT, SIGTERM or SIGHUP during a download removes the temporary file
 * before the CLI exits (128 + the signal's number).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CP_SPOOL_BUF	(64 * 1024)

struct remote {
	char	*sandbox;
	char	*path;
};

/* The download's temporary file, for the signal handler. */
static char			 partial[PATH_MAX];
static volatile sig_atomic_t	 partial_set;

/* Async-signal-safe: unlink(2) and _exit(2) only. */
static void
partial_signal(int sig)
{
	if (partial_set)
		(void)unlink(partial);
	_exit(128 + sig);
}

/*
 * Installed before the seccomp filter (which allows no sigaction); a
 * signal that is ignored (nohup) stays ignored.
 */
int
cli_cp_signals(void)
{
	static const int	 sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction	 sa, old;
	size_t			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = partial_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], NULL, &old) == -1)
			return -1;
		if (old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) == -1)
			return -1;
	}
	return 0;
}

static void
partial_forget(void)
{
	partial_set = 0;
}

/*
 * mkostemp on the handler's own copy of the template, marked before the
 * file exists: a signal the moment after it is made (a test's, a user's
 * ^C) then finds its name, where marking it afterwards left it behind.
 * tmp gets the name made.
 */
static int
partial_make(char *tmp)
{
	int	 fd;

	if (strlcpy(partial, tmp, sizeof(partial)) >= sizeof(partial)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	partial_set = 1;
	if ((fd = mkostemp(partial, O_CLOEXEC)) == -1) {
		partial_set = 0;
		return -1;
	}
	memcpy(tmp, partial, strlen(tmp));
	return fd;
}

/* A write error on stdout: quiet when nobody reads it any more. */
static int
stdout_error(const struct rest_error *err)
{
	return err->status == 0 && strcmp(err->code, "io_error") == 0 &&
	    strstr(err->message, strerror(EPIPE)) != NULL;
}

/*
 * SANDBOX:PATH?  A colon with no '/' before it and something on both
 * sides; "./a:b" names a local file.  1 and r filled, 0, or -1.
 */
static int
parse_remote(const char *arg, struct remote *r)
{
	const char	*colon;

	if ((colon = strchr(arg, ':')) == NULL || colon == arg ||
	    memchr(arg, '/', colon - arg) != NULL)
		return 0;
	if ((r->sandbox = strndup(arg, colon - arg)) == NULL ||
	    (r->path = strdup(colon + 1)) == NULL) {
		free(r->sandbox);
		r->sandbox = NULL;
		cli_warn("out of memory");
		return -1;
	}
	return 1;
}

static const char *
base_name(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

static void
report_done(struct cli *cli, const char *path, int64_t size)
{
	json_object	*doc;

	if (!cli->json)
		return;
	doc = json_object_new_object();
	if (cli_put(doc, "path", json_object_new_string(path)) == 0 &&
	    cli_put(doc, "size", json_object_new_int64(size)) == 0)
		cli_print_json(doc);
	json_object_put(doc);
}

/* "/v1/sandboxes/SB/files?path=P[&mode=M]", malloc'd. */
static char *
files_path(const struct remote *r, const char *path, const char *mode)
{
	char	*esc, *suffix, *res;
	int	 n;

	if ((esc = rest_escape(path)) == NULL) {
		cli_warn("out of memory");
		return NULL;
	}
	if (mode != NULL)
		n = asprintf(&suffix, "/files?path=%s&mode=%s", esc, mode);
	else
		n = asprintf(&suffix, "/files?path=%s", esc);
	free(esc);
	if (n == -1) {
		cli_warn("out of memory");
		return NULL;
	}
	res = cli_resource("sandboxes", r->sandbox, suffix);
	free(suffix);
	return res;
}

/*
 * Standard input of unknown length, copied into an unlinked temporary
 * file so that the upload can declare its length.  The descriptor, or
 * -1.
 */
static int
spool_stdin(uint64_t *len)
{
	FILE	*tmp;
	char	*buf;
	ssize_t	 n;
	int	 fd;

	*len = 0;
	if ((buf = malloc(CP_SPOOL_BUF)) == NULL ||
	    (tmp = tmpfile()) == NULL) {
		cli_warn("cp: cannot buffer stdin: %s", strerror(errno));
		free(buf);
		return -1;
	}
	for (;;) {
		if ((n = read(STDIN_FILENO, buf, CP_SPOOL_BUF)) == -1) {
			if (errno == EINTR)
				continue;
			cli_warn("cp: reading stdin: %s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if (fwrite(buf, 1, n, tmp) != (size_t)n) {
			cli_warn("cp: buffering stdin: %s", strerror(errno));
			goto fail;
		}
		*len += n;
	}
	free(buf);
	if (fflush(tmp) == EOF || (fd = dup(fileno(tmp))) == -1) {
		cli_warn("cp: buffering stdin: %s", strerror(errno));
		fclose(tmp);
		return -1;
	}
	fclose(tmp);
	if (lseek(fd, 0, SEEK_SET) == -1) {
		cli_warn("cp: buffering stdin: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
 fail:
	free(buf);
	fclose(tmp);
	return -1;
}

/* The local source: a descriptor, its length and permission bits. */
static int
open_source(const char *src, uint64_t *len, char mode[8])
{
	struct stat	 st;
	off_t		 pos;
	int		 fd;

	if (strcmp(src, "-") == 0) {
		strlcpy(mode, "644", 8);
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
		    (pos = lseek(STDIN_FILENO, 0, SEEK_CUR)) != -1 &&
		    pos <= st.st_size) {
			*len = st.st_size - pos;
			if ((fd = dup(STDIN_FILENO)) == -1)
				cli_warn("cp: stdin: %s", strerror(errno));
			return fd;
		}
		return spool_stdin(len);
	}
	if (stat(src, &st) == -1) {
		cli_warn("cp: %s: %s", src, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		cli_warn("cp: %s is a directory; only single files can be "
		    "copied", src);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_warn("cp: %s is not a regular file", src);
		return -1;
	}
	if ((fd = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1 ||
	    fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		cli_warn("cp: %s: %s", src, fd == -1 ? strerror(errno) :
		    "changed while being opened");
		if (fd != -1)
			close(fd);
		return -1;
	}
	*len = st.st_size;
	snprintf(mode, 8, "%03o", (unsigned int)(st.st_mode & 0777));
	return fd;
}

static int
upload(struct cli *cli, const char *src, struct remote *r)
{
	struct rest_error	 err;
	json_object		*info = NULL;
	uint64_t		 len;
	int64_t			 last = -1;
	char			 mode[8], *target = NULL, *path = NULL;
	int			 fd, tty, ret = CLI_EXIT_FAIL;

	if ((fd = open_source(src, &len, mode)) == -1)
		return CLI_EXIT_FAIL;
	if (*r->path == '\0' || r->path[strlen(r->path) - 1] == '/') {
		if (strcmp(src, "-") == 0) {
			cli_warn("cp: name the file that stdin goes to");
			goto out;
		}
		if (asprintf(&target, "%s%s", r->path, base_name(src)) == -1) {
			target = NULL;
			cli_warn("out of memory");
			goto out;
		}
	} else if ((target = strdup(r->path)) == NULL) {
		cli_warn("out of memory");
		goto out;
	}
	if ((path = files_path(r, target, mode)) == NULL)
		goto out;
	tty = isatty(STDERR_FILENO);
	if (rest_put_from_fd(&cli->rc, path, fd, len,
	    tty ? cli_progress : NULL, &last, &info, &err) == -1) {
		if (tty)
			cli_progress_done(&last);
		cli_api_error(&err);
		goto out;
	}
	if (tty)
		cli_progress_done(&last);
	if (cli->json)
		cli_print_json(info);
	ret = CLI_EXIT_OK;
 out:
	json_object_put(info);
	free(path);
	free(target);
	close(fd);
	return ret;
}

/* A 400 "<path> is a directory" from the server, said as cp says it. */
static int
download_error(const struct rest_error *err, const char *src)
{
	const char	*suffix = " is a directory";
	size_t		 mlen, slen;

	mlen = strlen(err->message);
	slen = strlen(suffix);

	if (err->status == 400 && mlen > slen &&
	    strcmp(err->message + mlen - slen, suffix) == 0) {
		cli_warn("cp: %s is a directory; only single files can be "
		    "copied", src);
		return CLI_EXIT_FAIL;
	}
	return cli_api_error(err);
}

/*
 * Where a download lands: DST itself, or DST/<remote name> when DST is a
 * directory.  malloc'd, or NULL.
 */
static char *
download_target(const char *dst, const char *remote_path)
{
	struct stat	 st;
	char		*t;
	size_t		 len = strlen(dst);

	if (stat(dst, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (*base_name(remote_path) == '\0') {
			cli_warn("cp: %s names no file", remote_path);
			return NULL;
		}
		if (asprintf(&t, "%s%s%s", dst, dst[len - 1] == '/' ? "" : "/",
		    base_name(remote_path)) == -1) {
			cli_warn("out of memory");
			return NULL;
		}
		return t;
	}
	if (len > 0 && dst[len - 1] == '/') {
		cli_warn("cp: %s is not a directory", dst);
		return NULL;
	}
	if ((t = strdup(dst)) == NULL)
		cli_warn("out of memory");
	return t;
}

/*
 * The mode a new file gets: an existing file's own, else 0666 less the
 * umask, as cp(1) does.
 */
static mode_t
target_mode(const char *target)
{
	struct stat	st;
	mode_t		mask;

	if (stat(target, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
}

static int
download(struct cli *cli, struct remote *r, const char *src,
    const char *dst)
{
	struct rest_error	 err;
	int64_t			 n, last = -1;
	char			*path, *target = NULL, *tmp = NULL, *slash;
	int			 fd = -1, tty, closed, ret = CLI_EXIT_FAIL;

	if ((path = files_path(r, r->path, NULL)) == NULL)
		return CLI_EXIT_FAIL;
	tty = isatty(STDERR_FILENO);
	if (strcmp(dst, "-") == 0) {
		tty = tty && !isatty(STDOUT_FILENO);
		n = rest_get_to_fd(&cli->rc, path, STDOUT_FILENO, 0,
		    tty ? cli_progress : NULL, &last, &err);
		if (tty)
			cli_progress_done(&last);
		free(path);
		if (n == -1 && stdout_error(&err))
			return CLI_EXIT_PIPE;
		return n == -1 ? download_error(&err, src) : CLI_EXIT_OK;
	}
	if ((target = download_target(dst, r->path)) == NULL)
		goto out;
	slash = strrchr(target, '/');
	if (asprintf(&tmp, "%.*s.%s.XXXXXX",
	    slash != NULL ? (int)(slash - target + 1) : 0, target,
	    base_name(target)) == -1) {
		tmp = NULL;
		cli_warn("out of memory");
		goto out;
	}
	if ((fd = partial_make(tmp)) == -1) {
		cli_warn("cp: %s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	n = rest_get_to_fd(&cli->rc, path, fd, 0, tty ? cli_progress : NULL,
	    &last, &err);
	if (tty)
		cli_progress_done(&last);
	if (n == -1) {
		download_error(&err, src);
		goto out;
	}
	if (fchmod(fd, target_mode(target)) == -1) {
		cli_warn("cp: %s: %s", tmp, strerror(errno));
		goto out;
	}
	/* close(2) reports a late write error (NFS, a full disk). */
	closed = close(fd);
	fd = -1;
	if (closed == -1) {
		cli_warn("cp: %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, target) == -1) {
		cli_warn("cp: %s: %s", target, strerror(errno));
		goto out;
	}
	partial_forget();
	free(tmp);
	tmp = NULL;
	report_done(cli, target, n);
	ret = CLI_EXIT_OK;
 out:
	if (fd != -1)
		close(fd);
	if (tmp != NULL) {
		partial_forget();
		unlink(tmp);
		free(tmp);
	}
	free(target);
	free(path);
	return ret;
}

int
cli_cp(struct cli *cli, int argc, char **argv)
{
	struct remote	 src, dst;
	int		 i, s, d, ret;

	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	if ((i = cli_options(argc, argv)) == -1 || argc - i != 2)
		return cli_usage(argv[0]);
	if ((s = parse_remote(argv[i], &src)) == -1 ||
	    (d = parse_remote(argv[i + 1], &dst)) == -1) {
		ret = CLI_EXIT_FAIL;
		goto out;
	}
	if (s == d) {
		cli_warn("cp: exactly one of SRC and DST must be "
		    "SANDBOX:PATH");
		ret = cli_usage(argv[0]);
	} else if (s && (*src.path == '\0' || cli_id(argv[0],
	    src.sandbox) == -1))
		ret = cli_usage(argv[0]);
	else if (d && cli_id(argv[0], dst.sandbox) == -1)
		ret = cli_usage(argv[0]);
	else if (s)
		ret = download(cli, &src, argv[i], argv[i + 1]);
	else
		ret = upload(cli, argv[i], &dst);
 out:
	free(src.sandbox);
	free(src.path);
	free(dst.sandbox);
	free(dst.path);
	return ret;
}
