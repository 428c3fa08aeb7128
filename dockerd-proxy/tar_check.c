/*
 * The check on every tar dockerd-proxy writes into a sandbox (uploads,
 * rollbacks, forks), as it streams through to Docker's archive PUT:
 * whatever managerd, apid or the archive worker made, Docker extracts
 * only what a sandbox user could have made in /workspace.  Docker
 * extracts as root, so this is the line between an upload and root in
 * the container.
 *
 * Refused: a name that is absolute, has a ".." component or passes
 * TAR_CHECK_NAME_MAX bytes; a member under a symlink made earlier in the
 * same archive (a hard link to such a symlink is one too); a member
 * whose directory is not a directory member before it (Docker would make
 * it, owned by root); a hard link whose target breaks any of these rules;
 * devices, FIFOs, global pax headers, sparse and unknown members;
 * setuid bits, and setgid bits on anything but a directory (where they
 * only pass the group on); extended attributes; a pax uid or gid that
 * is not the sandbox user's; a bad checksum; anything but zeros after
 * the end-of-archive block, and an archive that stops before it.  Every
 * member header's uid and gid are rewritten to the sandbox user's.
 *
 * Nothing is buffered but headers: a member's data passes as it comes,
 * while its header blocks (and the extended headers before it, at most
 * TAR_CHECK_HELD_MAX) wait until the member is found safe.  A refused
 * member never reaches Docker; the members before it already have, and
 * the write then fails as a whole (the caller drops the request).
 * Blocks are read the way Go's archive/tar (Docker's) reads them, with
 * common/tar_header.c.
 */
#include <sys/tree.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy.h"

/* A symlink or directory the archive made. */
struct tar_link {
	RB_ENTRY(tar_link)	 node;
	int			 is_dir;	/* else a symlink, for good */
	const char		*name;		/* normalized, after the node */
};

static int
link_cmp(const struct tar_link *a, const struct tar_link *b)
{
	return strcmp(a->name, b->name);
}

/* libbsd's tree.h leaves __unused undefined (glibc uses the name). */
#define __unused	__attribute__((__unused__))
RB_GENERATE_STATIC(tar_links, tar_link, node, link_cmp)
#undef __unused

static int
vrefuse(struct tar_check *tc, int forbidden, const char *fmt, va_list ap)
{
	(void)vsnprintf(tc->err, sizeof(tc->err), fmt, ap);
	tc->state = TC_REFUSED;
	tc->forbidden = forbidden;
	return -1;
}

/* A broken archive, or one past what is kept track of. */
static int
refuse(struct tar_check *tc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
refuse(struct tar_check *tc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vrefuse(tc, 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* What the archive says is well-formed, and not allowed. */
static int
forbid(struct tar_check *tc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
forbid(struct tar_check *tc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vrefuse(tc, 1, fmt, ap);
	va_end(ap);
	return -1;
}

void
tar_check_init(struct tar_check *tc, uint32_t uid, uint32_t gid)
{
	memset(tc, 0, sizeof(*tc));
	tc->uid = uid;
	tc->gid = gid;
	tc->state = TC_HEADER;
	RB_INIT(&tc->links);
}

void
tar_check_free(struct tar_check *tc)
{
	struct tar_link	*l, *next;

	RB_FOREACH_SAFE(l, tar_links, &tc->links, next) {
		RB_REMOVE(tar_links, &tc->links, l);
		free(l);
	}
	free(tc->held);
	tc->held = NULL;
	tar_ext_clear(&tc->ext);
	tar_member_clear(&tc->m);
}

/*
 * name as Docker's filepath.Clean leaves it, into out: no empty or "."
 * components, no slash at either end ("" for the archive's root).  -1
 * if it is absolute, too long or has a ".." component.
 */
static int
normalize(const char *name, char out[TAR_CHECK_NAME_MAX + 1])
{
	const char	*p, *end;
	size_t		 len, n = 0;

	if (name[0] == '/' || strlen(name) > TAR_CHECK_NAME_MAX)
		return -1;
	for (p = name; *p != '\0'; p = end) {
		end = p + strcspn(p, "/");
		len = (size_t)(end - p);
		if (*end == '/')
			end++;
		if (len == 0 || (len == 1 && p[0] == '.'))
			continue;
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (n > 0)
			out[n++] = '/';
		memcpy(out + n, p, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

static struct tar_link *
name_find(struct tar_check *tc, const char *name)
{
	struct tar_link	 key;

	key.name = name;
	return RB_FIND(tar_links, &tc->links, &key);
}

static int
is_link(struct tar_check *tc, const char *name)
{
	struct tar_link	*l = name_find(tc, name);

	return l != NULL && !l->is_dir;
}

/* 1 if a directory above name (normalized) is a symlink of this archive. */
static int
under_link(struct tar_check *tc, const char *name)
{
	char	 up[TAR_CHECK_NAME_MAX + 1];
	char	*slash;
	int	 rc;

	if (RB_EMPTY(&tc->links))
		return 0;
	(void)strlcpy(up, name, sizeof(up));
	for (slash = strchr(up, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		rc = is_link(tc, up);
		*slash = '/';
		if (rc)
			return 1;
	}
	return 0;
}

/*
 * 1 if name's directory is the target or a directory member before it:
 * Docker makes a missing one itself, owned by root.
 */
static int
parent_made(struct tar_check *tc, const char *name)
{
	char		 up[TAR_CHECK_NAME_MAX + 1];
	char		*slash;
	struct tar_link	*l;

	(void)strlcpy(up, name, sizeof(up));
	if ((slash = strrchr(up, '/')) == NULL)
		return 1;
	*slash = '\0';
	return (l = name_find(tc, up)) != NULL && l->is_dir;
}

/* A symlink stays one: a directory of the same name does not clear it. */
static int
name_add(struct tar_check *tc, const char *name, int is_dir)
{
	struct tar_link	*l;
	size_t		 len = strlen(name);

	if ((l = name_find(tc, name)) != NULL) {
		l->is_dir = l->is_dir && is_dir;
		return 0;
	}
	if (len + 1 > TAR_CHECK_NAMES_MAX - tc->links_bytes)
		return refuse(tc, "more directories and symlinks than "
		    "dockerd-proxy keeps track of (%d bytes of names)",
		    TAR_CHECK_NAMES_MAX);
	if ((l = malloc(sizeof(*l) + len + 1)) == NULL)
		return refuse(tc, "%s", tar_enomem);
	l->is_dir = is_dir;
	l->name = memcpy(l + 1, name, len + 1);
	RB_INSERT(tar_links, &tc->links, l);
	tc->links_bytes += len + 1;
	return 0;
}

/* A name or a hard link's target: inside the target, not via a symlink. */
static int
check_path(struct tar_check *tc, const char *what, const char *name,
    char clean[TAR_CHECK_NAME_MAX + 1])
{
	if (normalize(name, clean) == -1)
		return forbid(tc, "member %llu: %s is absolute, too long or "
		    "has a \"..\"", (unsigned long long)tc->members, what);
	if (under_link(tc, clean))
		return forbid(tc, "member %llu: %s goes through a symlink of "
		    "the same archive", (unsigned long long)tc->members, what);
	return 0;
}

static const char *
type_refused(char flag)
{
	switch (flag) {
	case '3':
		return "a character device";
	case '4':
		return "a block device";
	case '6':
		return "a FIFO";
	default:
		return "a member of an unknown type";
	}
}

/* What the extended headers said that Docker would act on. */
static int
check_ext(struct tar_check *tc)
{
	const struct tar_ext	*ext = &tc->ext;
	unsigned long long	 n = tc->members;

	if (ext->pax_has & PAX_XATTR)
		return forbid(tc, "member %llu: extended attributes", n);
	if ((ext->pax_has & PAX_UID) && ext->pax_num[1] != (int64_t)tc->uid)
		return forbid(tc, "member %llu: a pax uid that is not the "
		    "sandbox user's", n);
	if ((ext->pax_has & PAX_GID) && ext->pax_num[2] != (int64_t)tc->gid)
		return forbid(tc, "member %llu: a pax gid that is not the "
		    "sandbox user's", n);
	return 0;
}

static int
check_member(struct tar_check *tc)
{
	const struct tar_member	*m = &tc->m;
	char			 clean[TAR_CHECK_NAME_MAX + 1];
	char			 target[TAR_CHECK_NAME_MAX + 1];
	unsigned long long	 n = tc->members;

	if (m->type == TAR_OTHER)
		return forbid(tc, "member %llu: %s", n,
		    type_refused(m->typeflag));
	if (m->mode & 04000)
		return forbid(tc, "member %llu: a setuid bit", n);
	if ((m->mode & 02000) && m->type != TAR_DIR)
		return forbid(tc, "member %llu: a setgid bit", n);
	if (check_path(tc, "its name", m->name, clean) == -1)
		return -1;
	if (clean[0] == '\0' && m->type != TAR_DIR)
		return forbid(tc, "member %llu: the target itself as a "
		    "non-directory", n);
	if (!parent_made(tc, clean))
		return forbid(tc, "member %llu: its directory is not a member "
		    "before it (Docker would make it, owned by root)", n);
	if (m->type == TAR_HARDLINK) {
		if (check_path(tc, "its hard link target", m->link,
		    target) == -1)
			return -1;
		if (target[0] == '\0')
			return forbid(tc, "member %llu: a hard link to the "
			    "target itself", n);
		/* link(2) does not follow: a link to a symlink is one. */
		if (is_link(tc, target))
			return name_add(tc, clean, 0);
	}
	if (m->type == TAR_SYMLINK)
		return name_add(tc, clean, 0);
	if (m->type == TAR_DIR && clean[0] != '\0')
		return name_add(tc, clean, 1);
	return 0;
}

/* Blocks into held, to go out with the member they describe. */
static int
hold(struct tar_check *tc, const unsigned char *p, size_t len)
{
	if (len > TAR_CHECK_HELD_MAX - tc->held_len)
		return refuse(tc, "member %llu: more than %d bytes of "
		    "headers", (unsigned long long)tc->members,
		    TAR_CHECK_HELD_MAX);
	if (tc->held == NULL && (tc->held = malloc(TAR_CHECK_HELD_MAX)) ==
	    NULL)
		return refuse(tc, "%s", tar_enomem);
	memcpy(tc->held + tc->held_len, p, len);
	tc->held_len += len;
	return 0;
}

static int
release(struct tar_check *tc, tar_check_out out, void *arg)
{
	size_t	 len = tc->held_len;

	tc->held_len = 0;
	return len == 0 ? 0 : out(arg, tc->held, len);
}

/* The header is a member's: check it, rewrite its owner, let it go. */
static int
member_header(struct tar_check *tc, int64_t size, tar_check_out out,
    void *arg)
{
	const char	*err;

	tc->members++;
	if (check_ext(tc) == -1)
		return -1;
	if ((err = tar_member_make(&tc->m, &tc->ext, tc->blk, size)) != NULL)
		return refuse(tc, "member %llu: %s",
		    (unsigned long long)tc->members, err);
	if (check_member(tc) == -1)
		return -1;
	tar_number_put(tc->blk + TAR_H_UID, 8, tc->uid);
	tar_number_put(tc->blk + TAR_H_GID, 8, tc->gid);
	tar_checksum_put(tc->blk);
	if (hold(tc, tc->blk, TAR_BLOCK) == -1 || release(tc, out, arg) == -1)
		return -1;
	tc->data_left = tc->m.size + tar_padding(tc->m.size);
	tc->state = tc->data_left > 0 ? TC_DATA : TC_HEADER;
	return 0;
}

static int
ext_header(struct tar_check *tc, int64_t size)
{
	if ((uint64_t)size > TAR_CHECK_EXT_MAX)
		return refuse(tc, "member %llu: an extended header of %lld "
		    "bytes", (unsigned long long)tc->members + 1,
		    (long long)size);
	if (hold(tc, tc->blk, TAR_BLOCK) == -1)
		return -1;
	tc->ext_type = (char)tc->blk[TAR_H_TYPE];
	tc->ext_at = tc->held_len;
	tc->ext_size = (uint64_t)size;
	tc->ext_left = (uint64_t)size + tar_padding((uint64_t)size);
	tc->state = TC_EXT;
	return 0;
}

/* A whole header block in blk. */
static int
header_block(struct tar_check *tc, tar_check_out out, void *arg)
{
	int64_t	 size;

	if (tar_block_is_zero(tc->blk)) {
		if (tar_ext_pending(&tc->ext) || tc->held_len > 0)
			return refuse(tc, "an extended header without a "
			    "member");
		tc->state = TC_END1;
		return out(arg, tc->blk, TAR_BLOCK);
	}
	if (!tar_checksum_ok(tc->blk))
		return refuse(tc, "after member %llu: not a tar header (bad "
		    "checksum)", (unsigned long long)tc->members);
	if (tar_header_size(tc->blk, &size) == -1)
		return refuse(tc, "member %llu: a malformed size",
		    (unsigned long long)tc->members + 1);
	switch (tc->blk[TAR_H_TYPE]) {
	case 'x':
	case 'L':
	case 'K':
		return ext_header(tc, size);
	case 'g':
		return forbid(tc, "a global pax header");
	case 'S':
		return refuse(tc, "a sparse member");
	default:
		return member_header(tc, size, out, arg);
	}
}

/* The extended header's data is all in held: what does it say? */
static int
ext_parse(struct tar_check *tc)
{
	const char	*data = (const char *)tc->held + tc->ext_at;
	const char	*err;
	char		*copy;

	if (tc->ext_type == 'L')
		err = tar_gnu_long(&tc->ext.gnu_name, data, tc->ext_size);
	else if (tc->ext_type == 'K')
		err = tar_gnu_long(&tc->ext.gnu_link, data, tc->ext_size);
	else {
		if ((copy = malloc(tc->ext_size + 1)) == NULL)
			return refuse(tc, "%s", tar_enomem);
		memcpy(copy, data, tc->ext_size);
		copy[tc->ext_size] = '\0';
		err = tar_pax_parse(&tc->ext, copy, tc->ext_size);
		free(copy);
	}
	if (err != NULL)
		return refuse(tc, "member %llu: %s",
		    (unsigned long long)tc->members + 1, err);
	tc->state = TC_HEADER;
	return 0;
}

/* Bytes of a block into blk: how many it took. */
static size_t
fill_block(struct tar_check *tc, const unsigned char *p, size_t len)
{
	size_t	 n = TAR_BLOCK - tc->have;

	if (n > len)
		n = len;
	memcpy(tc->blk + tc->have, p, n);
	tc->have += n;
	return n;
}

static int
end_block(struct tar_check *tc, tar_check_out out, void *arg)
{
	if (!tar_block_is_zero(tc->blk))
		return refuse(tc, "data after the end of the archive");
	tc->state = TC_END;
	return out(arg, tc->blk, TAR_BLOCK);
}

/* Bytes in the current state: how many it took, or -1. */
static ssize_t
step(struct tar_check *tc, const unsigned char *p, size_t len,
    tar_check_out out, void *arg)
{
	size_t	 n, i;

	switch (tc->state) {
	case TC_HEADER:
	case TC_END1:
		n = fill_block(tc, p, len);
		if (tc->have < TAR_BLOCK)
			return (ssize_t)n;
		tc->have = 0;
		if (tc->state == TC_HEADER)
			return header_block(tc, out, arg) == -1 ? -1 :
			    (ssize_t)n;
		return end_block(tc, out, arg) == -1 ? -1 : (ssize_t)n;
	case TC_EXT:
		n = len < tc->ext_left ? len : (size_t)tc->ext_left;
		if (hold(tc, p, n) == -1)
			return -1;
		if ((tc->ext_left -= n) == 0 && ext_parse(tc) == -1)
			return -1;
		return (ssize_t)n;
	case TC_DATA:
		n = len < tc->data_left ? len : (size_t)tc->data_left;
		tc->data_left -= n;
		if (tc->data_left == 0)
			tc->state = TC_HEADER;
		return out(arg, p, n) == -1 ? -1 : (ssize_t)n;
	case TC_END:
		/* The zeros before a stray byte go, whatever the pieces. */
		for (i = 0; i < len && p[i] == 0; i++)
			;
		if (i > 0 && out(arg, p, i) == -1)
			return -1;
		if (i < len)
			return refuse(tc, "data after the end of the archive");
		return (ssize_t)len;
	default:
		errno = EINVAL;
		return -1;
	}
}

int
tar_check_feed(struct tar_check *tc, const void *buf, size_t len,
    tar_check_out out, void *arg)
{
	const unsigned char	*p = buf;
	ssize_t			 n;

	while (len > 0) {
		if ((n = step(tc, p, len, out, arg)) == -1)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return tc->state == TC_REFUSED ? -1 : 0;
}

int
tar_check_end(struct tar_check *tc)
{
	if (tc->state == TC_REFUSED)
		return -1;
	if (tc->state == TC_END || (tc->state == TC_END1 && tc->have == 0))
		return 0;
	tc->cut = 1;
	if (tc->state == TC_HEADER && tc->have == 0 && tc->held_len == 0)
		return refuse(tc, "the archive ends without its end-of-archive "
		    "block");
	return refuse(tc, "the archive is truncated");
}
