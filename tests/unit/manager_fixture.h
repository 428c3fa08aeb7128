/*
 * The fixture the test_manager_*.c programs share (manager_fixture.c): a
 * managerd whose apid and dockerd-proxy are the test, the messages that
 * pass between them, and whole requests built from those.
 */
#ifndef AS_MANAGER_FIXTURE_H
#define AS_MANAGER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "managerd.h"

/* The wall clock managerd sees, and the id of apid's next request. */
extern double	 now;
extern uint32_t	 next_apid_id;

/* A managerd with the test's settings added ("NAME=value", NULL-ended). */
void	 setup_env(char **settings);
/* cmocka's per-test set-up (no extra settings) and teardown. */
int	 setup(void **state);
int	 teardown(void **state);

/*
 * A child dies (its channel is gone: children.c's lost hook) or is back
 * (its ready hook, as after a restart); run_deferred() lets the event
 * loop deliver what managerd does from it (failed calls, timers due).
 */
void	 apid_dies(void);
void	 apid_back(void);
void	 proxy_dies(void);
void	 proxy_back(void);
void	 run_deferred(void);
/*
 * The archive worker and apid as its peer (test_manager_worker.c): a
 * child dies or is back without what the others' tests drop, and what
 * managerd sent it, channel ends included (0: nothing).
 */
void	 child_down(enum child_id);
void	 child_up_again(enum child_id);
int	 to_child(enum child_id, struct imsg *);
/* What managerd asked the spawner next (1: *type, *child), or none (0). */
int	 to_spawner(uint32_t *type, uint32_t *child);
/* The netns-helper and the egress proxy, played by the test. */
void	 from_child(enum child_id, uint32_t type, uint32_t peerid, int fd,
	    struct msgw *);
uint32_t expect_child(enum child_id, uint32_t type, struct imsg *out);

/* The message boundary. */
void	 fake_imsg(struct imsg *, uint32_t type, uint32_t peerid, int fd,
	    struct msgw *);
/*
 * from_apid sends test_caller's MSG_CALLER before a type that opens a
 * request (caller_before: for a test's own dispatch_apid calls).
 */
extern struct caller test_caller;
void	 send_caller(uint32_t peerid, const struct caller *);
void	 caller_before(uint32_t type, uint32_t peerid);
uint32_t from_apid(uint32_t type, int fd, struct msgw *);
void	 from_proxy(uint32_t type, uint32_t peerid, struct msgw *);
int	 to_apid(struct imsg *);
/* 1 and the message if managerd has sent the proxy one, else 0. */
int	 to_proxy(struct imsg *);
/* What has come so far (0: nothing yet), for answers larger than a
 * socket's buffer. */
int	 to_apid_some(struct imsg *);
void	 no_proxy_message(void);
void	 no_apid_message(void);
uint32_t expect_proxy(uint32_t type, struct imsg *out);
uint32_t expect_proxy_id(uint32_t type, const char *id);
void	 expect_apid_error(uint32_t id, enum error_kind, const char *text);
void	 expect_apid(uint32_t id, uint32_t type);
void	 expect_info(uint32_t id, struct sandbox_info *);
void	 error_reply(uint32_t call, enum error_kind, const char *text);
/* A plausible answer: a running one has FIXTURE_PID, one that is FIXTURE_CONTAINER. */
void	 state_reply(uint32_t call, int exists, int running);
#define FIXTURE_PID		4242
#define FIXTURE_CONTAINER \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* Exactly these fields, lies included. */
void	 state_reply_raw(uint32_t call, int exists, int running,
	    uint32_t pid, const char *container);
void	 list_item(uint32_t call, const char *id, int container, int running);

/* Requests. */
void	 create_request_init(struct create_request *);
uint32_t send_create(struct create_request *);
uint32_t send_create_ttl(int64_t ttl);
uint32_t expect_create(struct docker_create *);
void	 create_ok(int64_t ttl, char *id, size_t len);
uint32_t send_id(uint32_t type, const char *id);
uint32_t send_sandbox_list(const struct label_filter *);
uint32_t send_timeout(const char *id, int64_t secs);
void	 destroy_ok(const char *id);
int	 record_exists(const char *id);

/* Exec requests. */
struct exec_sent {
	uint32_t		 req;
	uint32_t		 call;
	struct docker_exec	 dx;
	int			 rfd;		/* the test's end of the pipe */
	int			 passed;	/* what the proxy received */
};
void	 exec_request_init(struct exec_request *, const char *id);
void	 exec_set_shell(struct exec_request *, const char *cmd);
uint32_t send_exec(struct exec_request *, int *rfd);
void	 exec_sent(struct exec_request *, struct exec_sent *);

/*
 * Files (test_manager_file_*.c): descriptors, pipes, the requests that
 * bring one, the proxy's stat of a path.
 */
int	 count_fds(void);
/* Every writer of the pipe is gone: the reader sees EOF (closes it). */
void	 assert_pipe_closed(int rfd);
/* Every reader of the pipe is gone: writing fails (closes it). */
void	 assert_no_reader(int wfd);
/* FILE_READ or FILE_LIST with a fresh pipe's write end; *rfd: ours. */
uint32_t send_file_request(uint32_t type, const char *id, const char *path,
	    int *rfd);
void	 stat_answer(uint32_t call, uint8_t kind, uint64_t size,
	    const char *target);
void	 stat_answer_full(uint32_t call, const struct archive_stat *);

/*
 * f run in a child must end it with managerd's fatal log line, which
 * ends in words ("bad FILE_WRITE_COMMIT message from apid: ...").
 */
void	 expect_fatal(void (*f)(void), const char *words);

#endif /* AS_MANAGER_FIXTURE_H */
