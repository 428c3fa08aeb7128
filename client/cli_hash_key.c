/*
 * agent-sandbox hash-key (docs/cli.md): the keys file's entry for a key
 * (docs/configuration.md "Keys file").  The key is read from stdin, never
 * from the command line (where ps and shell histories would see it); with
 * --generate a new one is made of 32 random bytes (256 bits, base64url)
 * and printed first.  Only the SHA-256 goes into the entry: the file
 * never holds a key.  Runs locally; no server is asked.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client_seccomp.h"
#include "keys_file.h"
#include "websocket.h"

/* A key shorter than 128 bits' worth of base64url is refused. */
#define HASH_KEY_MIN_CHARS	22
#define HASH_KEY_MAX_BYTES	4096

static int
hash_key_usage(void)
{
	fprintf(stderr, "usage: agent-sandbox hash-key [--generate] "
	    "[--name NAME] [--tenant TENANT] [--admin]\n"
	    "  reads the key on stdin (unless --generate) and prints its "
	    "keys file entry\n");
	return CLI_EXIT_USAGE;
}

/*
 * The key on stdin, its line end taken off: 0, or -1 with why said.
 * read(2), not stdio: glibc would seek stdin back over what it buffered
 * at exit, a call the filter does not allow.
 */
static int
read_key(char *buf, size_t size)
{
	size_t	 len = 0;
	ssize_t	 n;

	while (len < size && (n = read(STDIN_FILENO, buf + len,
	    size - len)) != 0) {
		if (n == -1) {
			fprintf(stderr, "agent-sandbox: cannot read the key\n");
			return -1;
		}
		len += (size_t)n;
	}
	if (len == size) {
		fprintf(stderr, "agent-sandbox: the key is longer than %d "
		    "bytes\n", HASH_KEY_MAX_BYTES);
		return -1;
	}
	buf[len] = '\0';
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '\r')
		buf[--len] = '\0';
	if (strlen(buf) != len || strcspn(buf, " \t\r\n") != len ||
	    len < HASH_KEY_MIN_CHARS) {
		fprintf(stderr, "agent-sandbox: a key is one line of at least "
		    "%d characters without spaces or NULs (make one with "
		    "--generate)\n", HASH_KEY_MIN_CHARS);
		return -1;
	}
	return 0;
}

static void
generate_key(char *buf, size_t size)
{
	unsigned char	 raw[32];
	size_t		 i, n;

	arc4random_buf(raw, sizeof(raw));
	n = b64_encode(raw, sizeof(raw), buf, size);
	explicit_bzero(raw, sizeof(raw));
	/* base64url, unpadded: it travels in headers and shells alike. */
	while (n > 0 && buf[n - 1] == '=')
		buf[--n] = '\0';
	for (i = 0; i < n; i++)
		buf[i] = buf[i] == '+' ? '-' : buf[i] == '/' ? '_' : buf[i];
}

static void
print_entry(const char *key, const char *name, const char *tenant,
    int admin)
{
	unsigned char	 h[KEY_HASH_LEN];
	size_t		 i;

	key_hash(key, strlen(key), h);
	printf("{\"name\": \"%s\", \"tenant\": \"%s\", ", name, tenant);
	if (admin)
		printf("\"admin\": true, ");
	printf("\"sha256\": \"");
	for (i = 0; i < KEY_HASH_LEN; i++)
		printf("%02x", h[i]);
	printf("\"}\n");
	explicit_bzero(h, sizeof(h));
}

int
hash_key_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "generate", no_argument, NULL, 'g' },
		{ "name", required_argument, NULL, 'n' },
		{ "tenant", required_argument, NULL, 't' },
		{ "admin", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char	*name = "NAME", *tenant = "TENANT";
	char		 key[HASH_KEY_MAX_BYTES + 1];
	int		 ch, gen = 0, admin = 0, rc = CLI_EXIT_OK, mode;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'g':
			gen = 1;
			break;
		case 'n':
			name = optarg;
			break;
		case 't':
			tenant = optarg;
			break;
		case 'a':
			admin = 1;
			break;
		default:
			return hash_key_usage();
		}
	}
	if (optind != argc)
		return hash_key_usage();
	/* The placeholders are for the operator to fill in; others must do. */
	if ((strcmp(name, "NAME") != 0 && !key_name_valid(name)) ||
	    (strcmp(tenant, "TENANT") != 0 && !key_name_valid(tenant))) {
		fprintf(stderr, "agent-sandbox: names and tenants are 1 to %d "
		    "of A-Z a-z 0-9 . _ - (not first . or -, not "
		    "key-<number>)\n", KEY_NAME_MAX);
		return CLI_EXIT_USAGE;
	}
	/* Reading a key and printing a line: the verbs' base filter. */
	if ((mode = client_seccomp_mode("agent-sandbox")) == -1 ||
	    cli_seccomp_load(mode, 0) == -1) {
		fprintf(stderr, "agent-sandbox: cannot install the seccomp "
		    "filter\n");
		return CLI_EXIT_FAIL;
	}
	if (gen) {
		generate_key(key, sizeof(key));
		printf("%s\n", key);
	} else if (read_key(key, sizeof(key)) == -1)
		rc = CLI_EXIT_FAIL;
	if (rc == CLI_EXIT_OK)
		print_entry(key, name, tenant, admin);
	explicit_bzero(key, sizeof(key));
	if (fflush(stdout) == EOF)
		rc = CLI_EXIT_FAIL;
	return rc;
}
