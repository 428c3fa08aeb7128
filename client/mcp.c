/*
 * agent-sandbox-mcp: an MCP server over stdio that lets a model use
 * agent-sandbox through fourteen tools.  It reads newline-delimited JSON-RPC
 * messages from stdin and writes one line per reply to stdout; stdout
 * carries nothing else, diagnostics go to stderr.  It talks to the server
 * named by AGENT_SANDBOX_URL with the key in AGENT_SANDBOX_API_KEY.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_seccomp.h"
#include "log.h"
#include "mcp.h"

#define READ_CHUNK	(64 * 1024)

struct reader {
	char	*buf;
	size_t	 cap;
	size_t	 start;		/* first byte not yet handled */
	size_t	 len;		/* bytes from start */
	size_t	 scanned;	/* of those, known to hold no newline */
	int	 discarding;	/* inside a line that is too long */
};

static void
usage(void)
{
	fprintf(stderr, "usage: agent-sandbox-mcp [--version]\n");
	exit(2);
}

static void
write_all(const char *p, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(STDOUT_FILENO, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "agent-sandbox-mcp: stdout: %s\n",
			    strerror(errno));
			exit(1);
		}
		p += n;
		len -= n;
	}
}

/* Send a reply line (and free it).  NULL: nothing to send. */
static void
send_line(char *line)
{
	if (line == NULL)
		return;
	/* One write for the common case: line and newline together. */
	write_all(line, strlen(line));
	write_all("\n", 1);
	free(line);
}

static void
too_long(void)
{
	fprintf(stderr, "agent-sandbox-mcp: dropped a message longer than "
	    "%d bytes\n", MCP_MAX_LINE);
	send_line(rpc_error_line(NULL, RPC_PARSE_ERROR,
	    "Parse error: message too long"));
}

/* Handle every whole line in the buffer. */
static void
drain(struct mcp_server *srv, struct reader *r)
{
	char	*nl;
	size_t	 n;

	for (;;) {
		nl = memchr(r->buf + r->start + r->scanned, '\n',
		    r->len - r->scanned);
		if (nl == NULL) {
			r->scanned = r->len;
			break;
		}
		n = nl - (r->buf + r->start);
		if (r->discarding) {
			r->discarding = 0;
			too_long();
		} else
			send_line(rpc_handle_line(srv, r->buf + r->start, n));
		r->start += n + 1;
		r->len -= n + 1;
		r->scanned = 0;
	}
	/* A line that can no longer fit: drop it up to its newline. */
	if (r->discarding || r->len > MCP_MAX_LINE) {
		r->discarding = 1;
		r->len = 0;
		r->scanned = 0;
	}
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len);
		r->start = 0;
	}
}

static void
serve(struct mcp_server *srv)
{
	struct reader	 r;
	ssize_t		 n;
	size_t		 cap;
	char		*p;

	memset(&r, 0, sizeof(r));
	for (;;) {
		if (r.cap - r.len < READ_CHUNK) {
			/*
			 * len <= MCP_MAX_LINE here, so the buffer never
			 * grows past MCP_MAX_LINE + 2 * READ_CHUNK.
			 */
			cap = r.cap * 2;
			if (cap < r.len + 2 * READ_CHUNK)
				cap = r.len + 2 * READ_CHUNK;
			if (cap > MCP_MAX_LINE + 2 * READ_CHUNK)
				cap = MCP_MAX_LINE + 2 * READ_CHUNK;
			if ((p = realloc(r.buf, cap)) == NULL) {
				fprintf(stderr, "agent-sandbox-mcp: out of "
				    "memory\n");
				exit(1);
			}
			r.buf = p;
			r.cap = cap;
		}
		n = read(STDIN_FILENO, r.buf + r.len, READ_CHUNK);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "agent-sandbox-mcp: stdin: %s\n",
			    strerror(errno));
			exit(1);
		}
		if (n == 0)
			break;
		r.len += n;
		drain(srv, &r);
	}
	/* End of input: a last line without its newline still counts. */
	if (r.discarding)
		too_long();
	else if (r.len > 0)
		send_line(rpc_handle_line(srv, r.buf, r.len));
	free(r.buf);
}

int
main(int argc, char *argv[])
{
	struct mcp_server	 srv;
	struct rest_error	 rerr;
	char			 err[sizeof(srv.rest_err) - 64];
	int			 mode;

	if (argc == 2 && (strcmp(argv[1], "--version") == 0 ||
	    strcmp(argv[1], "-V") == 0)) {
		printf("agent-sandbox-mcp %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (argc != 1)
		usage();
	/* A client gone away shows as a write error, not a signal. */
	signal(SIGPIPE, SIG_IGN);

	memset(&srv, 0, sizeof(srv));
	if (rest_client_init(&srv.rest, NULL, NULL, err, sizeof(err)) == -1) {
		/* Keep serving: every tool call then says what is wrong. */
		snprintf(srv.rest_err, sizeof(srv.rest_err),
		    "cannot use AGENT_SANDBOX_URL: %s", err);
		fprintf(stderr, "agent-sandbox-mcp: %s\n", srv.rest_err);
	} else {
		srv.rest_ok = 1;
		/*
		 * Before the filter, which allows no name lookup.  A name
		 * that does not resolve fails every tool call that needs
		 * the server, with the reason.
		 */
		if (rest_client_resolve(&srv.rest, &rerr) == -1)
			fprintf(stderr, "agent-sandbox-mcp: %s\n",
			    rerr.message);
	}

	log_init(LOG_TO_STDERR, LOG_LEVEL_WARN, "agent-sandbox-mcp");
	if ((mode = client_seccomp_mode("agent-sandbox-mcp")) == -1 ||
	    mcp_seccomp_load(mode) == -1) {
		fprintf(stderr, "agent-sandbox-mcp: cannot install the "
		    "seccomp filter\n");
		if (srv.rest_ok)
			rest_client_free(&srv.rest);
		return 1;
	}

	serve(&srv);

	if (srv.rest_ok)
		rest_client_free(&srv.rest);
	return 0;
}
