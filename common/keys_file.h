/*
 * The keys file (AGENT_SANDBOX_KEYS_FILE, docs/configuration.md "Keys
 * file"): named API keys, each of a tenant, stored as the SHA-256 of the
 * key, with quotas.  Parsed here (json-c), read by managerd at start-up
 * and by its spawner on SIGHUP, and carried to managerd and apid in the
 * messages of msg.h (MSG_SPAWN_KEYS, MSG_APID_KEYS) as key_entry records.
 * Nothing here holds a plain key; errors never quote a hash.
 */
#ifndef AS_KEYS_FILE_H
#define AS_KEYS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

#define KEYS_FILE_MAX_BYTES	(1024 * 1024)
#define KEYS_FILE_MAX_KEYS	1024
#define KEY_NAME_MAX		64	/* names, tenants: [A-Za-z0-9._-] */
#define KEY_HASH_LEN		32	/* SHA-256 */
#define KEY_NO_LIMIT		(-1)	/* a quota not given */

/* Resource quotas count per tenant; requests per second per key. */
struct key_quota {
	int64_t		 sandboxes;	/* at once; -1: no limit */
	double		 cpus;		/* summed; < 0: no limit */
	int64_t		 memory_mb;	/* their memory_mb, summed */
	int64_t		 snapshot_bytes; /* stored snapshots' bytes */
	double		 rate;		/* per second; 0: no limit */
	int64_t		 burst;		/* the bucket's size (>= 1) */
};

struct key_entry {
	char			 name[KEY_NAME_MAX + 1];
	char			 tenant[KEY_NAME_MAX + 1];
	int			 admin;
	unsigned char		 sha256[KEY_HASH_LEN];
	struct key_quota	 quota;
};

struct keys_table {
	struct key_entry	*v;
	size_t			 n;
};

/*
 * Parse a keys file's bytes into t (empty first).  0, or -1 with err
 * saying what and where ("keys[3].sha256: ..."), nothing allocated.
 */
int	 keys_file_parse(const char *buf, size_t len, struct keys_table *t,
	    char *err, size_t errlen);
/* Read path (at most KEYS_FILE_MAX_BYTES) and parse it. */
int	 keys_file_read(const char *path, struct keys_table *t, char *err,
	    size_t errlen);
void	 keys_table_free(struct keys_table *);
/* The entry of that name, or NULL. */
const struct key_entry *keys_table_find(const struct keys_table *,
	    const char *name);

/* SHA-256 of a candidate key. */
void	 key_hash(const char *key, size_t len,
	    unsigned char out[KEY_HASH_LEN]);
/*
 * The index of the entry whose hash is h, or -1; every entry compared
 * in constant time, the results OR-ed, the index picked by a mask.
 */
long	 keys_table_match(const struct keys_table *,
	    const unsigned char h[KEY_HASH_LEN]);

/* A name or tenant as the file allows it: 1 or 0. */
int	 key_name_valid(const char *);

/*
 * A table in messages (MSG_SPAWN_KEYS, MSG_APID_KEYS): each message is
 * u32 total, u32 first (the index of its first entry), u32 count, then
 * count entries: str name, str tenant, u8 admin, 32 bytes sha256, i64
 * sandboxes, double cpus, i64 memory_mb, i64 snapshot_bytes, double
 * rate, i64 burst.  first is 0 in the first message of a table and each
 * next one follows on; the table is whole when first + count == total
 * (a table of no keys is one message of total 0).
 */
#define KEYS_PER_MESSAGE	64
void	 msg_put_keys_chunk(struct msgw *, const struct keys_table *,
	    size_t first);
/*
 * Appends the chunk's entries to t (which holds exactly first).  -1 with
 * errno EBADMSG for a payload that lies (first past total included), or
 * ENOMEM.
 */
int	 msg_get_keys_chunk(const struct imsg *, struct keys_table *,
	    uint32_t *total);

#endif /* AS_KEYS_FILE_H */
