/*
 * Labels: an operator's or an agent's key/value tags on a sandbox
 * (docs/rest-api.md "Labels").  One set of rules for every process that
 * handles them: apid refuses a body that breaks them, managerd checks
 * them again in every message from apid (a lying peer is fatal) and in
 * every record it reads, the CLI checks its --label arguments.
 *
 * A key is 1-63 bytes of [A-Za-z0-9._/-] starting with a letter or a
 * digit: ASCII only because keys are filter syntax (label=k=v, where
 * '=' ends the key) and names an operator types in a shell and reads
 * in a log, where look-alike characters of other scripts would make two
 * keys that seem one.  A value is 0-255 bytes of well-formed UTF-8
 * without control characters (C0, DEL, C1): a value is shown in
 * terminals and logs, and any text else is the agent's business.
 */
#ifndef AS_LABELS_H
#define AS_LABELS_H

#include <stddef.h>

#define LABELS_MAX		32	/* labels on one sandbox */
#define LABEL_KEY_MAX		63	/* bytes */
#define LABEL_VALUE_MAX		255	/* bytes */
/* Filters in one list request: each names a key, so no more than keys. */
#define LABEL_FILTERS_MAX	LABELS_MAX

/* Kept sorted by key (byte order), keys unique. */
struct label_list {
	size_t	  count;
	char	**keys;
	char	**values;
};

/* 1 if the len bytes are a valid key / value, else 0. */
int	label_key_valid(const char *, size_t len);
int	label_value_valid(const char *, size_t len);

void	labels_free(struct label_list *);
/* The value of key, or NULL. */
const char *labels_get(const struct label_list *, const char *key);
/*
 * Set key to value (replacing any value it had), or remove it; keys and
 * values are copied and not checked here, nor the count.  -1 ENOMEM.
 */
int	labels_set(struct label_list *, const char *key, const char *value);
void	labels_remove(struct label_list *, const char *key);
int	labels_copy(struct label_list *dst, const struct label_list *src);
/* 0 if every key and value is valid and there are at most LABELS_MAX. */
int	labels_check(const struct label_list *);

/*
 * A filter of a sandbox list: every entry must match (AND); an entry with
 * a NULL value matches any sandbox that has the key.
 */
struct label_filter {
	size_t	  count;
	char	**keys;
	char	**values;	/* entries may be NULL */
};

void	label_filter_free(struct label_filter *);
int	label_filter_add(struct label_filter *, const char *key,
	    const char *value);
int	label_filter_match(const struct label_filter *,
	    const struct label_list *);
/*
 * One "k" or "k=v" (len bytes, the key ends at the first '=') into f:
 * 0, or -1 with errno EINVAL (bad key or value: *why says which, for
 * the client), E2BIG (too many filters) or ENOMEM.
 */
int	label_filter_parse(struct label_filter *, const char *, size_t len,
	    const char **why);

#endif /* AS_LABELS_H */
