/*
 * A sandbox's egress policy in the CLI (docs/rest-api.md "Network"):
 * "network ID" shows it (GET .../network), "network ID none|public" and
 * "network ID allow ENTRY..." replace it (PUT, the answer shown as the
 * GET's), and "network-log ID" prints the egress proxy's recent
 * connections (GET .../network/log) as a table.  The server checks the
 * entries and names a bad one; here only the words are checked.  Also
 * create's and fork's --allow ENTRY, an allowlist in their "network".
 *
 * Every string is the server's, and a log entry's host what a sandbox
 * asked the proxy for: a control character or a byte of ill-formed UTF-8
 * in any of them is printed as \xNN, never sent to the terminal as it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "utf8.h"

#define LOG_COLS	7

/* The PUT body for the operands after ID; NULL (with a warning) if bad. */
static json_object *
policy_body(int argc, char **argv)
{
	json_object	*body;
	int		 i, listed = strcmp(argv[0], "allow") == 0;

	if (!listed && strcmp(argv[0], "none") != 0 &&
	    strcmp(argv[0], "public") != 0) {
		cli_warn("'%s' is not a policy: none, public or allow ENTRY...",
		    argv[0]);
		return NULL;
	}
	if (!listed && argc != 1) {
		cli_warn("%s takes no entries; allow ENTRY... lists them",
		    argv[0]);
		return NULL;
	}
	if (listed && argc < 2) {
		cli_warn("allow wants at least one ENTRY (a name, *.name, an "
		    "address or a range, optionally :port)");
		return NULL;
	}
	if (!listed) {
		body = json_object_new_object();
		if (cli_put(body, "mode", json_object_new_string(argv[0])) == -1) {
			json_object_put(body);
			return NULL;
		}
		return body;
	}
	for (body = NULL, i = 1; i < argc; i++)
		if (cli_allow_add(&body, argv[i]) == -1) {
			json_object_put(body);
			return NULL;
		}
	return body;
}

/*
 * s for a terminal, into buf: well-formed UTF-8 as it is but for control
 * characters (C0, DEL and C1, whose CSI a terminal obeys as ESC [), which
 * are written byte by byte as \xNN, as is each byte that starts no
 * well-formed character.  Cut short at a character if buf is too small.
 */
static const char *
printable(const char *s, char *buf, size_t len)
{
	size_t		 o = 0, left, n, k;
	uint32_t	 cp;

	if (s == NULL)
		s = "-";	/* a JSON null in a list */
	for (left = strlen(s); left > 0; s += n, left -= n) {
		if ((n = utf8_char(s, left, &cp)) != 0 && cp >= 0x20 &&
		    (cp < 0x7f || cp >= 0xa0)) {
			if (o + n >= len)
				break;
			memcpy(buf + o, s, n);
			o += n;
			continue;
		}
		if (n == 0)
			n = 1;
		if (o + 4 * n >= len)
			break;
		for (k = 0; k < n; k++)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x",
			    (unsigned char)s[k]);
	}
	buf[o] = '\0';
	return buf;
}

/*
 * --allow ENTRY of create and fork, and network's allow: entry appended
 * to *policy, an allowlist made at the first.  0, or -1 with a warning.
 */
int
cli_allow_add(json_object **policy, const char *entry)
{
	json_object	*allow, *e;
	char		 shown[256];

	/* JSON is UTF-8: a server reads any other bytes as a broken body. */
	if (!utf8_valid(entry, strlen(entry))) {
		cli_warn("'%s' is not UTF-8 (an entry is an ASCII name, address "
		    "or range)", printable(entry, shown, sizeof(shown)));
		return -1;
	}
	if (*policy == NULL) {
		if ((*policy = json_object_new_object()) == NULL ||
		    cli_put(*policy, "mode",
		    json_object_new_string("allowlist")) == -1 ||
		    cli_put(*policy, "allow", json_object_new_array()) == -1)
			return -1;
	}
	if (!json_object_object_get_ex(*policy, "allow", &allow) ||
	    (e = json_object_new_string(entry)) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	if (json_object_array_add(allow, e) != 0) {
		json_object_put(e);
		cli_warn("out of memory");
		return -1;
	}
	return 0;
}

/* "mode:  allowlist", then its entries one per line, as the server says. */
static void
print_policy(json_object *p)
{
	json_object	*allow;
	size_t		 i, n;
	char		 buf[512];

	printf("mode:  %s\n", printable(cli_str(p, "mode"), buf,
	    sizeof(buf)));
	if (json_object_object_get_ex(p, "allow", &allow) &&
	    json_object_is_type(allow, json_type_array)) {
		n = json_object_array_length(allow);
		for (i = 0; i < n; i++)
			printf("%s%s\n", i == 0 ? "allow: " : "       ",
			    printable(json_object_get_string(
			    json_object_array_get_idx(allow, i)), buf,
			    sizeof(buf)));
	}
	fflush(stdout);
}

int
cli_network(struct cli *cli, int argc, char **argv)
{
	json_object	*body = NULL, *policy;
	char		*path;
	int		 i, rc;

	if ((i = cli_options(argc, argv)) == -1 || argc - i < 1 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if (argc - i > 1 &&
	    (body = policy_body(argc - i - 1, argv + i + 1)) == NULL)
		return cli_usage(argv[0]);
	if ((path = cli_resource("sandboxes", argv[i], "/network")) == NULL) {
		json_object_put(body);
		return CLI_EXIT_FAIL;
	}
	rc = cli_call(cli, body != NULL ? "PUT" : "GET", path, body, &policy);
	json_object_put(body);
	free(path);
	if (rc == -1)
		return CLI_EXIT_FAIL;
	if (cli->json)
		cli_print_json(policy);
	else
		print_policy(policy);
	json_object_put(policy);
	return CLI_EXIT_OK;
}

/* One entry's cells, each escaped into its own buffer of cell. */
static void
log_row(json_object *e, const char **row, char (*cell)[256])
{
	static const char *const	 keys[LOG_COLS] = { "time", NULL, NULL,
	    "address", "bytes_sent", "bytes_received", "reason" };
	json_object			*v;
	const char			*host;
	char				 hostport[256];
	int				 allowed, c;

	allowed = json_object_object_get_ex(e, "allowed", &v) &&
	    json_object_get_boolean(v);
	host = cli_str(e, "host");
	/* An IPv6 address in brackets, as in an allowlist entry. */
	snprintf(hostport, sizeof(hostport), "%s%s%s:%s",
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", cli_str(e, "port"));
	for (c = 0; c < LOG_COLS; c++)
		row[c] = printable(c == 1 ? (allowed ? "allowed" : "refused") :
		    c == 2 ? hostport : c == 6 && allowed ? "-" :
		    cli_str(e, keys[c]), cell[c], sizeof(cell[c]));
}

static int
print_log(json_object *log)
{
	static const char *const	 head[LOG_COLS] = { "TIME", "VERDICT",
	    "HOST:PORT", "ADDRESS", "SENT", "RECEIVED", "REASON" };
	json_object			**e, *v;
	const char			**rows;
	char				(*cells)[LOG_COLS][256];
	size_t				  i, n;

	if ((e = cli_members(log, "entries", &n)) == NULL)
		return CLI_EXIT_FAIL;
	rows = calloc(n + 1, sizeof(*rows) * LOG_COLS);
	cells = calloc(n + 1, sizeof(*cells));
	if (rows == NULL || cells == NULL) {
		cli_warn("out of memory");
		free(rows);
		free(cells);
		free(e);
		return CLI_EXIT_FAIL;
	}
	for (i = 0; i < n; i++)
		log_row(e[i], rows + i * LOG_COLS, cells[i]);
	cli_table(head, LOG_COLS, rows, n);
	if (json_object_object_get_ex(log, "dropped", &v) &&
	    json_object_get_int64(v) > 0)
		printf("(%lld older entries dropped)\n",
		    (long long)json_object_get_int64(v));
	fflush(stdout);
	free(rows);
	free(cells);
	free(e);
	return CLI_EXIT_OK;
}

int
cli_network_log(struct cli *cli, int argc, char **argv)
{
	json_object	*log;
	char		*path;
	int		 i, rc;

	if ((i = cli_options(argc, argv)) == -1 || argc - i != 1 ||
	    cli_id(argv[0], argv[i]) == -1)
		return cli_usage(argv[0]);
	if ((path = cli_resource("sandboxes", argv[i],
	    "/network/log")) == NULL)
		return CLI_EXIT_FAIL;
	rc = cli_call(cli, "GET", path, NULL, &log);
	free(path);
	if (rc == -1)
		return CLI_EXIT_FAIL;
	if (cli->json) {
		cli_print_json(log);
		rc = CLI_EXIT_OK;
	} else
		rc = print_log(log);
	json_object_put(log);
	return rc;
}
