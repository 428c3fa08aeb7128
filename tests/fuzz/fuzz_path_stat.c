/*
 * Docker's X-Docker-Container-Path-Stat header as dockerd-proxy reads it
 * (archive_path_stat_parse in dockerd-proxy/docker_archive_parse.c).
 * Input: a byte, then either the header itself (odd byte: the base64 is
 * fuzzed) or the JSON that the harness encodes (even byte: the JSON is).
 *
 * A refusal says why and leaves nothing allocated.  An accepted stat has
 * the size and kind its JSON says (json-c, which parses it, is trusted
 * here) and a link target only for a symlink, and it must survive
 * managerd's decoder.
 */
#include <stdlib.h>
#include <string.h>

#include "proxy.h"
#include "harness.h"

static char *
base64(const uint8_t *in, size_t len)
{
	static const char	 abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	char			*out, *p;
	uint32_t		 v;
	size_t			 i;

	CHECK((out = malloc((len + 2) / 3 * 4 + 1)) != NULL);
	for (i = 0, p = out; i < len; i += 3) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*p++ = abc[v >> 18];
		*p++ = abc[(v >> 12) & 63];
		*p++ = i + 1 < len ? abc[(v >> 6) & 63] : '=';
		*p++ = i + 2 < len ? abc[v & 63] : '=';
	}
	*p = '\0';
	return out;
}

/* What the JSON says, read by json-c without the parser's rules. */
static void
check_fields(const uint8_t *json, size_t len, const struct archive_stat *st)
{
	json_object	*o, *v;
	uint32_t	 mode;
	char		*text;

	CHECK((text = strndup((const char *)json, len)) != NULL);
	CHECK((o = json_tokener_parse(text)) != NULL);
	CHECK(json_object_object_get_ex(o, "size", &v));
	CHECK((uint64_t)json_object_get_int64(v) == st->size);
	CHECK(json_object_object_get_ex(o, "mode", &v));
	mode = (uint32_t)json_object_get_int64(v);
	if (mode & (1U << 31))
		CHECK(st->kind == ARCHIVE_KIND_DIR);
	else if (mode & (1U << 27))
		CHECK(st->kind == ARCHIVE_KIND_SYMLINK);
	else
		CHECK(st->kind == ARCHIVE_KIND_FILE ||
		    st->kind == ARCHIVE_KIND_OTHER);
	json_object_put(o);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct archive_stat	 st, back;
	struct msgw		 w;
	struct imsg		 im;
	const char		*why;
	char			*header;
	int			 raw;

	if (len < 1)
		return 0;
	raw = data[0] & 1;
	data++;
	len--;
	if (raw)
		CHECK((header = strndup((const char *)data, len)) != NULL);
	else
		header = base64(data, len);
	if (archive_path_stat_parse(header, &st, &why) == -1) {
		CHECK(why != NULL && st.link_target == NULL);
		free(header);
		return 0;
	}
	CHECK(why == NULL && st.link_target != NULL);
	CHECK(strlen(header) <= ARCHIVE_STAT_HEADER_MAX);
	CHECK((st.kind == ARCHIVE_KIND_SYMLINK) == (st.link_target[0] != '\0'));
	CHECK(strlen(st.link_target) <= MSG_MAX_LINK_TARGET);
	if (!raw)
		check_fields(data, len, &st);
	msgw_init(&w);
	msg_put_archive_stat(&w, &st);
	CHECK(!w.overflow);
	memset(&im, 0, sizeof(im));
	im.fd = -1;
	im.data = w.buf;
	im.len = w.len;
	CHECK(msg_get_archive_stat(&im, &back) == 0);
	CHECK(back.kind == st.kind && back.size == st.size);
	CHECK(strcmp(back.link_target, st.link_target) == 0);
	archive_stat_free(&back);
	archive_stat_free(&st);
	free(header);
	return 0;
}
