/*
 * MSG_CALLER's codec (caller.h).
 */
#include <stdlib.h>
#include <string.h>

#include "caller.h"

static const char *
nonnull(const char *s)
{
	return s != NULL ? s : "";
}

void
msg_put_caller(struct msgw *w, const struct caller *c)
{
	msgw_str(w, nonnull(c->key_name));
	msgw_str(w, nonnull(c->tenant));
	msgw_u8(w, c->admin ? 1 : 0);
	msgw_str(w, nonnull(c->client_addr));
	msgw_str(w, nonnull(c->route));
}

int
caller_flat_key(const char *s)
{
	size_t	 len = strlen(s);

	return len > 4 && strncmp(s, "key-", 4) == 0 &&
	    strspn(s + 4, "0123456789") == len - 4;
}

int
caller_name_valid(const char *s)
{
	size_t	 len = strlen(s);

	if (len == 0 || len > CALLER_NAME_MAX)
		return 0;
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") != len)
		return 0;
	/* Not a dot first (no ".", ".."), and not a flat key's name. */
	if (s[0] == '.' || s[0] == '-')
		return 0;
	return !caller_flat_key(s);
}

static int
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* What managerd may write into a record or a log line as it is. */
static int
caller_valid(const struct caller *c)
{
	return (c->key_name[0] == '\0' || caller_flat_key(c->key_name) ||
	    caller_name_valid(c->key_name)) &&
	    (c->tenant[0] == '\0' || caller_name_valid(c->tenant)) &&
	    printable(c->client_addr) && printable(c->route);
}

int
msg_get_caller(const struct imsg *imsg, struct caller *c)
{
	struct msgr	 r;
	uint8_t		 admin;

	memset(c, 0, sizeof(*c));
	msgr_init(&r, imsg);
	c->key_name = msgr_str(&r, CALLER_MAX_NAME);
	c->tenant = msgr_str(&r, CALLER_MAX_TENANT);
	admin = msgr_u8(&r);
	c->client_addr = msgr_str(&r, CALLER_MAX_ADDR);
	c->route = msgr_str(&r, CALLER_MAX_ROUTE);
	if (msgr_end(&r) == -1 || admin > 1 || c->key_name == NULL ||
	    c->tenant == NULL || c->client_addr == NULL || c->route == NULL ||
	    !caller_valid(c)) {
		caller_free(c);
		return -1;
	}
	c->admin = admin;
	return 0;
}

int
caller_copy(struct caller *dst, const struct caller *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->admin = src->admin ? 1 : 0;
	if ((dst->key_name = strdup(nonnull(src->key_name))) == NULL ||
	    (dst->tenant = strdup(nonnull(src->tenant))) == NULL ||
	    (dst->client_addr = strdup(nonnull(src->client_addr))) == NULL ||
	    (dst->route = strdup(nonnull(src->route))) == NULL) {
		caller_free(dst);
		return -1;
	}
	return 0;
}

void
caller_free(struct caller *c)
{
	free(c->key_name);
	free(c->tenant);
	free(c->client_addr);
	free(c->route);
	memset(c, 0, sizeof(*c));
}
