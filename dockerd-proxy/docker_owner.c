/*
 * The workspace-owner image (docker_create.c's header says what it is
 * for): agent-sandbox/workspace-owner:<uid>-<gid>, one layer holding only
 * an empty directory "workspace/" owned by the sandbox user, mode 0755,
 * time 0.  Looked up by its tag once per process, used only if its one
 * layer is exactly that tar (its diff id is the tar's digest), imported
 * otherwise (POST /images/create?fromSrc=-, the tar as the body).  A
 * failed lookup or import is tried again after OWNER_RETRY_SECONDS;
 * creates never wait on any of it: they upload the owner meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sha2.h>

#include "log.h"
#include "proxy.h"

#define OWNER_REPO		"agent-sandbox/workspace-owner"
/* Fixed, so that the layer, and its digest, are the same every time. */
#define OWNER_MTIME		0
/* After a failed lookup or import: creates upload until then. */
#define OWNER_RETRY_SECONDS	60
#define OWNER_MAX_BODY		(64 * 1024)
#define IMAGE_MAX_BODY		(4 * 1024 * 1024)

enum owner_state {
	OWNER_NONE,		/* to look up at the next create */
	OWNER_ASKING,		/* the lookup or the import is out */
	OWNER_READY
};

/*
 * One per process: the policy's user, hence the image, never changes.
 * Creates never wait on it; they upload while it is not ready.
 */
static struct {
	enum owner_state	 state;
	time_t			 retry_after;
	char			 tag[32];		/* "<uid>-<gid>" */
	char			 layer[IMAGE_ID_MAX];	/* its one diff id */
	char			 id[IMAGE_ID_MAX];
	unsigned char		 tar[TAR_DIR_ARCHIVE_LEN];
	/* The import's answer, read line by line. */
	struct docker_lines	 lines;
	char			 answer_id[IMAGE_ID_MAX];
	char			 answer_error[1024];
} owner;


static int	image_id_valid(const char *);

static int
answered(const struct docker_result *res, int status)
{
	return docker_result_answered(res) && res->status == status;
}

static void
owner_ready(const char *id, const char *how)
{
	strlcpy(owner.id, id, sizeof(owner.id));
	owner.state = OWNER_READY;
	log_info("%s workspace-owner image %s:%s, %s", how, OWNER_REPO,
	    owner.tag, owner.id);
}

static void
owner_failed(const char *what, const struct docker_result *res,
    const char *said)
{
	char	 text[1024];

	if (said == NULL) {
		docker_result_error_plain(res, what, text, sizeof(text));
		said = text;
	}
	owner.state = OWNER_NONE;
	owner.retry_after = time(NULL) + OWNER_RETRY_SECONDS;
	log_warnx("%s; creates upload the owner of /workspace instead, "
	    "another try in %d s", said, OWNER_RETRY_SECONDS);
}

/* A create found the image gone: the next one looks again. */
void
owner_image_lost(const char *id)
{
	if (owner.state != OWNER_READY || strcmp(owner.id, id) != 0)
		return;
	log_info("workspace-owner image %s is gone", id);
	owner.state = OWNER_NONE;
	owner.retry_after = 0;
}

static void
owner_answer_line(void *arg, const char *line, size_t len)
{
	json_tokener	*tok;
	json_object	*obj;
	const char	*s;

	if ((tok = json_tokener_new()) == NULL)
		return;
	obj = json_tokener_parse_ex(tok, line, (int)len);
	json_tokener_free(tok);
	if ((s = docker_stream_error(obj)) != NULL)
		strlcpy(owner.answer_error, s, sizeof(owner.answer_error));
	else if ((s = json_get_string(obj, "status")) != NULL &&
	    image_id_valid(s))
		strlcpy(owner.answer_id, s, sizeof(owner.answer_id));
	json_object_put(obj);
}

/* Docker's answer: lines of {"status": ...}, the id last, or an error. */
static void
owner_imported(const struct docker_result *res, void *arg)
{
	char	 text[1200];

	if (!answered(res, 200)) {
		owner_failed("cannot import the workspace-owner image", res,
		    NULL);
		return;
	}
	owner.answer_id[0] = owner.answer_error[0] = '\0';
	docker_lines_init(&owner.lines, OWNER_MAX_BODY, owner_answer_line,
	    NULL);
	docker_lines_feed(&owner.lines, res->resp->body, res->resp->body_len);
	docker_lines_end(&owner.lines);
	docker_lines_free(&owner.lines);
	if (owner.answer_error[0] != '\0' || owner.answer_id[0] == '\0') {
		snprintf(text, sizeof(text), "cannot import the "
		    "workspace-owner image: %s", owner.answer_error[0] != '\0' ?
		    owner.answer_error : "Docker answered without its id");
		owner_failed(NULL, res, text);
		return;
	}
	owner_ready(owner.answer_id, "imported");
}

static void
owner_import(struct proxy *px)
{
	char	 path[256];

	if (docker_path(path, sizeof(path), DOCKER_API
	    "/images/create?fromSrc=-&repo=%s&tag=%s", OWNER_REPO,
	    owner.tag) == -1)
		fatalx("%s: path", __func__);
	docker_call_raw(px, "POST", path, "application/x-tar", owner.tar,
	    sizeof(owner.tar), OWNER_MAX_BODY, owner_imported, px);
}

static int
image_id_valid(const char *s)
{
	return s != NULL && strncmp(s, "sha256:", 7) == 0 &&
	    valid_docker_id(s + 7);
}

/*
 * Only an image whose one layer is our own tar, byte for byte (its diff
 * id is the tar's digest), can put nothing but the directory in.
 */
static int
owner_image_is_ours(json_object *img)
{
	json_object	*rootfs, *layers;
	const char	*layer;

	if (!json_object_object_get_ex(img, "RootFS", &rootfs) ||
	    !json_object_object_get_ex(rootfs, "Layers", &layers) ||
	    !json_object_is_type(layers, json_type_array) ||
	    json_object_array_length(layers) != 1)
		return 0;
	layer = json_object_get_string(json_object_array_get_idx(layers, 0));
	return layer != NULL && strcmp(layer, owner.layer) == 0 &&
	    image_id_valid(json_get_string(img, "Id"));
}

static void
owner_inspected(const struct docker_result *res, void *arg)
{
	struct proxy	*px = arg;
	json_object	*img;
	char		 id[IMAGE_ID_MAX];
	int		 ours;

	if (answered(res, 200)) {
		img = docker_json_parse(res->resp);
		ours = owner_image_is_ours(img);
		if (ours)
			strlcpy(id, json_get_string(img, "Id"), sizeof(id));
		json_object_put(img);
		if (ours) {
			owner_ready(id, "found");
			return;
		}
		log_info("%s:%s is not the workspace-owner image this server "
		    "makes; importing it", OWNER_REPO, owner.tag);
	} else if (!answered(res, 404)) {
		owner_failed("cannot look up the workspace-owner image", res,
		    NULL);
		return;
	}
	owner_import(px);
}

/* Called by every create; asks Docker only while the image is not known. */
void
owner_image_ensure(struct proxy *px)
{
	const struct proxy_policy	*pol = &px->settings.policy;
	char				 ref[128], path[256];
	char				 digest[SHA256_DIGEST_STRING_LENGTH];

	if (owner.state != OWNER_NONE || time(NULL) < owner.retry_after)
		return;
	if (owner.tag[0] == '\0') {
		snprintf(owner.tag, sizeof(owner.tag), "%u-%u", pol->uid,
		    pol->gid);
		if (tar_dir_archive(owner.tar, "workspace/", 0755, pol->uid,
		    pol->gid, OWNER_MTIME) == -1)
			fatalx("%s: tar header", __func__);
		SHA256Data(owner.tar, sizeof(owner.tar), digest);
		snprintf(owner.layer, sizeof(owner.layer), "sha256:%s",
		    digest);
	}
	owner.state = OWNER_ASKING;
	snprintf(ref, sizeof(ref), "%s:%s", OWNER_REPO, owner.tag);
	if (docker_path(path, sizeof(path), DOCKER_API "/images/%s/json",
	    ref) == -1)
		fatalx("%s: path", __func__);
	docker_call(px, "GET", path, NULL, IMAGE_MAX_BODY, owner_inspected,
	    px);
}

/* The image's id once it is known to be ours, else NULL. */
const char *
owner_image_id(void)
{
	return owner.state == OWNER_READY ? owner.id : NULL;
}

