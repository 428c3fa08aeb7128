/*
 * Create a sandbox, API.md §11.1: image (pulled if missing), volume,
 * network when asked for, container, ownership of /workspace, start.
 *
 * /workspace goes to the sandbox user without running anything: an
 * archive upload of a single directory header "workspace/" carrying the
 * user's uid and gid makes Docker chown the volume's root.  Docker refuses
 * uploads outside volumes into a container with a read-only root, so for
 * those (the default) the upload goes through a sibling container that is
 * created with a writable root, the same volume, and never started.
 *
 * Any failure tears down what exists under the sandbox's names, each
 * object only if it carries our labels, then reports the first error.
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

struct create {
	struct proxy		*px;
	uint32_t		 peerid;
	struct docker_create	 dc;
	int			 use_prep;
	char			 cid[DOCKER_ID_LEN + 1];
	char			 prep_id[DOCKER_ID_LEN + 1];
	/* The pull's progress stream, read line by line. */
	char			*line;
	size_t			 line_len;
	int			 line_skip;
	char			 pull_error[1024];
	/* The failure being reported. */
	enum error_kind		 kind;
	char			 text[2048];
};

static void	create_volume(struct create *);
static void	create_after_network(struct create *);
static void	create_container(struct create *);

static void
create_free(struct create *c)
{
	docker_create_free(&c->dc);
	free(c->line);
	free(c);
}

static void
create_cleaned(void *arg, enum error_kind kind, const char *text)
{
	struct create	*c = arg;

	if (kind != 0)
		log_warnx("cleaning up after a failed create of %s: %s",
		    c->dc.id, text);
	peer_send_error(&c->px->parent, c->peerid, c->kind, "%s", c->text);
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
	sandbox_teardown(c->px, c->dc.id, create_cleaned, c);
}

/* The usual mapping: "create sandbox from <image>: <Docker's words>". */
static void
create_fail_result(struct create *c, const struct docker_result *res)
{
	enum error_kind	 kind;
	char		 what[1200], text[2048];

	snprintf(what, sizeof(what), "create sandbox from %s",
	    c->dc.spec.image);
	kind = docker_result_error_plain(res, what, text, sizeof(text));
	create_fail(c, kind, "%s", text);
}

static int
answered(const struct docker_result *res, int status)
{
	return docker_result_answered(res) && res->status == status;
}

/* --- 6. start ------------------------------------------------------------- */

static void
create_started(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (!answered(res, 204) && !answered(res, 304)) {
		create_fail_result(c, res);
		return;
	}
	log_info("created sandbox %s from %s", c->dc.id, c->dc.spec.image);
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

/* --- 3. /workspace to the sandbox user, without a chown helper ------------ */

static void
create_prep_removed(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (!answered(res, 204) && !answered(res, 404)) {
		create_fail_result(c, res);
		return;
	}
	create_container(c);
}

static void
create_workspace_owned(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;
	char		 msg[1024], path[256];

	if (!answered(res, 200)) {
		if (!docker_result_answered(res)) {
			create_fail_result(c, res);
			return;
		}
		docker_error_message(res->resp, msg, sizeof(msg));
		create_fail(c, res->status < 500 ? ERR_INVALID_REQUEST :
		    ERR_BACKEND, "image %s cannot prepare the workspace: %s",
		    c->dc.spec.image, msg);
		return;
	}
	if (!c->use_prep) {
		create_start(c);
		return;
	}
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s?force=true", c->prep_id) == -1)
		fatalx("%s: path", __func__);
	docker_call(c->px, "DELETE", path, NULL, CREATE_MAX_BODY,
	    create_prep_removed, c);
}

static void
create_own_workspace(struct create *c, const char *target)
{
	unsigned char	 tar[TAR_DIR_ARCHIVE_LEN];
	char		 path[256];

	if (tar_dir_archive(tar, "workspace/", 0755, c->dc.uid, c->dc.gid,
	    (long long)time(NULL)) == -1)
		fatalx("%s: tar header", __func__);
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/%s/archive?path=%s", target, "/") == -1)
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

	if (!answered(res, 201)) {
		create_fail_result(c, res);
		return;
	}
	if (created_id(res, c->prep_id, sizeof(c->prep_id)) == -1) {
		create_fail(c, ERR_BACKEND, "create sandbox from %s: Docker "
		    "answered without a container id", c->dc.spec.image);
		return;
	}
	create_own_workspace(c, c->prep_id);
}

static void
create_prep(struct create *c)
{
	json_object	*body;
	char		 name[DOCKER_NAME_MAX], path[256];

	sandbox_prep_name(c->dc.id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/create?name=%s", name) == -1)
		fatalx("%s: path", __func__);
	body = hardening_prep_body(&c->dc, c->px->settings.instance_id);
	docker_call(c->px, "POST", path, body, CREATE_MAX_BODY,
	    create_prep_created, c);
	json_object_put(body);
}

/* --- 5. the container ----------------------------------------------------- */

static void
create_container_created(const struct docker_result *res, void *arg)
{
	struct create	*c = arg;

	if (!answered(res, 201)) {
		create_fail_result(c, res);
		return;
	}
	if (created_id(res, c->cid, sizeof(c->cid)) == -1) {
		create_fail(c, ERR_BACKEND, "create sandbox from %s: Docker "
		    "answered without a container id", c->dc.spec.image);
		return;
	}
	if (c->use_prep)
		create_start(c);
	else
		create_own_workspace(c, c->cid);
}

static void
create_container(struct create *c)
{
	json_object	*body;
	char		 name[DOCKER_NAME_MAX], path[256];

	sandbox_container_name(c->dc.id, name, sizeof(name));
	if (docker_path(path, sizeof(path), DOCKER_API
	    "/containers/create?name=%s", name) == -1)
		fatalx("%s: path", __func__);
	body = hardening_container_body(&c->dc, c->px->settings.instance_id);
	docker_call(c->px, "POST", path, body, CREATE_MAX_BODY,
	    create_container_created, c);
	json_object_put(body);
}

static void
create_after_network(struct create *c)
{
	if (c->use_prep)
		create_prep(c);
	else
		create_container(c);
}

/* --- 4. network ----------------------------------------------------------- */

static void
create_network_ready(void *arg, enum error_kind kind, const char *text)
{
	struct create	*c = arg;

	if (kind != 0) {
		create_fail(c, kind, "create sandbox from %s: %s",
		    c->dc.spec.image, text);
		return;
	}
	create_after_network(c);
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
	if (c->dc.spec.network)
		network_ensure(c->px, c->dc.network_name,
		    create_network_ready, c);
	else
		create_after_network(c);
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
pull_line(struct create *c, const char *line, size_t len)
{
	json_tokener	*tok;
	json_object	*obj, *detail;
	const char	*msg;

	if (len == 0 || (tok = json_tokener_new()) == NULL)
		return;
	obj = json_tokener_parse_ex(tok, line, (int)len);
	json_tokener_free(tok);
	msg = json_get_string(obj, "error");
	if (msg == NULL && json_object_object_get_ex(obj, "errorDetail",
	    &detail))
		msg = json_get_string(detail, "message");
	if (msg != NULL)
		strlcpy(c->pull_error, msg, sizeof(c->pull_error));
	json_object_put(obj);
}

static int
pull_body(struct docker_request *req, const unsigned char *data, size_t len,
    void *arg)
{
	struct create		*c = arg;
	const unsigned char	*nl;
	size_t			 n;

	while (len > 0) {
		nl = memchr(data, '\n', len);
		n = nl != NULL ? (size_t)(nl - data) : len;
		if (!c->line_skip && c->line_len + n <= PULL_LINE_MAX) {
			memcpy(c->line + c->line_len, data, n);
			c->line_len += n;
		} else
			c->line_skip = 1;
		if (nl != NULL) {
			if (!c->line_skip)
				pull_line(c, c->line, c->line_len);
			c->line_len = 0;
			c->line_skip = 0;
			n++;
		}
		data += n;
		len -= n;
	}
	return 0;
}

static void
pull_done(struct docker_request *req, enum docker_http_error error,
    const struct docker_response *resp, void *arg)
{
	struct create	*c = arg;
	char		 msg[1024];

	if (error == DOCKER_HTTP_OK && c->line_len > 0 && !c->line_skip)
		pull_line(c, c->line, c->line_len);
	if (error != DOCKER_HTTP_OK)
		create_fail(c, ERR_BACKEND, "cannot pull image %s: %s",
		    c->dc.spec.image, docker_http_strerror(error));
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
	c->line = xmalloc(PULL_LINE_MAX);
	memset(&spec, 0, sizeof(spec));
	spec.method = "POST";
	spec.path = path;
	spec.max_body = CREATE_MAX_BODY;
	spec.on_body = pull_body;
	spec.on_done = pull_done;
	spec.arg = c;
	log_info("pulling image %s", c->dc.spec.image);
	if (docker_request_new(c->px->base, c->px->settings.docker_socket,
	    &spec) == NULL)
		create_fail(c, ERR_BACKEND, "cannot pull image %s: %s",
		    c->dc.spec.image, strerror(errno));
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
	c->use_prep = c->dc.spec.read_only_rootfs;
	if ((why = hardening_check_create(&c->dc)) != NULL) {
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
	if (docker_path(path, sizeof(path), DOCKER_API "/images/%s/json",
	    c->dc.spec.image) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, IMAGE_MAX_BODY,
	    create_image_inspected, c);
}
