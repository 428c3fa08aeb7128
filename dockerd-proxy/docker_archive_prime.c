/*
 * The bytes a primed archive write (ARCHIVE_PUT_PRIME) opens with: a pax
 * extended header ('x') holding one comment record.  Docker's tar reader
 * (Go's archive/tar) merges an 'x' header into the member after it: a
 * comment changes nothing there, and a pax header of the tar's own,
 * which comes later, replaces it whole.  A ustar block, so any reader
 * of the stream can tell what it is.
 */
#include <string.h>

#include "proxy.h"

#define PRIME_NAME	"PaxHeader/agent-sandbox-prime"
#define PRIME_RECORD	"31 comment=agent-sandbox prime\n"

void
archive_prime(unsigned char blk[2 * TAR_BLOCK])
{
	static const char	 record[] = PRIME_RECORD;

	memset(blk, 0, 2 * TAR_BLOCK);
	memcpy(blk + TAR_H_NAME, PRIME_NAME, sizeof(PRIME_NAME) - 1);
	tar_number_put(blk + TAR_H_MODE, 8, 0644);
	tar_number_put(blk + TAR_H_UID, 8, 0);
	tar_number_put(blk + TAR_H_GID, 8, 0);
	tar_number_put(blk + TAR_H_SIZE, 12, sizeof(record) - 1);
	tar_number_put(blk + TAR_H_MTIME, 12, 0);
	blk[TAR_H_TYPE] = 'x';
	memcpy(blk + TAR_H_MAGIC, "ustar", 6);
	memcpy(blk + TAR_H_VERSION, "00", 2);
	tar_checksum_put(blk);
	memcpy(blk + TAR_BLOCK, record, sizeof(record) - 1);
}
