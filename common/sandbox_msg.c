/*
 * Encode/decode pairs for the sandbox and exec payloads (sandbox_msg.h).
 * Each pair writes and reads the same fields in the same order; a decoder
 * fails on any short, long or out-of-bounds field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_msg.h"

void
env_list_free(struct env_list *env)
{
	size_t	 i;

	for (i = 0; i < env->count; i++) {
		free(env->keys[i]);
		free(env->values[i]);
	}
	free(env->keys);
	free(env->values);
	memset(env, 0, sizeof(*env));
}

/*
 * nvidia-container-runtime's hook reads NVIDIA_VISIBLE_DEVICES,
 * NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_*, NVIDIA_MIG_* and more, all
 * under one prefix; the AMD, Habana and Ascend runtimes each read one key.
 * Names are case-sensitive to them, so they are here.
 */
static int
env_key_reserved(const char *key)
{
	static const char *const	 keys[] = {
		"AMD_VISIBLE_DEVICES", "HABANA_VISIBLE_DEVICES",
		"ASCEND_VISIBLE_DEVICES"
	};
	size_t				 i;

	if (strncmp(key, "NVIDIA_", 7) == 0)
		return 1;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return 1;
	return 0;
}

const char *
env_list_reserved_key(const struct env_list *env)
{
	size_t	 i;

	for (i = 0; i < env->count; i++)
		if (env_key_reserved(env->keys[i]))
			return env->keys[i];
	return NULL;
}

int
env_list_add(struct env_list *env, const char *key, const char *value)
{
	char	**k, **v, *kc, *vc;

	if (env->count >= MSG_MAX_ENV) {
		errno = E2BIG;
		return -1;
	}
	if ((k = reallocarray(env->keys, env->count + 1, sizeof(*k))) == NULL)
		return -1;
	env->keys = k;
	if ((v = reallocarray(env->values, env->count + 1, sizeof(*v))) == NULL)
		return -1;
	env->values = v;
	if ((kc = strdup(key)) == NULL)
		return -1;
	if ((vc = strdup(value)) == NULL) {
		free(kc);
		return -1;
	}
	env->keys[env->count] = kc;
	env->values[env->count] = vc;
	env->count++;
	return 0;
}

void
msg_put_env(struct msgw *w, const struct env_list *env)
{
	size_t	 i;

	msgw_u32(w, (uint32_t)env->count);
	for (i = 0; i < env->count; i++) {
		msgw_str(w, env->keys[i]);
		msgw_str(w, env->values[i]);
	}
}

int
msg_get_env(struct msgr *r, struct env_list *env)
{
	uint32_t	 i, n;
	char		*k, *v;

	memset(env, 0, sizeof(*env));
	n = msgr_u32(r);
	if (r->error || n > MSG_MAX_ENV)
		return -1;
	for (i = 0; i < n; i++) {
		k = msgr_str(r, MSG_MAX_ENV_KEY);
		v = msgr_str(r, MSG_MAX_ENV_VALUE);
		if (k == NULL || v == NULL || env_list_add(env, k, v) == -1) {
			free(k);
			free(v);
			env_list_free(env);
			r->error = 1;
			return -1;
		}
		free(k);
		free(v);
	}
	return 0;
}

void
msg_put_argv(struct msgw *w, size_t argc, char **argv)
{
	size_t	 i;

	msgw_u32(w, (uint32_t)argc);
	for (i = 0; i < argc; i++)
		msgw_str(w, argv[i]);
}

void
msg_free_argv(char **argv)
{
	size_t	 i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

int
msg_get_argv(struct msgr *r, size_t *argcp, char ***argvp)
{
	uint32_t	 i, n;
	char		**argv;

	*argcp = 0;
	*argvp = NULL;
	n = msgr_u32(r);
	if (r->error || n > MSG_MAX_ARGC)
		goto bad;
	if ((argv = calloc((size_t)n + 1, sizeof(char *))) == NULL)
		goto bad;
	for (i = 0; i < n; i++) {
		if ((argv[i] = msgr_str(r, MSG_MAX_ARG)) == NULL) {
			msg_free_argv(argv);
			goto bad;
		}
	}
	*argcp = n;
	*argvp = argv;
	return 0;
bad:
	r->error = 1;
	return -1;
}

/* A boolean must be 0 or 1: anything else is a lying peer. */
int
msg_get_bool(struct msgr *r)
{
	uint8_t	 v = msgr_u8(r);

	if (v > 1)
		r->error = 1;
	return v;
}

static void
put_spec(struct msgw *w, const struct sandbox_spec *s)
{
	msgw_str(w, s->image);
	msgw_double(w, s->cpus);
	msgw_i64(w, s->memory_mb);
	msgw_i64(w, s->pids_limit);
	msgw_u8(w, s->network ? 1 : 0);
	msgw_u8(w, s->read_only_rootfs ? 1 : 0);
	msg_put_env(w, &s->env);
}

static int
get_spec(struct msgr *r, struct sandbox_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->image = msgr_str(r, MSG_MAX_IMAGE);
	s->cpus = msgr_double(r);
	s->memory_mb = msgr_i64(r);
	s->pids_limit = msgr_i64(r);
	s->network = msg_get_bool(r);
	s->read_only_rootfs = msg_get_bool(r);
	if (r->error || s->image == NULL || msg_get_env(r, &s->env) == -1) {
		sandbox_spec_free(s);
		r->error = 1;
		return -1;
	}
	return 0;
}

int
env_list_has(const struct env_list *l, const char *key)
{
	size_t	 i;

	for (i = 0; i < l->count; i++)
		if (strcmp(l->keys[i], key) == 0)
			return 1;
	return 0;
}

void
sandbox_spec_free(struct sandbox_spec *s)
{
	free(s->image);
	env_list_free(&s->env);
	memset(s, 0, sizeof(*s));
}

void
msg_put_create_request(struct msgw *w, const struct create_request *c)
{
	msgw_str(w, c->image);
	msgw_u8(w, c->has_cpus ? 1 : 0);
	msgw_double(w, c->cpus);
	msgw_u8(w, c->has_memory_mb ? 1 : 0);
	msgw_i64(w, c->memory_mb);
	msgw_u8(w, c->has_pids_limit ? 1 : 0);
	msgw_i64(w, c->pids_limit);
	msgw_u8(w, c->network ? 1 : 0);
	msgw_str(w, c->network_policy);
	msgw_u8(w, c->read_only_rootfs ? 1 : 0);
	msgw_u8(w, c->has_timeout_seconds ? 1 : 0);
	msgw_i64(w, c->timeout_seconds);
	msg_put_env(w, &c->env);
	msg_put_labels(w, &c->labels);
}

int
msg_get_create_request(const struct imsg *imsg, struct create_request *c)
{
	struct msgr	 r;

	memset(c, 0, sizeof(*c));
	msgr_init(&r, imsg);
	c->image = msgr_str(&r, MSG_MAX_IMAGE);
	c->has_cpus = msg_get_bool(&r);
	c->cpus = msgr_double(&r);
	c->has_memory_mb = msg_get_bool(&r);
	c->memory_mb = msgr_i64(&r);
	c->has_pids_limit = msg_get_bool(&r);
	c->pids_limit = msgr_i64(&r);
	c->network = msg_get_bool(&r);
	c->network_policy = msgr_str(&r, EGRESS_POLICY_TEXT_MAX);
	c->read_only_rootfs = msg_get_bool(&r);
	c->has_timeout_seconds = msg_get_bool(&r);
	c->timeout_seconds = msgr_i64(&r);
	if (msg_get_env(&r, &c->env) == -1 ||
	    msg_get_labels(&r, &c->labels) == -1 || msgr_end(&r) == -1) {
		create_request_free(c);
		return -1;
	}
	return 0;
}

void
create_request_free(struct create_request *c)
{
	free(c->image);
	free(c->network_policy);
	env_list_free(&c->env);
	labels_free(&c->labels);
	memset(c, 0, sizeof(*c));
}

const char *
sandbox_reason_name(int reason)
{
	switch (reason) {
	case SANDBOX_REASON_EXITED:
		return "exited";
	case SANDBOX_REASON_OOM_KILLED:
		return "oom_killed";
	case SANDBOX_REASON_REMOVED:
		return "container_removed";
	default:
		return NULL;
	}
}

void
msg_put_sandbox_info(struct msgw *w, const struct sandbox_info *i)
{
	msgw_str(w, i->id);
	msgw_u8(w, i->running ? 1 : 0);
	msgw_u8(w, (uint8_t)i->reason);
	msgw_str(w, i->image);
	msgw_double(w, i->cpus);
	msgw_i64(w, i->memory_mb);
	msgw_i64(w, i->pids_limit);
	msgw_u8(w, i->network ? 1 : 0);
	msgw_u8(w, i->read_only_rootfs ? 1 : 0);
	msgw_double(w, i->created_at);
	msgw_double(w, i->expires_at);
	msgw_str(w, i->source_snapshot_id);
	msg_put_labels(w, &i->labels);
}

int
msg_get_sandbox_info(const struct imsg *imsg, struct sandbox_info *i)
{
	struct msgr	 r;

	memset(i, 0, sizeof(*i));
	msgr_init(&r, imsg);
	i->id = msgr_str(&r, MSG_MAX_ID);
	i->running = msg_get_bool(&r);
	i->reason = msgr_u8(&r);
	i->image = msgr_str(&r, MSG_MAX_IMAGE);
	i->cpus = msgr_double(&r);
	i->memory_mb = msgr_i64(&r);
	i->pids_limit = msgr_i64(&r);
	i->network = msg_get_bool(&r);
	i->read_only_rootfs = msg_get_bool(&r);
	i->created_at = msgr_double(&r);
	i->expires_at = msgr_double(&r);
	i->source_snapshot_id = msgr_str(&r, MSG_MAX_ID);
	if (msg_get_labels(&r, &i->labels) == -1 || msgr_end(&r) == -1 ||
	    i->id == NULL || i->image == NULL ||
	    i->reason >= SANDBOX_REASON_COUNT ||
	    (i->running && i->reason != SANDBOX_REASON_NONE)) {
		sandbox_info_free(i);
		return -1;
	}
	return 0;
}

void
sandbox_info_free(struct sandbox_info *i)
{
	free(i->id);
	free(i->image);
	free(i->source_snapshot_id);
	labels_free(&i->labels);
	memset(i, 0, sizeof(*i));
}

void
msg_put_exec_request(struct msgw *w, const struct exec_request *e)
{
	msgw_str(w, e->sandbox_id);
	msgw_u8(w, e->shell ? 1 : 0);
	msg_put_argv(w, e->argc, e->argv);
	msg_put_env(w, &e->env);
	msgw_str(w, e->workdir);
	msgw_u8(w, e->has_timeout ? 1 : 0);
	msgw_double(w, e->timeout_seconds);
}

int
msg_get_exec_request(const struct imsg *imsg, struct exec_request *e)
{
	struct msgr	 r;

	memset(e, 0, sizeof(*e));
	msgr_init(&r, imsg);
	e->sandbox_id = msgr_str(&r, MSG_MAX_ID);
	e->shell = msg_get_bool(&r);
	if (msg_get_argv(&r, &e->argc, &e->argv) == -1 ||
	    msg_get_env(&r, &e->env) == -1)
		goto bad;
	e->workdir = msgr_str(&r, MSG_MAX_PATH);
	e->has_timeout = msg_get_bool(&r);
	e->timeout_seconds = msgr_double(&r);
	if (msgr_end(&r) == -1 || e->sandbox_id == NULL ||
	    (e->shell && e->argc != 1))
		goto bad;
	return 0;
bad:
	exec_request_free(e);
	return -1;
}

void
exec_request_free(struct exec_request *e)
{
	free(e->sandbox_id);
	msg_free_argv(e->argv);
	env_list_free(&e->env);
	free(e->workdir);
	memset(e, 0, sizeof(*e));
}

void
msg_put_docker_create(struct msgw *w, const struct docker_create *d)
{
	msgw_str(w, d->id);
	put_spec(w, &d->spec);
}

int
msg_get_docker_create(const struct imsg *imsg, struct docker_create *d)
{
	struct msgr	 r;

	memset(d, 0, sizeof(*d));
	msgr_init(&r, imsg);
	d->id = msgr_str(&r, MSG_MAX_ID);
	if (get_spec(&r, &d->spec) == -1)
		goto bad;
	if (msgr_end(&r) == -1 || d->id == NULL)
		goto bad;
	return 0;
bad:
	docker_create_free(d);
	return -1;
}

void
docker_create_free(struct docker_create *d)
{
	free(d->id);
	sandbox_spec_free(&d->spec);
	memset(d, 0, sizeof(*d));
}

void
msg_put_docker_exec(struct msgw *w, const struct docker_exec *d)
{
	msgw_str(w, d->id);
	msg_put_argv(w, d->argc, d->argv);
	msg_put_env(w, &d->env);
	msgw_str(w, d->workdir);
	msgw_double(w, d->timeout_seconds);
}

int
msg_get_docker_exec(const struct imsg *imsg, struct docker_exec *d)
{
	struct msgr	 r;

	memset(d, 0, sizeof(*d));
	msgr_init(&r, imsg);
	d->id = msgr_str(&r, MSG_MAX_ID);
	if (msg_get_argv(&r, &d->argc, &d->argv) == -1 ||
	    msg_get_env(&r, &d->env) == -1)
		goto bad;
	d->workdir = msgr_str(&r, MSG_MAX_PATH);
	d->timeout_seconds = msgr_double(&r);
	if (msgr_end(&r) == -1 || d->id == NULL || d->workdir == NULL ||
	    d->argc == 0)
		goto bad;
	return 0;
bad:
	docker_exec_free(d);
	return -1;
}

void
docker_exec_free(struct docker_exec *d)
{
	free(d->id);
	msg_free_argv(d->argv);
	env_list_free(&d->env);
	free(d->workdir);
	memset(d, 0, sizeof(*d));
}

void
msg_put_exec_exit(struct msgw *w, const struct exec_exit *x)
{
	msgw_i64(w, x->exit_code);
	msgw_u8(w, x->timed_out ? 1 : 0);
}

int
msg_get_exec_exit(const struct imsg *imsg, struct exec_exit *x)
{
	struct msgr	 r;

	msgr_init(&r, imsg);
	x->exit_code = msgr_i64(&r);
	x->timed_out = msg_get_bool(&r);
	return msgr_end(&r);
}

void
msg_put_string(struct msgw *w, const char *s)
{
	msgw_str(w, s);
}

char *
msg_get_string(const struct imsg *imsg, size_t maxlen)
{
	struct msgr	 r;
	char		*s;

	msgr_init(&r, imsg);
	s = msgr_str(&r, maxlen);
	if (msgr_end(&r) == -1 || s == NULL) {
		free(s);
		return NULL;
	}
	return s;
}
