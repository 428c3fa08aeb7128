/*
 * Create a sandbox, API.md §11.1: image (pulled if missing), volume,
 * network when asked for, container, ownership of /workspace, start.
 *
 * /workspace, the root of a fresh volume, goes to the sandbox user without
 * running anything, through a sibling container ("-init") that is created
 * with the same volume and never started.  The sibling comes from the
 * workspace-owner image: one layer holding only an empty directory
 * "workspace/" owned by the sandbox user, mode 0755.  Its mount of the
 * volume lets Docker copy the image's /workspace into the empty volume,
 * which Docker does while it creates the container, in its own process:
 * the owner, the mode, the time, no entries.  The image is looked up by
 * its tag (agent-sandbox/workspace-owner:<uid>-<gid>) and used only if its
 * one layer is exactly that directory, imported otherwise; once per
 * process, off every create's path.  Siblings are created from its id.
 *
 * Until the image is known, or when Docker or a socket proxy refuses to
 * import it, the sibling comes from the sandbox's own image with a
 * writable root (Docker refuses archive uploads outside volumes into a
 * read-only root) and is given a one-entry tar, "workspace/" carrying the
 * user's uid and gid: Docker applies those to the volume's root.  That
 * upload costs Docker a re-execution of its own binary, 115-145 ms.  An
 * image gone between two creates (an image prune) makes that create
 * upload and the next one import the image again.
 *
 * Once the volume exists, two branches run at the same time: the sibling
 * (and the upload), and the network and the sandbox's own create.  The
 * sandbox starts only when both are over, so the volume is the user's
 * before anything runs in it.  The sibling is removed once the sandbox has
 * started, without holding up the reply; should that fail, the sandbox's
 * destroy removes it.
 *
 * Any failure tears down what exists under the sandbox's names, each
 * object only if it carries our labels, then reports the first error, in
 * the order network, workspace, container; the teardown waits until no
 * branch has a request out, so nothing is made behind it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker_http.h"
#include "log.h"
#include "proxy.h"
#include "xmalloc.h"

#define CREATE_MAX_BODY		(1024 * 1024)
#define IMAGE_MAX_BODY		(4 * 1024 * 1024)
/* One JSON line of the pull progress stream; longer ones are skipped. */
#define PULL_LINE_MAX		(64 * 1024)
#define REF_PART_MAX		1024


/* What the branches can fail at, in the order the first is reported. */
enum create_step {
	STEP_NETWORK,
	STEP_WORKSPACE,		/* the sibling's create, or its upload */
	STEP_CONTAINER,
	STEP_COUNT
};

struct create_failure {
	enum error_kind		 kind;		/* 0 if none */
	char			 text[2048];
};

struct create {
	struct proxy		*px;
	uint32_t		 peerid;
	struct docker_create	 dc;
	char			 cid[DOCKER_ID_LEN + 1];
	char			 prep_id[DOCKER_ID_LEN + 1];
	/* The sibling's image: the owner image's id, "" to upload. */
	char			 prep_image[IMAGE_ID_MAX];
	/* The pull's progress stream, read line by line. */
	struct docker_lines	 lines;
	char			 pull_error[1024];
	/* Branches with a request still out, and how each one ended. */
	int			 branches;
	struct create_failure	 failed[STEP_COUNT];
	/* The failure being reported, and whether it has been. */
	enum error_kind		 kind;
	char			 text[2048];
	int			 replied;
};

/* The sibling container, removed after the reply. */
struct prep_removal {
	char			 name[DOCKER_NAME_MAX];
};

static void	create_volume(struct create *);
static void	create_container(struct create *);
static void	create_prep(struct create *, int upload);

static void
create_free(struct create *c)
{
	docker_create_free(&c->dc);
	docker_lines_free(&c->lines);
	free(c);
}

static void
create_cleaned(void *arg, enum error_kind kind, const char *text)
{
	struct create	*c = arg;

	if (kind != 0)
		log_warnx("cleaning up after a failed create of %s: %s",
		    c->dc.id, text);
	if (!c->replied)
		peer_send_error(&c->px->parent, c->peerid, c->kind, "%s",
		    c->text);
	create_free(c);
}

static void
create_fail(struct create *c, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
create_fail(struct create *c, enum error_kind kind, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
	va_end(ap);
	c->kind = kind;
	log_info("create %s failed: %s", c->dc.id, c->text);
	/*
	 * A hung Docker would hold the answer for the teardown's own
	 * deadline too: answer now; what the teardown cannot remove has no
	 * record and goes at the next start's reconciliation.
	 */
	if (kind == ERR_TIMEOUT) {
		peer_send_error(&c->px->parent, c->peerid, kind, "%s",
		    c->text);
		c->replied = 1;
	}
	sandbox_teardown(c->px, c->dc.id, create_cleaned, c);
}

/* The usual mapping: "create sandbox from <image>: <Docker's words>". */
static enum error_kind
create_result_error(struct create *c, const struct docker_result *res,
    char *text, size_t len)
{
	char	 what[1200];

	snprintf(what, sizeof(what), "create sandbox from %s",
	    c->dc.spec.image);
	return docker_result_error_plain(res, what, text, len);
}

static void
create_fail_result(struct create *c, const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 text[2048];

	kind = create_result_error(c, res, text, sizeof(text));
	create_fail(c, kind, "%s", text);
}

static int
answered(const struct docker_result *res, int status)
{
	return docker_result_answered(res) && res->status == status;
}

/* --- 6. start, then the sibling goes ------------------------------------- */

static void
prep_removed(const struct docker_result *res, void *arg)
{
	struct prep_removal	*r = arg;
	char			 what[128], text[1024];

	if (answered(res, 204) || answered(res, 404))
		log_debug("removed container %s", r->name);
	else if (answered(res, 409))
		log_debug("container %s is being removed already", r->name);
	else {
		snprintf(what, sizeof(what), "remove container %s", r->name);
		docker_result_error_plain(res, what, text, sizeof(text));
		log_warnx("%s; it goes when the sandbox is destroyed", text);
	}
	free(r);
}

/* Off the reply's path: nothing runs in it, only its layer is left. */
static void
prep_remove(struct create *c)
{
	struct prep_removal	*r;
	char			 path[256];

	r = xcalloc(1, sizeof(*r));
	sandbox_prep_name(c->dc.id, r->name, sizeof(r->name));
	/* By id, like every removal; v: anonymous volumes of the image. */
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s?force=true&v=true", c->prep_id) == -1)
		fatalx("%s: path", __func__);
	docker_call(c->px, "DELETE", path, NULL, CREATE_MAX_BODY,
	    prep_removed, r);
}

static void
create_started(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (!answered(res, 204) && !answered(res, 304)) {
		create_fail_result(c, res);
		return;
	}
	log_info("created sandbox %s from %s", c->dc.id, c->dc.spec.image);
	/* Out before the reply: Docker has it before managerd records. */
	prep_remove(c);
	peer_send(&c->px->parent, MSG_DOCKER_DONE, c->peerid, -1, NULL);
	create_free(c);
}

static void
create_start(struct create *c)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API "/containers/%s/start",
	    c->cid) == -1)
		fatalx("%s: path", __func__);
	docker_call(c->px, "POST", path, NULL, CREATE_MAX_BODY,
	    create_started, c);
}

/* --- the branches meet ---------------------------------------------------- */

/* A branch is over: the last one out starts the sandbox or tears down. */
static void
branch_done(struct create *c)
{
	struct create_failure	*f;
	size_t			 i;

	if (--c->branches > 0)
		return;
	for (i = 0; i < STEP_COUNT; i++) {
		f = &c->failed[i];
		if (f->kind != 0) {
			create_fail(c, f->kind, "%s", f->text);
			return;
		}
	}
	create_start(c);
}

static void
branch_fail(struct create *c, enum create_step step, enum error_kind kind,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
branch_fail(struct create *c, enum create_step step, enum error_kind kind,
    const char *fmt, ...)
{
	struct create_failure	*f = &c->failed[step];
	va_list			 ap;

	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
	f->kind = kind;
	log_debug("create %s: %s", c->dc.id, f->text);
	branch_done(c);
}

static void
branch_fail_result(struct create *c, enum create_step step,
    const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 text[2048];

	kind = create_result_error(c, res, text, sizeof(text));
	branch_fail(c, step, kind, "%s", text);
}

/* --- 3. /workspace to the sandbox user, without a chown helper ------------ */

static void
create_workspace_owned(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;
	char		 msg[1024];

	if (!answered(res, 200)) {
		if (!docker_result_answered(res)) {
			branch_fail_result(c, STEP_WORKSPACE, res);
			return;
		}
		docker_error_message(res->resp, msg, sizeof(msg));
		branch_fail(c, STEP_WORKSPACE, res->status < 500 ?
		    ERR_INVALID_REQUEST : ERR_BACKEND, "image %s cannot "
		    "prepare the workspace: %s", c->dc.spec.image, msg);
		return;
	}
	branch_done(c);
}

/* The fallback: a one-entry tar, uploaded through the sibling. */
static void
create_upload_owner(struct create *c)
{
	const struct proxy_policy	*pol = &c->px->settings.policy;
	unsigned char			 tar[TAR_DIR_ARCHIVE_LEN];
	char				 path[256];

	if (tar_dir_archive(tar, "workspace/", 0755, pol->uid, pol->gid,
	    (long long)time(NULL)) == -1)
		fatalx("%s: tar header", __func__);
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s/archive?path=%s", c->prep_id, "/") == -1)
		fatalx("%s: path", __func__);
	docker_call_raw(c->px, "PUT", path, "application/x-tar", tar,
	    sizeof(tar), CREATE_MAX_BODY, create_workspace_owned, c);
}

/* The Id of a created container, or NULL. */
static int
created_id(const struct docker_result *res, char *id, size_t len)
{
	json_object	*obj;
	const char	*s;
	int		 ok;

	obj = docker_json_parse(res->resp);
	s = json_get_string(obj, "Id");
	ok = valid_docker_id(s) && strlcpy(id, s, len) < len;
	json_object_put(obj);
	return ok ? 0 : -1;
}

static void
create_prep_created(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	/* Only the image can be missing: it went since it was found. */
	if (c->prep_image[0] != '\0' && answered(res, 404)) {
		owner_image_lost(c->prep_image);
		create_prep(c, 1);
		return;
	}
	if (!answered(res, 201)) {
		branch_fail_result(c, STEP_WORKSPACE, res);
		return;
	}
	if (created_id(res, c->prep_id, sizeof(c->prep_id)) == -1) {
		branch_fail(c, STEP_WORKSPACE, ERR_BACKEND, "create sandbox "
		    "from %s: Docker answered without a container id",
		    c->dc.spec.image);
		return;
	}
	/* From the owner image, Docker copied the owner in as it created. */
	if (c->prep_image[0] != '\0')
		branch_done(c);
	else
		create_upload_owner(c);
}

/* POST /containers/create?name=<name> with a body from hardening.c. */
static void
create_post_container(struct create *c, const char *name, json_object *body,
    docker_call_cb done)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/create?name=%s", name) == -1)
		fatalx("%s: path", __func__);
	docker_call(c->px, "POST", path, body, CREATE_MAX_BODY, done, c);
	json_object_put(body);
}

static void
create_prep(struct create *c, int upload)
{
	char	 name[DOCKER_NAME_MAX];

	if (!upload && owner_image_id() != NULL)
		strlcpy(c->prep_image, owner_image_id(), sizeof(c->prep_image));
	else
		c->prep_image[0] = '\0';
	sandbox_prep_name(c->dc.id, name, sizeof(name));
	create_post_container(c, name,
	    hardening_prep_body(&c->px->settings.policy, &c->dc,
	    c->px->settings.instance_id,
	    c->prep_image[0] != '\0' ? c->prep_image : NULL),
	    create_prep_created);
}

/* --- 5. the container ----------------------------------------------------- */

static void
create_container_created(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (!answered(res, 201)) {
		branch_fail_result(c, STEP_CONTAINER, res);
		return;
	}
	if (created_id(res, c->cid, sizeof(c->cid)) == -1) {
		branch_fail(c, STEP_CONTAINER, ERR_BACKEND, "create sandbox "
		    "from %s: Docker answered without a container id",
		    c->dc.spec.image);
		return;
	}
	branch_done(c);
}

static void
create_container(struct create *c)
{
	char	 name[DOCKER_NAME_MAX];

	sandbox_container_name(c->dc.id, name, sizeof(name));
	create_post_container(c, name,
	    hardening_container_body(&c->px->settings.policy, &c->dc,
	    c->px->settings.instance_id),
	    create_container_created);
}

/* --- 4. network ----------------------------------------------------------- */

static void
create_network_ready(void *arg, enum error_kind kind, const char *text)
{
	struct create	*c = arg;

	if (kind != 0) {
		branch_fail(c, STEP_NETWORK, kind, "create sandbox from %s: %s",
		    c->dc.spec.image, text);
		return;
	}
	create_container(c);
}

/* Every callback of a branch ends in branch_done, exactly once. */
static void
create_branches(struct create *c)
{
	c->branches = 2;
	create_prep(c, 0);
	if (c->dc.spec.network)
		network_ensure(c->px, c->px->settings.policy.network_name,
		    create_network_ready, c);
	else
		create_container(c);
}

/* --- 2. volume ------------------------------------------------------------ */

static void
create_volume_created(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;
	json_object	*obj, *labels = NULL;
	char		 name[DOCKER_NAME_MAX], text[256];
	int		 ours;

	if (!answered(res, 201)) {
		create_fail_result(c, res);
		return;
	}
	/* Docker hands back an existing volume of that name as it is. */
	obj = docker_json_parse(res->resp);
	json_object_object_get_ex(obj, "Labels", &labels);
	ours = labels_are_ours(labels, c->dc.id, c->px->settings.instance_id);
	json_object_put(obj);
	if (!ours) {
		sandbox_volume_name(c->dc.id, name, sizeof(name));
		refuse_not_ours("use volume", name, text, sizeof(text));
		create_fail(c, ERR_FORBIDDEN, "create sandbox from %s: %s",
		    c->dc.spec.image, text);
		return;
	}
	create_branches(c);
}

static void
create_volume(struct create *c)
{
	json_object	*body;

	body = hardening_volume_body(c->dc.id, c->px->settings.instance_id);
	docker_call(c->px, "POST", DOCKER_API "/volumes/create", body,
	    CREATE_MAX_BODY, create_volume_created, c);
	json_object_put(body);
}

/* --- 1. image ------------------------------------------------------------- */

/* One line of the pull stream: {"status": ...} or {"error": ...}. */
static void
pull_line(void *arg, const char *line, size_t len)
{
	struct create	*c = arg;
	json_tokener	*tok;
	json_object	*obj;
	const char	*msg;

	if ((tok = json_tokener_new()) == NULL)
		return;
	obj = json_tokener_parse_ex(tok, line, (int)len);
	json_tokener_free(tok);
	if ((msg = docker_stream_error(obj)) != NULL)
		strlcpy(c->pull_error, msg, sizeof(c->pull_error));
	json_object_put(obj);
}

static int
pull_body(struct docker_request *req, const unsigned char *data, size_t len,
    void *arg)
{
	struct create		*c = arg;

	docker_lines_feed(&c->lines, data, len);
	return 0;
}

static void
pull_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct create	*c = arg;
	char		 msg[1024];

	if (error == DOCKER_HTTP_OK)
		docker_lines_end(&c->lines);
	if (error != DOCKER_HTTP_OK)
		create_fail(c, docker_http_error_kind(error),
		    "cannot pull image %s: %s", c->dc.spec.image,
		    docker_http_strerror(error));
	else if (resp->status != 200) {
		docker_error_message(resp, msg, sizeof(msg));
		create_fail(c, ERR_INVALID_REQUEST, "cannot pull image %s: %s",
		    c->dc.spec.image, msg);
	} else if (c->pull_error[0] != '\0')
		create_fail(c, ERR_INVALID_REQUEST, "cannot pull image %s: %s",
		    c->dc.spec.image, c->pull_error);
	else {
		log_info("pulled image %s", c->dc.spec.image);
		create_volume(c);
	}
}

static void
create_pull(struct create *c)
{
	struct docker_request_spec	 spec;
	char				 repo[REF_PART_MAX], tag[REF_PART_MAX];
	char				 path[4096];
	int				 r;

	if (image_ref_split(c->dc.spec.image, repo, sizeof(repo), tag,
	    sizeof(tag)) == -1)
		fatalx("%s: image reference", __func__);
	/* With a digest, the reference itself says what to pull. */
	if (tag[0] == '\0')
		r = docker_path(path, sizeof(path), DOCKER_API
		    "/images/create?fromImage=%s", repo);
	else
		r = docker_path(path, sizeof(path), DOCKER_API
		    "/images/create?fromImage=%s&tag=%s", repo, tag);
	if (r == -1)
		fatalx("%s: path", __func__);
	docker_lines_init(&c->lines, PULL_LINE_MAX, pull_line, c);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = path;
	spec.max_body = CREATE_MAX_BODY;
	spec.on_body = pull_body;
	spec.on_done = pull_done;
	spec.arg = c;
	log_info("pulling image %s", c->dc.spec.image);
	if (docker_request_new(c->px->base, c->px->settings.docker_endpoint,
	    &spec) == NULL)
		create_fail(c, docker_start_error_kind(errno),
		    "cannot pull image %s: %s", c->dc.spec.image,
		    strerror(errno));
}

static void
create_image_inspected(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (answered(res, 200)) {
		create_volume(c);
		return;
	}
	if (answered(res, 404)) {
		create_pull(c);
		return;
	}
	create_fail_result(c, res);
}

void
docker_create(struct proxy *px, uint32_t peerid, struct docker_create *dc)
{
	struct create	*c;
	const char	*why;
	char		 path[4096];

	c = xcalloc(1, sizeof(*c));
	c->px = px;
	c->peerid = peerid;
	c->dc = *dc;
	memset(dc, 0, sizeof(*dc));
	if ((why = hardening_check_create(&px->settings.policy, &c->dc)) !=
	    NULL) {
		peer_send_error(&px->parent, peerid, ERR_INVALID_REQUEST,
		    "create sandbox from %s: %s", c->dc.spec.image, why);
		create_free(c);
		return;
	}
	if (!valid_image_ref(c->dc.spec.image)) {
		peer_send_error(&px->parent, peerid, ERR_INVALID_REQUEST,
		    "cannot pull image %s: invalid reference format",
		    c->dc.spec.image);
		create_free(c);
		return;
	}
	log_debug("create sandbox %s from %s", c->dc.id, c->dc.spec.image);
	/* A rollback's new container: the old one's id is no use. */
	container_cache_forget(c->dc.id);
	owner_image_ensure(px);
	if (docker_path(path, sizeof(path), DOCKER_API "/images/%s/json",
	    c->dc.spec.image) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, IMAGE_MAX_BODY,
	    create_image_inspected, c);
}
