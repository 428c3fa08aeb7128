/*
 * What each error kind is over HTTP (API.md §3.4): its status and its
 * code.  One table, read by apid for the error envelope and by managerd
 * for the audit log.
 */
#ifndef AS_ERROR_KIND_H
#define AS_ERROR_KIND_H

#include "msg.h"

/* The HTTP status of kind; 500 for one that is not an error kind. */
int		 error_kind_status(enum error_kind);
/* Its code ("not_found"); "internal_error" for one that is not. */
const char	*error_kind_code(enum error_kind);

#endif /* AS_ERROR_KIND_H */
