/*
 * What the libFuzzer harnesses share: an invariant check that aborts
 * (so libFuzzer keeps the input as a crash), and a splitter that cuts a
 * byte string into pieces chosen by the input itself, for parsers whose
 * result must not depend on how reads fell.
 */
#ifndef AS_FUZZ_HARNESS_H
#define AS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#define CHECK(cond) do {						\
	if (!(cond))							\
		harness_fail(__FILE__, __LINE__, #cond);		\
} while (0)

void	harness_fail(const char *, int, const char *)
	    __attribute__((noreturn));

/* Pieces of 1 to max bytes, their sizes taken from a seed. */
struct splitter {
	uint64_t	 state;
	size_t		 max;
};
void	splitter_init(struct splitter *, uint64_t seed, size_t max);
size_t	splitter_next(struct splitter *, size_t left);

/* A growable byte string, always NUL-ended (p is never NULL after add). */
struct buf {
	char	*p;
	size_t	 len;
	size_t	 size;
};
void	buf_add(struct buf *, const void *, size_t);
int	buf_equal(const struct buf *, const struct buf *);
void	buf_free(struct buf *);

/* The first bytes of an input as a number; *data and *len move on. */
uint64_t take_u64(const uint8_t **data, size_t *len, size_t n);

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#endif /* AS_FUZZ_HARNESS_H */
