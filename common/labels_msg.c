/*
 * The label fields of the sandbox messages (sandbox_msg.h): a set of
 * labels, a merge patch of them and a list's filter.  Decoders take only
 * what labels.h allows (valid keys and values, bounded counts, sets in
 * strict key order, so one set has one encoding): anything else is a
 * lying peer.
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_msg.h"

void
msg_put_labels(struct msgw *w, const struct label_list *l)
{
	size_t	 i;

	msgw_u32(w, (uint32_t)l->count);
	for (i = 0; i < l->count; i++) {
		msgw_str(w, l->keys[i]);
		msgw_str(w, l->values[i]);
	}
}

static char *
get_key(struct msgr *r)
{
	char	*k;

	if ((k = msgr_str(r, LABEL_KEY_MAX)) == NULL)
		return NULL;
	if (!label_key_valid(k, strlen(k))) {
		free(k);
		return NULL;
	}
	return k;
}

static char *
get_value(struct msgr *r)
{
	char	*v;

	if ((v = msgr_str(r, LABEL_VALUE_MAX)) == NULL)
		return NULL;
	if (!label_value_valid(v, strlen(v))) {
		free(v);
		return NULL;
	}
	return v;
}

int
msg_get_labels(struct msgr *r, struct label_list *l)
{
	uint32_t	 i, n;
	char		*k, *v;
	int		 ok;

	memset(l, 0, sizeof(*l));
	n = msgr_u32(r);
	if (r->error || n > LABELS_MAX)
		goto bad;
	for (i = 0; i < n; i++) {
		k = get_key(r);
		v = get_value(r);
		ok = k != NULL && v != NULL && (l->count == 0 ||
		    strcmp(l->keys[l->count - 1], k) < 0) &&
		    labels_set(l, k, v) == 0;
		free(k);
		free(v);
		if (!ok)
			goto bad;
	}
	return 0;
bad:
	labels_free(l);
	r->error = 1;
	return -1;
}

void
label_patch_free(struct label_patch *p)
{
	size_t	 i;

	free(p->id);
	labels_free(&p->set);
	for (i = 0; i < p->nremove; i++)
		free(p->remove[i]);
	free(p->remove);
	memset(p, 0, sizeof(*p));
}

void
msg_put_label_patch(struct msgw *w, const struct label_patch *p)
{
	size_t	 i;

	msgw_str(w, p->id);
	msgw_u8(w, p->clear ? 1 : 0);
	msg_put_labels(w, &p->set);
	msgw_u32(w, (uint32_t)p->nremove);
	for (i = 0; i < p->nremove; i++)
		msgw_str(w, p->remove[i]);
}

static int
get_removals(struct msgr *r, struct label_patch *p)
{
	uint32_t	 i, n;
	char		*k;

	n = msgr_u32(r);
	if (r->error || n > LABELS_MAX ||
	    (p->remove = calloc(n + 1, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if ((k = get_key(r)) == NULL)
			return -1;
		p->remove[p->nremove++] = k;
		if ((i > 0 && strcmp(p->remove[i - 1], k) >= 0) ||
		    labels_get(&p->set, k) != NULL)
			return -1;
	}
	return 0;
}

int
msg_get_label_patch(const struct imsg *imsg, struct label_patch *p)
{
	struct msgr	 r;

	memset(p, 0, sizeof(*p));
	msgr_init(&r, imsg);
	p->id = msgr_str(&r, MSG_MAX_ID);
	p->clear = msg_get_bool(&r);
	if (msg_get_labels(&r, &p->set) == -1 ||
	    get_removals(&r, p) == -1 || msgr_end(&r) == -1 ||
	    p->id == NULL || (p->clear && (p->set.count > 0 ||
	    p->nremove > 0))) {
		label_patch_free(p);
		return -1;
	}
	return 0;
}

void
msg_put_label_filter(struct msgw *w, const struct label_filter *f)
{
	size_t	 i;

	msgw_u32(w, (uint32_t)f->count);
	for (i = 0; i < f->count; i++) {
		msgw_str(w, f->keys[i]);
		msgw_u8(w, f->values[i] != NULL);
		msgw_str(w, f->values[i]);
	}
}

static int
get_filter_entry(struct msgr *r, struct label_filter *f)
{
	char	*k, *v = NULL, *absent;
	int	 has, rc = -1;

	k = get_key(r);
	has = msg_get_bool(r);
	if (has)
		v = get_value(r);
	else if ((absent = msgr_str(r, 0)) != NULL) {
		/* Without a value the string must be NULL, not "". */
		free(absent);
		r->error = 1;
	}
	if (!r->error && k != NULL && (!has || v != NULL))
		rc = label_filter_add(f, k, v);
	free(k);
	free(v);
	return rc;
}

int
msg_get_label_filter(const struct imsg *imsg, struct label_filter *f)
{
	struct msgr	 r;
	uint32_t	 i, n;

	memset(f, 0, sizeof(*f));
	msgr_init(&r, imsg);
	n = msgr_u32(&r);
	if (r.error || n > LABEL_FILTERS_MAX)
		return -1;
	for (i = 0; i < n; i++)
		if (get_filter_entry(&r, f) == -1) {
			label_filter_free(f);
			return -1;
		}
	if (msgr_end(&r) == -1) {
		label_filter_free(f);
		return -1;
	}
	return 0;
}
