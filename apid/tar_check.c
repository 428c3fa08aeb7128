/*
 * managerd's MSG_TAR_CHECK (API.md §7.3): before a stored snapshot is
 * imported into a sandbox, a CHECK job in the archive worker reads every
 * member header, and apid answers TAR_CHECKED with the same peerid:
 * errnum 0, or EINVAL naming the member that may not be there (EPIPE if
 * the worker died, EMFILE if apid was out of descriptors).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apid.h"
#include "log.h"

struct tar_check {
	struct peer	*peer;
	uint32_t	 peerid;
};

static void
tar_check_done(const struct tar_result *res, void *arg)
{
	struct tar_check	*tc = arg;
	struct msgw		 w;

	if (res->errnum != 0)
		log_info("snapshot check failed: %s", res->message != NULL ?
		    res->message : "unknown error");
	msgw_init(&w);
	msg_put_tar_result(&w, res);
	if (peer_send(tc->peer, MSG_TAR_CHECKED, tc->peerid, -1, &w) == -1)
		log_warnx("cannot answer a snapshot check");
	free(tc);
}

void
tar_check_request(struct peer *p, struct imsg *imsg)
{
	struct tar_job_spec	 spec;
	struct tar_check	*tc;
	struct tar_result	 res;
	struct msgw		 w;
	char			 msg[] = "cannot start the snapshot check";
	char			 lost[] = "apid is out of descriptors";

	if ((imsg->fd == -1 && !imsg->fd_lost) || imsg->len != 0)
		peer_bad_message(p, imsg, "TAR_CHECK needs a descriptor and "
		    "no payload");
	/* Dropped on the way in: the check cannot run now. */
	if (imsg->fd_lost) {
		res.errnum = EMFILE;
		goto fail;
	}
	if ((tc = calloc(1, sizeof(*tc))) == NULL) {
		res.errnum = ENOMEM;
		goto fail;
	}
	tc->peer = p;
	tc->peerid = imsg->hdr.peerid;
	memset(&spec, 0, sizeof(spec));
	spec.kind = TAR_JOB_CHECK;
	spec.in_fd = imsg_take_fd(imsg);
	spec.out_fd = -1;
	spec.done = tar_check_done;
	spec.arg = tc;
	if (tar_job_start(&spec) == 0)
		return;
	res.errnum = errno != 0 ? errno : EIO;
	free(tc);
 fail:
	log_warn("cannot start a snapshot check");
	res.bytes = 0;
	res.message = imsg->fd_lost ? lost : msg;
	msgw_init(&w);
	msg_put_tar_result(&w, &res);
	if (peer_send(p, MSG_TAR_CHECKED, imsg->hdr.peerid, -1, &w) == -1)
		log_warnx("cannot answer a snapshot check");
}
