/* Placeholder: replaced by the file routes. */
#include "apid.h"

void
route_file_read(struct evhttp_request *req, char **params)
{
	(void)params;
	respond_error(req, ERR_INTERNAL, "not implemented");
}

void
route_file_write(struct evhttp_request *req, char **params)
{
	(void)params;
	respond_error(req, ERR_INTERNAL, "not implemented");
}

void
route_file_list(struct evhttp_request *req, char **params)
{
	(void)params;
	respond_error(req, ERR_INTERNAL, "not implemented");
}
