/*
 * A directory listing's output as apid reads it (file_list_parse in
 * apid/file_list.c): records "<mode hex> <size> <mtime>\n<name>\0" made
 * by a command inside the sandbox, so any bytes at all.
 *
 * Every entry kept is one the API can show (a name without '/' or NUL,
 * not "." or "..", sorted), there are no more than the records, writing
 * them back as records and parsing again gives the same list, and the
 * FileList JSON is valid UTF-8.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apid.h"
#include "harness.h"

static size_t
records(const uint8_t *data, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i < len; i++)
		n += data[i] == '\0';
	return n;
}

static void
check_entries(const struct file_entries *fe)
{
	const char	*name;
	size_t		 i;

	for (i = 0; i < fe->n; i++) {
		name = fe->v[i].name;
		CHECK(name[0] != '\0' && strchr(name, '/') == NULL);
		CHECK(strcmp(name, ".") != 0 && strcmp(name, "..") != 0);
		CHECK(fe->v[i].size <= INT64_MAX);
		if (i > 0)
			CHECK(strcmp(fe->v[i - 1].name, name) <= 0);
	}
}

/* The records again, as the listing command would have written them. */
static void
records_of(const struct file_entries *fe, struct buf *out)
{
	char	*rec;
	size_t	 i;
	int	 n;

	buf_add(out, "", 0);		/* never NULL, as in apid */
	for (i = 0; i < fe->n; i++) {
		n = asprintf(&rec, "%x %llu %lld\n%s", fe->v[i].mode,
		    (unsigned long long)fe->v[i].size,
		    (long long)fe->v[i].mtime, fe->v[i].name);
		CHECK(n != -1);
		buf_add(out, rec, (size_t)n + 1);	/* with its NUL */
		free(rec);
	}
}

static void
check_json(const char *dir, const struct file_entries *fe)
{
	json_object	*o, *entries;
	const char	*text;

	CHECK((o = file_list_json(dir, fe)) != NULL);
	CHECK(json_object_object_get_ex(o, "entries", &entries));
	CHECK(json_object_array_length(entries) == fe->n);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	CHECK(text != NULL && utf8_valid(text, strlen(text)));
	json_object_put(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct file_entries	 fe, again;
	struct buf		 rec = { NULL, 0, 0 };
	size_t			 i;

	/* libFuzzer passes NULL for an empty input; apid passes "". */
	if (data == NULL)
		data = (const uint8_t *)"";
	if (file_list_parse((const char *)data, len, &fe) == -1)
		return 0;
	CHECK(fe.n <= records(data, len));
	check_entries(&fe);
	records_of(&fe, &rec);
	CHECK(file_list_parse(rec.p, rec.len, &again) == 0);
	CHECK(again.n == fe.n);
	for (i = 0; i < fe.n; i++) {
		/* Equal names may come in either order: qsort is not stable. */
		CHECK(strcmp(again.v[i].name, fe.v[i].name) == 0);
		if (i + 1 < fe.n && strcmp(fe.v[i].name, fe.v[i + 1].name) == 0)
			continue;
		if (i > 0 && strcmp(fe.v[i].name, fe.v[i - 1].name) == 0)
			continue;
		CHECK(again.v[i].mode == fe.v[i].mode);
		CHECK(again.v[i].size == fe.v[i].size);
		CHECK(again.v[i].mtime == fe.v[i].mtime);
	}
	check_json(len % 2 ? "/" : "/workspace", &fe);
	file_entries_free(&again);
	file_entries_free(&fe);
	buf_free(&rec);
	return 0;
}
