/*
 * What may go into a Docker path or query: the names we give Docker
 * objects, image references, and percent-encoding for every slot (sandbox
 * ids are common/ids.c's).
 * A value is checked against a grammar before it is formatted, and then
 * encoded anyway (PRIVSEP.md §2.10).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proxy.h"

/* Docker caps a repository name at 255 bytes; a whole reference is less. */
#define IMAGE_NAME_MAX		255
#define IMAGE_TAG_MAX		128
#define IMAGE_REF_MAX		512

static int
all_of(const char *s, size_t len, const char *set)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (s[i] == '\0' || strchr(set, s[i]) == NULL)
			return 0;
	return 1;
}

#define LOWER_HEX	"0123456789abcdef"
#define LOWER_ALNUM	"abcdefghijklmnopqrstuvwxyz0123456789"
#define ALNUM		LOWER_ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/* managerd makes 16; anything of lower-case hex up to 64 is accepted. */
int
valid_instance_id(const char *id)
{
	size_t	 len;

	if (id == NULL)
		return 0;
	len = strlen(id);
	return len >= 1 && len <= 64 && all_of(id, len, LOWER_HEX);
}

int
valid_docker_id(const char *id)
{
	return id != NULL && strlen(id) == DOCKER_ID_LEN &&
	    all_of(id, DOCKER_ID_LEN, LOWER_HEX);
}

/* path-component := [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)* */
static int
valid_path_component(const char *s, size_t len)
{
	size_t	 i = 0, run;

	for (;;) {
		run = 0;
		while (i < len && strchr(LOWER_ALNUM, s[i]) != NULL &&
		    s[i] != '\0') {
			i++;
			run++;
		}
		if (run == 0)
			return 0;
		if (i == len)
			return 1;
		if (s[i] == '.')
			i++;
		else if (s[i] == '_')
			i += (i + 1 < len && s[i + 1] == '_') ? 2 : 1;
		else if (s[i] == '-')
			while (i < len && s[i] == '-')
				i++;
		else
			return 0;
	}
}

/* domain := label ('.' label)* (':' port)?; label := alnum, inner '-'. */
static int
valid_domain(const char *s, size_t len)
{
	const char	*colon;
	size_t		 i, host_len, label;

	colon = memchr(s, ':', len);
	host_len = colon != NULL ? (size_t)(colon - s) : len;
	if (colon != NULL && (len - host_len - 1 == 0 || len - host_len - 1 >
	    5 || !all_of(colon + 1, len - host_len - 1, "0123456789")))
		return 0;
	label = 0;
	for (i = 0; i <= host_len; i++) {
		if (i == host_len || s[i] == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!all_of(s + i, 1, ALNUM "-") || (label == 0 && s[i] == '-'))
			return 0;
		label++;
	}
	return 1;
}

/* digest := algorithm ':' hex{32,}; algorithm := [A-Za-z][A-Za-z0-9]* ... */
static int
valid_digest(const char *s)
{
	const char	*colon;
	size_t		 i, alg_len;

	if ((colon = strchr(s, ':')) == NULL)
		return 0;
	alg_len = (size_t)(colon - s);
	if (alg_len == 0 || !isalpha((unsigned char)s[0]))
		return 0;
	for (i = 1; i < alg_len; i++) {
		if (strchr("+.-_", s[i]) != NULL) {
			if (i + 1 >= alg_len ||
			    !isalpha((unsigned char)s[i + 1]))
				return 0;
			continue;
		}
		if (!all_of(s + i, 1, ALNUM))
			return 0;
	}
	return strlen(colon + 1) >= 32 && strlen(colon + 1) <= 256 &&
	    all_of(colon + 1, strlen(colon + 1), LOWER_HEX "ABCDEF");
}

/* tag := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
static int
valid_tag(const char *s, size_t len)
{
	return len >= 1 && len <= IMAGE_TAG_MAX && all_of(s, 1, ALNUM "_") &&
	    all_of(s, len, ALNUM "_.-");
}

int
valid_image_ref(const char *ref)
{
	const char	*at, *last_slash, *colon, *seg, *end;
	size_t		 name_len, len;

	if (ref == NULL || (len = strlen(ref)) == 0 || len > IMAGE_REF_MAX)
		return 0;
	at = strchr(ref, '@');
	if (at != NULL && !valid_digest(at + 1))
		return 0;
	end = at != NULL ? at : ref + len;
	/* The tag is after a ':' in the last segment. */
	last_slash = NULL;
	for (seg = ref; seg < end; seg++)
		if (*seg == '/')
			last_slash = seg;
	seg = last_slash != NULL ? last_slash + 1 : ref;
	colon = memchr(seg, ':', (size_t)(end - seg));
	if (colon != NULL) {
		if (!valid_tag(colon + 1, (size_t)(end - colon - 1)))
			return 0;
		end = colon;
	}
	name_len = (size_t)(end - ref);
	if (name_len == 0 || name_len > IMAGE_NAME_MAX)
		return 0;
	/* The first of several segments may be a registry host[:port]. */
	for (seg = ref;; seg = last_slash + 1) {
		last_slash = memchr(seg, '/', (size_t)(end - seg));
		if (last_slash == NULL)
			last_slash = end;
		len = (size_t)(last_slash - seg);
		if (!valid_path_component(seg, len) && !(seg == ref &&
		    last_slash != end && valid_domain(seg, len)))
			return 0;
		if (last_slash == end)
			break;
	}
	return 1;
}

int
image_ref_split(const char *ref, char *repo, size_t repolen, char *tag,
    size_t taglen)
{
	const char	*slash, *colon;
	size_t		 n;

	if (strchr(ref, '@') != NULL) {
		if (strlcpy(repo, ref, repolen) >= repolen || taglen == 0)
			return -1;
		tag[0] = '\0';
		return 0;
	}
	slash = strrchr(ref, '/');
	colon = strrchr(slash != NULL ? slash : ref, ':');
	if (colon == NULL) {
		if (strlcpy(repo, ref, repolen) >= repolen ||
		    strlcpy(tag, "latest", taglen) >= taglen)
			return -1;
		return 0;
	}
	n = (size_t)(colon - ref);
	if (n >= repolen || strlcpy(tag, colon + 1, taglen) >= taglen)
		return -1;
	memcpy(repo, ref, n);
	repo[n] = '\0';
	return 0;
}

static void
name_format(char *buf, size_t len, const char *id, const char *suffix)
{
	/* Ids are checked before any name is made: this always fits. */
	snprintf(buf, len, SANDBOX_NAME_PREFIX "%s%s", id, suffix);
}

void
sandbox_container_name(const char *id, char *buf, size_t len)
{
	name_format(buf, len, id, "");
}

void
sandbox_prep_name(const char *id, char *buf, size_t len)
{
	name_format(buf, len, id, "-init");
}

void
sandbox_volume_name(const char *id, char *buf, size_t len)
{
	name_format(buf, len, id, "-workspace");
}

/*
 * Returns the length the encoding needs (without the NUL).  Writes as much
 * as fits of whole encoded bytes, always NUL-terminated when dstlen > 0.
 */
size_t
percent_encode(char *dst, size_t dstlen, const char *src)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 n = 0, w = 0, need;
	unsigned char		 c;
	int			 plain;

	for (; *src != '\0'; src++) {
		c = (unsigned char)*src;
		plain = (c < 0x80 && isalnum(c)) || c == '-' || c == '.' ||
		    c == '_' || c == '~';
		need = plain ? 1 : 3;
		if (w == n && n + need < dstlen) {
			if (plain)
				dst[w] = (char)c;
			else {
				dst[w] = '%';
				dst[w + 1] = hex[c >> 4];
				dst[w + 2] = hex[c & 0xf];
			}
			w += need;
		}
		n += need;
	}
	if (dstlen > 0)
		dst[w] = '\0';
	return n;
}

int
docker_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list		 ap;
	const char	*arg;
	size_t		 n = 0, need;

	if (len == 0)
		return -1;
	va_start(ap, fmt);
	for (; *fmt != '\0'; fmt++) {
		if (*fmt == '%' && fmt[1] == 's') {
			arg = va_arg(ap, const char *);
			need = percent_encode(buf + n, len - n, arg);
			if (need >= len - n)
				goto toolong;
			n += need;
			fmt++;
			continue;
		}
		/* Only %s slots: anything else is a programming error. */
		if (*fmt == '%' || n + 1 >= len)
			goto toolong;
		buf[n++] = *fmt;
	}
	va_end(ap);
	buf[n] = '\0';
	return 0;
toolong:
	va_end(ap);
	buf[0] = '\0';
	return -1;
}
