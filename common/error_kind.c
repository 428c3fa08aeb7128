/*
 * Error kinds as HTTP statuses and codes (error_kind.h).
 */
#include <stddef.h>

#include "error_kind.h"

static const struct {
	enum error_kind	 kind;
	int		 status;
	const char	*code;
} error_table[] = {
	{ ERR_INVALID_REQUEST,	400, "invalid_request" },
	{ ERR_UNAUTHORIZED,	401, "unauthorized" },
	{ ERR_FORBIDDEN,	403, "forbidden" },
	{ ERR_NOT_FOUND,	404, "not_found" },
	{ ERR_CONFLICT,		409, "conflict" },
	{ ERR_PAYLOAD_TOO_LARGE, 413, "payload_too_large" },
	{ ERR_LIMIT_EXCEEDED,	429, "limit_exceeded" },
	{ ERR_INTERNAL,		500, "internal_error" },
	{ ERR_BACKEND,		502, "backend_error" },
	{ ERR_INSUFFICIENT_STORAGE, 507, "insufficient_storage" },
	{ ERR_UNAVAILABLE,	503, "unavailable" },
	{ ERR_TIMEOUT,		504, "backend_timeout" },
	{ ERR_QUOTA_EXCEEDED,	403, "quota_exceeded" },
};

static size_t
error_index(enum error_kind kind)
{
	size_t	 i;

	for (i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++) {
		if (error_table[i].kind == kind)
			return i;
	}
	/* Not an error kind: ERR_INTERNAL, which is in the table. */
	return error_index(ERR_INTERNAL);
}

int
error_kind_status(enum error_kind kind)
{
	return error_table[error_index(kind)].status;
}

const char *
error_kind_code(enum error_kind kind)
{
	return error_table[error_index(kind)].code;
}
