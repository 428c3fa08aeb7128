/*
 * managerd's egress wiring (docs/architecture.md "Egress policy"):
 * calls to the on-demand children, a policy sandbox's listener, and its
 * network as the API sees it.  Included by managerd.h, after the types
 * it uses.
 */
#ifndef AS_MANAGERD_EGRESS_WIRING_H
#define AS_MANAGERD_EGRESS_WIRING_H

/*
 * child_call.c: calls to the on-demand children (netns-helper,
 * egress-proxy), queued until the child is READY; replies and failures
 * as proxy_call()'s (a failure is ERR_UNAVAILABLE).  0 if it could not
 * be made (fd consumed either way).
 */
uint32_t child_call(enum child_id, uint32_t type, int fd, struct msgw *,
	    uint32_t more_type, uint32_t reply_type, proxy_done_cb, void *arg);
void	 child_calls_ready(enum child_id);
void	 child_calls_lost(enum child_id);
void	 child_calls_reply(enum child_id, struct peer *, struct imsg *);
/* Every call and timer gone (tests: each has an event base of its own). */
void	 child_calls_clear(void);

/*
 * egress.c: a policy sandbox's listener made and served (see there).
 * done gets kind 0 on success, else the error and its text.
 */
typedef void	(*egress_done_cb)(enum error_kind, const char *why, void *);
void	 egress_attach(struct sandbox *, egress_done_cb, void *arg);
void	 egress_reattach(struct sandbox *);
void	 egress_reattach_all(void);
void	 egress_forget(struct sandbox *);
uint32_t egress_send_policy(struct sandbox *, proxy_done_cb, void *arg);
void	 egress_audit(struct peer *, struct imsg *);
void	 netns_ready(int again);
void	 netns_lost(void);
void	 egress_ready(int again);
void	 egress_lost(void);
void	 dispatch_netns(struct peer *, struct imsg *);
void	 dispatch_egress(struct peer *, struct imsg *);

/* network.c: a sandbox's network as the API sees it. */
int	 sandbox_egress_possible(void);
int	 network_choose(uint32_t apid_id, int network, const char *text,
	    const struct egress_policy *inherited, struct sandbox_spec *,
	    struct egress_policy *);
void	 network_get(uint32_t apid_id, const char *id);
void	 network_put(uint32_t apid_id, const char *id, const char *text);
void	 network_log(uint32_t apid_id, const char *id);
size_t	 network_env_count(const struct sandbox *);
void	 network_env_add(const struct sandbox *, const struct env_list *req,
	    struct env_list *out);
/* The record's "egress" member (store_json.c, store_snapshot.c). */
struct sbuf;
void	 store_json_put_egress(struct sbuf *, const struct egress_policy *);
int	 store_json_get_egress(struct json_object *,
	    struct egress_policy *);

#endif /* AS_MANAGERD_EGRESS_WIRING_H */
