/*
 * What the parts of the configuration loader share: config.c reads the
 * reference's variables and checks them together, config_get.c reads one
 * variable of any kind, and each config_<area>.c the settings of one
 * area of this implementation (called from config_load in table order).
 */
#ifndef AS_CONFIG_INTERNAL_H
#define AS_CONFIG_INTERNAL_H

#include <stddef.h>

#include "config.h"

struct loader {
	char *const	*envp;
	struct config	*conf;
	char		*err;
	size_t		 errlen;
};

/* Messages that quote the raw value. */
enum rawmsg {
	RAW_BOOL,
	RAW_VALUE,
	RAW_USER,
	RAW_DOCKER_HOST,
	RAW_ABSPATH,
	RAW_LOG_LEVEL,
	RAW_SECCOMP,
	RAW_IMAGE_MATCH,
};

/* The first "name=value" of envp with that name, as getenv(); or NULL. */
const char	*cfg_env_get(char *const *envp, const char *name);
/* Write msg as the error; returns -1. */
int	 cfg_fail(struct loader *, const char *msg);
/* The error of kind for var, quoting raw unless it holds an API key. */
int	 cfg_fail_raw(struct loader *, enum rawmsg, const char *var,
	    const char *raw);

/*
 * The getters: the variable, or def when it is not set; -1 with the
 * error written on a bad value.  Numbers must be in [min, max]; doubles
 * finite and in (0, max]; words one of the pairs (given, stored) of
 * words, "" meaning def; paths absolute.
 */
int	 cfg_get_str(struct loader *, const char *var, const char *def,
	    char **);
int	 cfg_get_list(struct loader *, const char *var, const char *def,
	    char ***, size_t *);
int	 cfg_get_bool(struct loader *, const char *var, int def, int *);
int	 cfg_get_llong(struct loader *, const char *var, long long def,
	    long long min, long long max, long long *);
int	 cfg_get_long(struct loader *, const char *var, long def, long min,
	    long max, long *);
int	 cfg_get_double(struct loader *, const char *var, double def,
	    double max, double *);
int	 cfg_get_abspath(struct loader *, const char *var, const char *def,
	    char **);
/* DOCKER_HOST (config_docker.c). */
int	 config_load_docker(struct loader *);
int	 cfg_get_word(struct loader *, const char *var,
	    const char *const *words, const char *def, enum rawmsg, char **);

/* The areas' loaders (config_<area>.c), called from config_load. */
int	 config_load_audit(struct loader *);
int	 config_load_egress(struct loader *);
void	 config_free_egress(struct config *);
int	 config_load_keys(struct loader *);
int	 config_load_metrics(struct loader *);
void	 config_free_metrics(struct config *);
int	 config_load_pool(struct loader *);
void	 config_free_pool(struct config *);

#endif /* AS_CONFIG_INTERNAL_H */
