/*
 * The shape of a sandbox, API.md §11.1 and DESIGN.md §3: the only place
 * where the bodies of container, volume, network and exec creation are
 * built.  Bodies are made from scratch with json-c out of typed values;
 * keys such as Privileged, Binds, CapAdd, Devices, PidMode, UsernsMode,
 * Sysctls, VolumesFrom or DriverOpts simply never appear.  The golden
 * files in tests/golden/docker/ hold these bodies byte for byte, so any
 * change here shows up as a reviewed diff.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "proxy.h"

/*
 * Bounds on the operator's own settings; a create is also held to the
 * settings' maxima (struct proxy_policy).
 */
#define CPUS_MAX		1024.0
#define MEMORY_MB_MIN		6		/* Docker's own minimum */
#define MEMORY_MB_MAX		(1LL << 22)	/* 4 TiB */
#define PIDS_MAX		(1LL << 22)

/*
 * Prints its own PID, then becomes the command: exec keeps the PID, which
 * Docker made the leader of a new session and process group.  The kill
 * below takes the PID from this first stdout line, never from a file the
 * sandbox could change; the line itself is checked there (SESSION_CHECK).
 */
#define EXEC_WRAPPER	"echo $$; exec \"$@\""

/*
 * A process's, the same, but the command runs only once the proxy read
 * the PID line and lets it go with a newline on its stdin (always
 * attached): when the stream breaks before that, the stdin ends and the
 * wrapper exits without running it, so no command of a client ever runs
 * that the proxy could not follow.
 */
#define PROCESS_WRAPPER	"echo $$; read -r _ || exit; exec \"$@\""

/*
 * On a tty, the command also waits for its terminal's size: Docker's API
 * 1.41 takes the size only once the exec runs, and a command that looks
 * at once would see 0x0.  The proxy sends the terminal's end-of-file
 * character once the size is set and the PID line read; a read at the
 * start of a line then returns at once (an end of file: hence no "||
 * exit"), and the line discipline echoes nothing.  A stream that breaks
 * before leaves the wrapper waiting, or hangs its terminal up, which
 * sends SIGHUP to it, the session's leader.
 */
#define TTY_WRAPPER	"echo $$; read -r _; exec \"$@\""

/*
 * Before anything is signalled: $p must lead its session, as the wrapper
 * does (runc makes every exec the leader of a session of its own).  The
 * PID line is not out of the sandbox's reach: another of its processes
 * may write a line first into a tty's slave, which is the sandbox user's,
 * or into the wrapper's stdout through /proc.  A live process that leads
 * no session (the session id after the last ')' of its stat, the fourth
 * field there) is refused: exit HARDENING_SCRIPT_REFUSED.  A PID without
 * a process is left to the kill: a command's background children outlive
 * it in its group, and Linux hands out no PID that is still a group's.
 * Built-ins only.
 */
#define SESSION_CHECK \
	"s=\n" \
	"{ while IFS= read -r l; do s=\"$s$l \"; done < \"/proc/$p/stat\"; }" \
	" 2>/dev/null\n" \
	"if [ -n \"$s\" ]; then\n" \
	"\ts=${s##*)}\n" \
	"\tset -- $s\n" \
	"\tif [ \"$4\" != \"$p\" ]; then\n" \
	"\t\techo \"process $p does not lead a session: not signalled\"\n" \
	"\t\texit " HARDENING_SCRIPT_REFUSED_TEXT "\n" \
	"\tfi\n" \
	"fi\n"

/*
 * A signal to the process group of $1 (the wrapper's PID, leader of its
 * group), by its name in $2: one of process_signal_name()'s, never text
 * from a request.  A built-in, as the kill below.
 */
#define SIGNAL_SCRIPT \
	"p=$1\n" \
	"n=$2\n" \
	SESSION_CHECK \
	"kill -\"$n\" -\"$p\"\n"

/*
 * Once SESSION_CHECK passed, stop the process group, then every descendant of $1 found through the
 * ppid links in /proc/<n>/stat (the text after the last ')', so a command
 * name holding spaces, parentheses or newlines cannot shift the fields),
 * until no new one turns up; then SIGKILL them all and the group.  Stopped
 * processes cannot fork, so the walk ends.  Built-ins only: no fork, so it
 * works even at the pids limit.  Runs in busybox sh and dash.
 */
#define KILL_SCRIPT \
	"p=$1\n" \
	SESSION_CHECK \
	"kill -STOP -\"$p\" 2>/dev/null\n" \
	"kill -STOP \"$p\" 2>/dev/null\n" \
	"all=\" $p \"\n" \
	"more=1\n" \
	"while [ \"$more\" = 1 ]; do\n" \
	"\tmore=0\n" \
	"\tfor d in /proc/[0-9]*; do\n" \
	"\t\tn=${d#/proc/}\n" \
	"\t\tcase \"$all\" in *\" $n \"*) continue ;; esac\n" \
	"\t\ts=\n" \
	"\t\t{ while IFS= read -r l; do s=\"$s$l \"; done < \"$d/stat\"; }" \
	" 2>/dev/null\n" \
	"\t\ts=${s##*)}\n" \
	"\t\tset -- $s\n" \
	"\t\tcase \"$all\" in *\" $2 \"*)\n" \
	"\t\t\tkill -STOP \"$n\" 2>/dev/null\n" \
	"\t\t\tall=\"$all$n \"\n" \
	"\t\t\tmore=1 ;;\n" \
	"\t\tesac\n" \
	"\tdone\n" \
	"done\n" \
	"for n in $all; do kill -KILL \"$n\" 2>/dev/null; done\n" \
	"kill -KILL -\"$p\" 2>/dev/null\n" \
	"exit 0\n"

/* json-c fails only without memory; a half-built body must never go out. */
static json_object *
jnew(json_object *o)
{
	if (o == NULL)
		fatalx("hardening: out of memory");
	return o;
}

static void
jset(json_object *obj, const char *key, json_object *value)
{
	if (json_object_object_add(obj, key, jnew(value)) != 0)
		fatalx("hardening: out of memory");
}

static void
jpush(json_object *arr, json_object *value)
{
	if (json_object_array_add(arr, jnew(value)) != 0)
		fatalx("hardening: out of memory");
}

static json_object *
jstr(const char *s)
{
	return jnew(json_object_new_string(s));
}

static json_object *
jstr_array(const char *const *v, size_t n)
{
	json_object	*arr = jnew(json_object_new_array());
	size_t		 i;

	for (i = 0; i < n; i++)
		jpush(arr, jstr(v[i]));
	return arr;
}

int
valid_env_key(const char *key)
{
	return key != NULL && key[0] != '\0' && strchr(key, '=') == NULL;
}

static json_object *
env_entry(const char *key, const char *value)
{
	char	 buf[MSG_MAX_ENV_KEY + MSG_MAX_ENV_VALUE + 2];

	snprintf(buf, sizeof(buf), "%s=%s", key, value);
	return jstr(buf);
}

/*
 * KEY=value for each distinct key, in the order keys first appear, with
 * the value of their last appearance (a Python dict's behaviour).  With
 * home set, HOME=home comes first unless the list has its own HOME.
 */
static json_object *
env_array(const struct env_list *env, const char *home)
{
	json_object	*arr = jnew(json_object_new_array());
	const char	*value;
	size_t		 i, j;
	int		 seen;

	if (home != NULL) {
		value = home;
		for (i = 0; i < env->count; i++)
			if (strcmp(env->keys[i], "HOME") == 0)
				value = env->values[i];
		jpush(arr, env_entry("HOME", value));
	}
	for (i = 0; i < env->count; i++) {
		if (home != NULL && strcmp(env->keys[i], "HOME") == 0)
			continue;
		seen = 0;
		for (j = 0; j < i && !seen; j++)
			seen = strcmp(env->keys[j], env->keys[i]) == 0;
		if (seen)
			continue;
		value = env->values[i];
		for (j = i + 1; j < env->count; j++)
			if (strcmp(env->keys[j], env->keys[i]) == 0)
				value = env->values[j];
		jpush(arr, env_entry(env->keys[i], value));
	}
	return arr;
}

static json_object *
labels(const char *id, const char *instance_id, int prep)
{
	json_object	*l = jnew(json_object_new_object());

	jset(l, LABEL_MANAGED, jstr("true"));
	jset(l, LABEL_ID, jstr(id));
	jset(l, LABEL_INSTANCE, jstr(instance_id));
	/* Always set: an image's own role label must not stand. */
	jset(l, LABEL_ROLE, jstr(prep ? "init" : "sandbox"));
	return l;
}

/*
 * No log at all: with the default json-file driver a sandbox writing to
 * /proc/1/fd/1 (its init's stdout) grows a file on the host without
 * bound.  Nothing of ours reads a sandbox's log.
 */
static json_object *
no_log(void)
{
	json_object	*l = jnew(json_object_new_object());

	jset(l, "Type", jstr("none"));
	jset(l, "Config", jnew(json_object_new_object()));
	return l;
}

/* copy: Docker copies the image's /workspace (owner, mode, entries) in. */
static json_object *
workspace_mounts(const char *id, int copy)
{
	json_object	*mounts, *m, *opts;
	char		 vname[DOCKER_NAME_MAX];

	sandbox_volume_name(id, vname, sizeof(vname));
	mounts = jnew(json_object_new_array());
	m = jnew(json_object_new_object());
	jset(m, "Type", jstr("volume"));
	jset(m, "Source", jstr(vname));
	jset(m, "Target", jstr(WORKSPACE));
	jset(m, "ReadOnly", json_object_new_boolean(0));
	/*
	 * Docker must not seed the volume with the client image's root-owned
	 * copy; only the workspace-owner image's (hardening_prep_body) is.
	 */
	opts = jnew(json_object_new_object());
	jset(opts, "NoCopy", json_object_new_boolean(!copy));
	jset(m, "VolumeOptions", opts);
	jpush(mounts, m);
	return mounts;
}

/*
 * Docker turns NanoCpus into a CFS quota of NanoCpus / 10^4 microseconds
 * per 100 ms period, rounding down, and a quota of 0 means no limit at
 * all: 0.000001 CPU would be unlimited CPU.  The kernel's least quota is
 * 1 ms, hence SANDBOX_CPUS_MIN.
 */
static int64_t
nano_cpus(double cpus)
{
	if (!isfinite(cpus) || cpus < 0 || cpus > CPUS_MAX)
		return -1;
	return (int64_t)(cpus * 1e9);
}

#define NANO_CPUS_MIN	10000000	/* SANDBOX_CPUS_MIN: a 1 ms quota */

const char *
hardening_check_policy(struct proxy_policy *p)
{
	if (p->uid == 0 || p->gid == 0)
		return "the sandbox user must not be root (uid or gid 0)";
	if (p->uid == UINT32_MAX || p->gid == UINT32_MAX)
		return "invalid sandbox user";
	snprintf(p->user, sizeof(p->user), "%u:%u", p->uid, p->gid);
	if (p->tmp_size_mb < 1 || p->tmp_size_mb > CONFIG_TMP_SIZE_MB_MAX)
		return "tmp_size_mb out of range";
	if (p->runtime[0] != '\0' && !valid_docker_name(p->runtime))
		return "invalid Docker runtime name";
	/* Not one of Docker's own networks, and not container:<id>. */
	if (!valid_sandbox_network_name(p->network_name))
		return "invalid network name";
	/* Maxima above the bounds are fine: creates are held to both. */
	if (!isfinite(p->max_cpus) || p->max_cpus < SANDBOX_CPUS_MIN)
		return "max_cpus out of range";
	if (p->max_memory_mb < MEMORY_MB_MIN)
		return "max_memory_mb out of range";
	if (p->max_pids_limit < 1)
		return "max_pids_limit out of range";
	return NULL;
}

/*
 * A claimed pooled sandbox's limits, set as the create sets them
 * (hardening_container_body): swap stays off, Memory equals MemorySwap.
 * The spec passed hardening_check_create.
 */
json_object *
hardening_update_body(const struct sandbox_spec *s)
{
	json_object	*body;
	int64_t		 memory = s->memory_mb * 1048576;

	body = jnew(json_object_new_object());
	jset(body, "PidsLimit", json_object_new_int64(s->pids_limit));
	jset(body, "Memory", json_object_new_int64(memory));
	jset(body, "MemorySwap", json_object_new_int64(memory));
	jset(body, "NanoCpus", json_object_new_int64(nano_cpus(s->cpus)));
	return body;
}

const char *
hardening_check_create(const struct proxy_policy *p,
    const struct docker_create *dc)
{
	const struct sandbox_spec	*s = &dc->spec;

	if (nano_cpus(s->cpus) < NANO_CPUS_MIN || s->cpus > p->max_cpus)
		return "cpus out of range";
	if (s->memory_mb < MEMORY_MB_MIN || s->memory_mb > MEMORY_MB_MAX ||
	    s->memory_mb > p->max_memory_mb)
		return "memory_mb out of range";
	if (s->pids_limit < 1 || s->pids_limit > PIDS_MAX ||
	    s->pids_limit > p->max_pids_limit)
		return "pids_limit out of range";
	if (s->network && !p->allow_network)
		return "sandboxes with network access are not allowed";
	if (!p->allow_runtime_env && env_list_reserved_key(&s->env) != NULL)
		return "an environment key that container runtimes read";
	return NULL;
}

json_object *
hardening_container_body(const struct proxy_policy *p,
    const struct docker_create *dc, const char *instance_id)
{
	static const char *const	 entrypoint[] = {
		"/bin/sh", "-c", HARDENING_KEEPALIVE
	};
	static const char *const	 cap_drop[] = { "ALL" };
	static const char *const	 security_opt[] = {
		"no-new-privileges:true"
	};
	const struct sandbox_spec	*s = &dc->spec;
	json_object			*body, *host, *tmpfs;
	char				 tmpopts[128];
	int64_t				 memory;

	memory = s->memory_mb * 1048576;
	snprintf(tmpopts, sizeof(tmpopts),
	    "rw,nosuid,nodev,size=%lldm,mode=1777",
	    (long long)p->tmp_size_mb);

	body = jnew(json_object_new_object());
	jset(body, "Image", jstr(s->image));
	jset(body, "Entrypoint", jstr_array(entrypoint, 3));
	jset(body, "Cmd", json_object_new_array());
	jset(body, "Hostname", jstr("sandbox"));
	jset(body, "User", jstr(p->user));
	jset(body, "WorkingDir", jstr(WORKSPACE));
	jset(body, "Env", env_array(&s->env, WORKSPACE));
	jset(body, "Labels", labels(dc->id, instance_id, 0));

	host = jnew(json_object_new_object());
	jset(host, "Mounts", workspace_mounts(dc->id, 0));
	tmpfs = jnew(json_object_new_object());
	jset(tmpfs, "/tmp", jstr(tmpopts));
	jset(host, "Tmpfs", tmpfs);
	jset(host, "ReadonlyRootfs",
	    json_object_new_boolean(s->read_only_rootfs));
	jset(host, "CapDrop", jstr_array(cap_drop, 1));
	jset(host, "SecurityOpt", jstr_array(security_opt, 1));
	jset(host, "PidsLimit", json_object_new_int64(s->pids_limit));
	jset(host, "Memory", json_object_new_int64(memory));
	jset(host, "MemorySwap", json_object_new_int64(memory));
	jset(host, "NanoCpus", json_object_new_int64(nano_cpus(s->cpus)));
	jset(host, "IpcMode", jstr("private"));
	jset(host, "Init", json_object_new_boolean(1));
	jset(host, "NetworkMode", jstr(s->network ? p->network_name :
	    "none"));
	if (p->runtime[0] != '\0')
		jset(host, "Runtime", jstr(p->runtime));
	jset(host, "LogConfig", no_log());
	jset(body, "HostConfig", host);
	return body;
}

/*
 * The sandbox's sibling, created and removed, never started, which gives
 * the volume's root to the sandbox user (docker_create.c).  From the
 * workspace-owner image (owner_image, an image id): Docker copies that
 * image's /workspace, an empty directory owned by the sandbox user, into
 * the empty volume as it creates the container, so the root filesystem
 * stays read-only and the image has nothing that could run.  Without one
 * (owner_image NULL): from the sandbox's image, with a writable root
 * filesystem, which Docker requires for the archive upload to "/" that
 * sets the owner then.  Neither variant lets Docker copy the sandbox
 * image's /workspace.
 */
json_object *
hardening_prep_body(const struct proxy_policy *p,
    const struct docker_create *dc, const char *instance_id,
    const char *owner_image)
{
	static const char *const	 entrypoint[] = {
		"/bin/sh", "-c", "exit 0"
	};
	static const char *const	 cap_drop[] = { "ALL" };
	static const char *const	 security_opt[] = {
		"no-new-privileges:true"
	};
	json_object			*body, *host;
	int				 owner = owner_image != NULL;

	body = jnew(json_object_new_object());
	jset(body, "Image", jstr(owner ? owner_image : dc->spec.image));
	jset(body, "Entrypoint", jstr_array(entrypoint, 3));
	jset(body, "Cmd", json_object_new_array());
	jset(body, "User", jstr(p->user));
	jset(body, "Labels", labels(dc->id, instance_id, 1));
	host = jnew(json_object_new_object());
	jset(host, "Mounts", workspace_mounts(dc->id, owner));
	jset(host, "ReadonlyRootfs", json_object_new_boolean(owner));
	jset(host, "CapDrop", jstr_array(cap_drop, 1));
	jset(host, "SecurityOpt", jstr_array(security_opt, 1));
	jset(host, "PidsLimit", json_object_new_int64(8));
	jset(host, "NetworkMode", jstr("none"));
	jset(host, "LogConfig", no_log());
	jset(body, "HostConfig", host);
	return body;
}

/* No Driver, no DriverOpts: a local volume can never become a bind. */
json_object *
hardening_volume_body(const char *id, const char *instance_id)
{
	json_object	*body;
	char		 vname[DOCKER_NAME_MAX];

	sandbox_volume_name(id, vname, sizeof(vname));
	body = jnew(json_object_new_object());
	jset(body, "Name", jstr(vname));
	jset(body, "Labels", labels(id, instance_id, 0));
	return body;
}

json_object *
hardening_network_body(const char *name)
{
	json_object	*body, *opts, *l;

	body = jnew(json_object_new_object());
	jset(body, "Name", jstr(name));
	jset(body, "CheckDuplicate", json_object_new_boolean(1));
	jset(body, "Driver", jstr("bridge"));
	opts = jnew(json_object_new_object());
	jset(opts, "com.docker.network.bridge.enable_icc", jstr("false"));
	jset(body, "Options", opts);
	l = jnew(json_object_new_object());
	jset(l, LABEL_MANAGED, jstr("true"));
	jset(body, "Labels", l);
	return body;
}

/* A command of the client's, under a wrapper, as the sandbox user. */
static json_object *
command_exec_body(const struct proxy_policy *p, const char *script,
    char *const *argv, size_t argc, const struct env_list *env,
    const char *workdir, int tty, int with_stdin)
{
	const char *const	 wrapper[] = { "/bin/sh", "-c", script, "sh" };
	json_object		*body, *cmd;
	size_t			 i;

	cmd = jstr_array(wrapper, 4);
	for (i = 0; i < argc; i++)
		jpush(cmd, jstr(argv[i]));
	body = jnew(json_object_new_object());
	jset(body, "AttachStdin", json_object_new_boolean(with_stdin));
	jset(body, "AttachStdout", json_object_new_boolean(1));
	jset(body, "AttachStderr", json_object_new_boolean(1));
	jset(body, "Tty", json_object_new_boolean(tty));
	jset(body, "Cmd", cmd);
	jset(body, "Env", env_array(env, NULL));
	jset(body, "User", jstr(p->user));
	jset(body, "WorkingDir", jstr(workdir));
	return body;
}

json_object *
hardening_exec_body(const struct proxy_policy *p, const struct docker_exec *de)
{
	return command_exec_body(p, EXEC_WRAPPER, de->argv, de->argc,
	    &de->env, de->workdir, 0, 0);
}

/* A process's stdin is always attached: its wrapper waits on it. */
json_object *
hardening_process_body(const struct proxy_policy *p,
    const struct docker_process *d)
{
	return command_exec_body(p, d->tty ? TTY_WRAPPER : PROCESS_WRAPPER,
	    d->argv, d->argc, &d->env, d->workdir, d->tty, 1);
}

/*
 * One of our scripts with its arguments (pid, unless negative, then arg
 * unless NULL), as the sandbox user, in /.
 */
static json_object *
script_exec_body(const struct proxy_policy *p, const char *script,
    long long pid, const char *arg)
{
	json_object	*body, *cmd;
	char		 pidtext[32];

	snprintf(pidtext, sizeof(pidtext), "%lld", pid);
	cmd = jnew(json_object_new_array());
	jpush(cmd, jstr("/bin/sh"));
	jpush(cmd, jstr("-c"));
	jpush(cmd, jstr(script));
	jpush(cmd, jstr("sh"));
	if (pid >= 0)
		jpush(cmd, jstr(pidtext));
	if (arg != NULL)
		jpush(cmd, jstr(arg));
	body = jnew(json_object_new_object());
	jset(body, "AttachStdin", json_object_new_boolean(0));
	jset(body, "AttachStdout", json_object_new_boolean(1));
	jset(body, "AttachStderr", json_object_new_boolean(1));
	jset(body, "Tty", json_object_new_boolean(0));
	jset(body, "Cmd", cmd);
	jset(body, "User", jstr(p->user));
	jset(body, "WorkingDir", jstr("/"));
	return body;
}

/*
 * The workspace probe of GET .../stats: du's total of /workspace in KiB,
 * as the sandbox user (it reads what the sandbox could read anyway), its
 * complaints about unreadable entries dropped so that the one line left
 * is the total.
 */
#define WORKSPACE_DU_SCRIPT	"exec du -sk /workspace 2>/dev/null"

json_object *
hardening_workspace_du_body(const struct proxy_policy *p)
{
	return script_exec_body(p, WORKSPACE_DU_SCRIPT, -1, NULL);
}

json_object *
hardening_kill_body(const struct proxy_policy *p, long long pid)
{
	return script_exec_body(p, KILL_SCRIPT, pid, NULL);
}

json_object *
hardening_signal_body(const struct proxy_policy *p, long long pid, int signo)
{
	const char	*name;

	if ((name = process_signal_name(signo)) == NULL)
		fatalx("%s: signal %d", __func__, signo);
	return script_exec_body(p, SIGNAL_SCRIPT, pid, name);
}

/* Tty as the exec was made: Docker then sends its stream unframed. */
json_object *
hardening_exec_start_body(int detach, int tty)
{
	json_object	*body;

	body = jnew(json_object_new_object());
	jset(body, "Detach", json_object_new_boolean(detach));
	jset(body, "Tty", json_object_new_boolean(tty));
	return body;
}
