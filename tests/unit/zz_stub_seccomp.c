#include <seccomp.h>
static const struct seccomp_rule none[] = { SC_ALLOW(read) };
struct seccomp_table egress_seccomp_table(void) { struct seccomp_table t = { none, 1 }; return t; }
