/*
 * Attach tokens (docs/rest-api.md "Processes"): a browser's WebSocket
 * cannot carry an API key in a header, so POST .../attach-token trades
 * the key for a token that GET .../attach?token= presents instead.  A
 * token is 32 random bytes (base64url, 43 characters), good for one
 * attachment to the one process it was made for, for 30 seconds.
 *
 * They live here only (a restart of apid voids them), in a table of
 * fixed size swept of expired tokens whenever it is used: a client
 * making tokens faster than they expire is refused, not given memory.
 * Tokens are compared in constant time, as keys are (auth.c), and
 * wiped when they go.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apid.h"
#include "format.h"
#include "websocket.h"

#define TOKEN_BYTES	32

struct attach_token {
	char		 token[ATTACH_TOKEN_LEN + 1];	/* "" when free */
	char		*sandbox_id;
	char		*process_id;
	struct caller	 caller;	/* who asked for it */
	time_t		 expires;	/* CLOCK_MONOTONIC seconds */
};

static struct attach_token	 tokens[ATTACH_TOKENS_MAX];

static time_t
monotonic_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
token_clear(struct attach_token *t)
{
	explicit_bzero(t->token, sizeof(t->token));
	free(t->sandbox_id);
	free(t->process_id);
	t->sandbox_id = t->process_id = NULL;
	caller_free(&t->caller);
}

static void
tokens_sweep(time_t now)
{
	size_t	 i;

	for (i = 0; i < ATTACH_TOKENS_MAX; i++)
		if (tokens[i].token[0] != '\0' && tokens[i].expires <= now)
			token_clear(&tokens[i]);
}

/* 32 random bytes as unpadded base64url. */
static void
token_new(char out[ATTACH_TOKEN_LEN + 1])
{
	unsigned char	 raw[TOKEN_BYTES];
	char		 b64[ATTACH_TOKEN_LEN + 2];
	size_t		 i;

	arc4random_buf(raw, sizeof(raw));
	(void)b64_encode(raw, sizeof(raw), b64, sizeof(b64));
	explicit_bzero(raw, sizeof(raw));
	for (i = 0; i < ATTACH_TOKEN_LEN; i++)
		out[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
	out[ATTACH_TOKEN_LEN] = '\0';
	explicit_bzero(b64, sizeof(b64));
}

static size_t
tenant_tokens(const struct caller *caller)
{
	const char	*tenant = caller->tenant != NULL ? caller->tenant : "";
	size_t		 i, n = 0;

	for (i = 0; i < ATTACH_TOKENS_MAX; i++)
		if (tokens[i].token[0] != '\0' &&
		    strcmp(tokens[i].caller.tenant != NULL ?
		    tokens[i].caller.tenant : "", tenant) == 0)
			n++;
	return n;
}

/*
 * A token for the process, good for ATTACH_TOKEN_TTL seconds.  0, or -1
 * with errno ENOSPC (the table is full, or the caller's tenant holds
 * ATTACH_TOKENS_TENANT of it) or ENOMEM.
 */
int
attach_token_make(const struct caller *caller, const char *sandbox_id,
    const char *process_id, char out[ATTACH_TOKEN_LEN + 1])
{
	struct attach_token	*t = NULL;
	time_t			 now = monotonic_now();
	size_t			 i;

	tokens_sweep(now);
	for (i = 0; i < ATTACH_TOKENS_MAX && t == NULL; i++)
		if (tokens[i].token[0] == '\0')
			t = &tokens[i];
	/* One tenant cannot take the whole table from the others. */
	if (t == NULL || tenant_tokens(caller) >= ATTACH_TOKENS_TENANT) {
		errno = ENOSPC;
		return -1;
	}
	if ((t->sandbox_id = strdup(sandbox_id)) == NULL ||
	    (t->process_id = strdup(process_id)) == NULL ||
	    caller_copy(&t->caller, caller) == -1) {
		token_clear(t);
		errno = ENOMEM;
		return -1;
	}
	token_new(t->token);
	t->expires = now + ATTACH_TOKEN_TTL;
	strlcpy(out, t->token, ATTACH_TOKEN_LEN + 1);
	return 0;
}

/*
 * 1 if token was made for exactly this process and is still good; it
 * is then used up.  Else 0.  Every live token is compared, in constant
 * time, so that the timing says nothing of how close a guess came; one
 * of another length is none (its length is no secret), and comparing
 * it would cost its length times the tokens.
 */
int
attach_token_take(const char *sandbox_id, const char *process_id,
    const char *token, size_t len, struct caller *caller)
{
	struct attach_token	*t, *hit = NULL;
	size_t			 i;
	int			 eq;

	tokens_sweep(monotonic_now());
	if (len != ATTACH_TOKEN_LEN)
		return 0;
	for (i = 0; i < ATTACH_TOKENS_MAX; i++) {
		t = &tokens[i];
		if (t->token[0] == '\0')
			continue;
		eq = format_consttime_equal(token, len, t->token,
		    ATTACH_TOKEN_LEN);
		if (eq && strcmp(t->sandbox_id, sandbox_id) == 0 &&
		    strcmp(t->process_id, process_id) == 0)
			hit = t;
	}
	if (hit == NULL)
		return 0;
	/* Its key, tenant and admin; the address and route are the new. */
	if (caller != NULL) {
		free(caller->key_name);
		free(caller->tenant);
		caller->key_name = hit->caller.key_name;
		caller->tenant = hit->caller.tenant;
		caller->admin = hit->caller.admin;
		hit->caller.key_name = hit->caller.tenant = NULL;
	}
	token_clear(hit);
	return 1;
}

/* Every token, wiped (apid's exit, and the tests). */
void
attach_tokens_clear(void)
{
	size_t	 i;

	for (i = 0; i < ATTACH_TOKENS_MAX; i++)
		if (tokens[i].token[0] != '\0')
			token_clear(&tokens[i]);
}

void
attach_tokens_keep(int (*keep)(const struct caller *))
{
	size_t	 i;

	for (i = 0; i < ATTACH_TOKENS_MAX; i++)
		if (tokens[i].token[0] != '\0' && !keep(&tokens[i].caller))
			token_clear(&tokens[i]);
}

/* The 201: {"token": ..., "expires_at": ...}. */
static void
token_answer(struct http_request *req, const char *token)
{
	struct timespec	 wall;
	json_object	*o;
	char		 ts[FORMAT_TIMESTAMP_LEN];

	clock_gettime(CLOCK_REALTIME, &wall);
	format_timestamp((double)wall.tv_sec + wall.tv_nsec / 1e9 +
	    ATTACH_TOKEN_TTL, ts, sizeof(ts));
	o = json_object_new_object();
	json_object_object_add(o, "token", json_object_new_string(token));
	json_object_object_add(o, "expires_at", json_object_new_string(ts));
	respond_json(req, 201, o);
	json_object_put(o);
}

/*
 * PROCESS_INFO: the process exists, the token is made, for the process
 * the route named (managerd's answer is about that one, or a lie).
 */
static int
token_reply(struct apid_request *ar, struct imsg *imsg)
{
	struct process_ref	*ref = ar->arg;
	struct process_info	 pi;
	char			 token[ATTACH_TOKEN_LEN + 1];
	int			 rc, saved;

	if (imsg->hdr.type == MSG_ERROR) {
		reply_error_msg(ar->req, imsg);
		process_ref_free(ref);
		free(ref);
		return APID_REPLY_DONE;
	}
	if (imsg->hdr.type != MSG_PROCESS_INFO ||
	    msg_get_process_info(imsg, &pi) == -1)
		peer_bad_message(&apid->parent, imsg, "not a process");
	if (strcmp(pi.sandbox_id, ref->sandbox_id) != 0 ||
	    strcmp(pi.id, ref->process_id) != 0)
		peer_bad_message(&apid->parent, imsg, "another process");
	process_ref_free(ref);
	free(ref);
	rc = attach_token_make(&ar->req->caller, pi.sandbox_id, pi.id, token);
	saved = errno;
	process_info_free(&pi);
	if (rc == -1 && saved == ENOSPC)
		respond_error(ar->req, ERR_LIMIT_EXCEEDED, "too many attach "
		    "tokens outstanding; try again later");
	else if (rc == -1)
		respond_error(ar->req, ERR_INTERNAL, "out of memory");
	else
		token_answer(ar->req, token);
	explicit_bzero(token, sizeof(token));
	return APID_REPLY_DONE;
}

void
route_process_attach_token(struct http_request *req, char **params)
{
	struct process_ref	*ref;
	struct msgw		 w;

	if (process_ref_check(req, params) == -1)
		return;
	if ((ref = calloc(1, sizeof(*ref))) == NULL ||
	    (ref->sandbox_id = strdup(params[0])) == NULL ||
	    (ref->process_id = strdup(params[1])) == NULL) {
		if (ref != NULL)
			process_ref_free(ref);
		free(ref);
		respond_error(req, ERR_INTERNAL, "out of memory");
		return;
	}
	process_ref_put(&w, params);
	if (!w.overflow && apid_request_send(req, MSG_PROCESS_GET, &w, -1,
	    token_reply, ref) != NULL)
		return;
	if (w.overflow)
		respond_error(req, ERR_INVALID_REQUEST,
		    "request too large to forward");
	else
		respond_error(req, ERR_INTERNAL, "cannot reach managerd");
	process_ref_free(ref);
	free(ref);
}
