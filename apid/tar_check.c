/* Placeholder: replaced by the snapshot import check. */
#include "log.h"
#include "apid.h"

void
tar_check_request(struct peer *p, struct imsg *imsg)
{
	peer_bad_message(p, imsg, "not implemented");
}
