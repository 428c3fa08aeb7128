/*
 * Labels in the CLI: create --label K=V and ls --label K[=V] (both
 * repeatable), the label verb (K=V sets, K- removes, through PATCH), and
 * the LABELS column.  Arguments are checked here with the server's rules
 * (labels.h) so that a typo is a usage error before any request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "labels.h"

/* K=V into labels (an object): 0, or -1 with a warning. */
int
cli_parse_label(json_object *labels, const char *kv)
{
	const char	*eq;
	char		*key;
	int		 ret;

	if ((eq = strchr(kv, '=')) == NULL ||
	    !label_key_valid(kv, (size_t)(eq - kv))) {
		cli_warn("--label wants KEY=VALUE with a key of 1-%d "
		    "characters of A-Z a-z 0-9 . _ / - starting with a letter "
		    "or a digit, not '%s'", LABEL_KEY_MAX, kv);
		return -1;
	}
	if (!label_value_valid(eq + 1, strlen(eq + 1))) {
		cli_warn("a label value is at most %d bytes of UTF-8 without "
		    "control characters: '%s'", LABEL_VALUE_MAX, kv);
		return -1;
	}
	if ((key = strndup(kv, (size_t)(eq - kv))) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	ret = cli_put(labels, key, json_object_new_string(eq + 1));
	free(key);
	return ret;
}

/*
 * K=V (set) or K- (remove) into a merge patch (an object), for the
 * label verb: 0, or -1 with a warning.
 */
int
cli_label_change(json_object *patch, const char *arg)
{
	size_t	 len = strlen(arg);
	char	*key;
	int	 ret;

	if (strchr(arg, '=') != NULL)
		return cli_parse_label(patch, arg);
	if (len < 2 || arg[len - 1] != '-' ||
	    !label_key_valid(arg, len - 1)) {
		cli_warn("'%s' is neither KEY=VALUE (set) nor KEY- (remove)",
		    arg);
		return -1;
	}
	if ((key = strndup(arg, len - 1)) == NULL) {
		cli_warn("out of memory");
		return -1;
	}
	/* A JSON null: the merge patch's "remove". */
	ret = json_object_object_add(patch, key, NULL);
	free(key);
	if (ret != 0)
		cli_warn("out of memory");
	return ret != 0 ? -1 : 0;
}

/* K or K=V, for ls --label: 0, or -1 with a warning. */
int
cli_check_filter(const char *f)
{
	struct label_filter	 lf;
	const char		*why;

	memset(&lf, 0, sizeof(lf));
	if (label_filter_parse(&lf, f, strlen(f), &why) == -1) {
		cli_warn("--label '%s': %s", f, why != NULL ? why :
		    "out of memory");
		return -1;
	}
	label_filter_free(&lf);
	return 0;
}

/*
 * "k=v,k2=v2" of a sandbox's labels (malloc'd), "-" when it has none;
 * NULL when out of memory.
 */
char *
cli_labels_text(json_object *sb)
{
	json_object	*labels;
	char		*s = NULL, *next;

	if (!json_object_object_get_ex(sb, "labels", &labels) ||
	    !json_object_is_type(labels, json_type_object) ||
	    json_object_object_length(labels) == 0)
		return strdup("-");
	json_object_object_foreach(labels, key, val) {
		if (asprintf(&next, "%s%s%s=%s", s != NULL ? s : "",
		    s != NULL ? "," : "", key,
		    json_object_get_string(val)) == -1) {
			free(s);
			return NULL;
		}
		free(s);
		s = next;
	}
	return s;
}
