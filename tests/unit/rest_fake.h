/*
 * The REST client tests' fake server on 127.0.0.1 (rest_fake.c): a thread
 * that takes one connection, records the request it got and replays a
 * canned answer: whole, early (after the head), not at all for a while,
 * big_len bytes of pattern(), in two parts with a pause between, or one
 * of a script to each of several connections in turn (one of which may
 * be held open).
 */
#ifndef REST_FAKE_H
#define REST_FAKE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rest.h"

#define KEY	"test-key-0123456789abcdef"

enum mode {
	ANSWER,		/* read the whole request, then answer */
	EARLY,		/* answer after the head, then drain the body */
	SILENT,		/* read the request, say nothing for a while */
	BIG,		/* answer with big_len bytes of pattern, chunked */
	PACED,		/* answer resp, wait pause_ms, then resp2 */
	SCRIPT		/* one connection per answer of script */
};

struct fake {
	int		 lfd;
	char		 port[16];
	pthread_t	 th;
	enum mode	 mode;
	const char	*resp;
	size_t		 resplen;
	const char	*resp2;		/* PACED */
	int		 pause_ms;
	const char *const *script;	/* SCRIPT: NULL-terminated */
	size_t		 hold;		/* SCRIPT: this answer (from 1) keeps
					   its connection open until the
					   client closes it, 3 s at most */
	char		*log;		/* SCRIPT: every request */
	size_t		 loglen;
	size_t		 big_len;
	int		 big_fill;	/* this byte, or 0 for pattern() */
	unsigned char	*req;		/* the request as received */
	size_t		 reqlen;
	size_t		 headlen;
};

extern struct fake	 fk;
extern char		 rbuf[256 * 1024];

unsigned char	 pattern(uint64_t);
void	 write_all(int, const void *, size_t);
void	 fake_start(enum mode, const char *resp, size_t resplen);
void	 fake_stop(void);
void	 fake_free(void);
void	 fake_big(size_t len, int fill);
void	 fake_paced(const char *resp, const char *resp2, int pause_ms);
void	 fake_script(const char *const *answers);
/* An answer with its Content-Length, or in chunks (one per piece), in rbuf. */
const char	*with_length(const char *head, const char *body);
const char	*with_chunks(const char *head, const char *const *pieces);
/* A client of the fake server. */
void	 client(struct rest_client *, const char *prefix, const char *key);
/* The request's head contains this line exactly; it starts with prefix. */
int	 has_header(const char *line);
int	 starts_with(const char *prefix);

#endif /* REST_FAKE_H */
