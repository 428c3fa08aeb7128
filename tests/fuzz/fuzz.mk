# The libFuzzer harnesses, built with clang while the rest of the tree is
# built with gcc (automake wants one compiler per Makefile, hence a plain
# GNU make fragment).  Makefile.am's fuzz and fuzz-build targets run it as
#
#	make -f tests/fuzz/fuzz.mk top_srcdir=... top_builddir=... \
#	    FUZZ_CC=clang-14 FUZZ_CPPFLAGS=... FUZZ_LIBS=... build|run
#
# Adding a harness is one line here: fuzz_<name>_SRCS lists the product
# sources that tests/fuzz/fuzz_<name>.c exercises, compiled into it; the
# list of harnesses is read off these variables.  See docs/fuzzing.md.

# apid: request bodies, query strings, an exec's output, listings, a
# process's output events.
APID_HTTP = apid/http_parse.c apid/http_conn.c apid/http_splice.c \
	apid/http_server.c \
	apid/http_request.c apid/http_reply.c common/log.c common/caller.c \
	common/bev_read.c \
	common/msg.c common/format.c common/utf8.c
fuzz_pyjson_SRCS = apid/pyjson.c common/utf8.c common/format.c
fuzz_body_SRCS = apid/body.c apid/body_sandbox.c apid/body_exec.c \
	apid/body_network.c \
	apid/body_snapshot.c apid/body_process.c apid/pyjson.c common/utf8.c \
	apid/respond.c common/error_kind.c common/format.c common/msg.c \
	common/sandbox_msg.c common/labels.c common/labels_msg.c \
	apid/body_labels.c common/file_msg.c common/process_msg.c \
	common/ids.c $(APID_HTTP)
fuzz_query_SRCS = apid/query.c $(fuzz_body_SRCS)
fuzz_exec_output_SRCS = apid/exec_output.c common/utf8.c apid/jsonout.c \
	common/format.c
fuzz_file_list_SRCS = apid/file_list.c common/utf8.c common/format.c
fuzz_process_events_SRCS = apid/process_events.c apid/jsonout.c \
	common/process_msg.c common/msg.c common/sandbox_msg.c common/ids.c \
	common/labels.c common/labels_msg.c \
	common/utf8.c common/format.c common/websocket.c common/log.c
# apid's HTTP/1.1 layer: a request head and body, and whole connections.
fuzz_http_parse_SRCS = apid/http_parse.c common/format.c common/utf8.c
fuzz_http_conn_SRCS = $(APID_HTTP)
# archive-worker: the tar streams a sandbox made, read, rewritten, checked.
fuzz_archive_job_SRCS = archive-worker/job.c archive-worker/job_error.c \
	archive-worker/tar_read.c archive-worker/tar_write.c \
	archive-worker/job_first_file.c archive-worker/job_snapshot.c \
	archive-worker/job_spool.c archive-worker/job_upload.c \
	archive-worker/worker_seccomp.c common/archive_msg.c common/msg.c \
	common/file_msg.c common/seccomp.c common/log.c common/tar_header.c \
	common/labels.c common/labels_msg.c common/utf8.c common/sandbox_msg.c
# dockerd-proxy: what Docker answers.
fuzz_docker_http_SRCS = dockerd-proxy/docker_http_parse.c \
	dockerd-proxy/docker_archive_parse.c common/msg.c common/file_msg.c \
	common/labels.c common/labels_msg.c common/utf8.c common/sandbox_msg.c
# Docker's one-shot stats answer, and the workspace probe's line.
fuzz_docker_stats_SRCS = dockerd-proxy/docker_stats_parse.c \
	common/stats_msg.c common/msg.c common/sandbox_msg.c common/labels.c \
	common/labels_msg.c common/utf8.c
# Docker's event stream, a line at a time.
fuzz_docker_events_SRCS = dockerd-proxy/docker_events_parse.c \
	dockerd-proxy/docker_json.c common/docker_event_msg.c common/msg.c \
	common/ids.c common/log.c
fuzz_path_stat_SRCS = dockerd-proxy/docker_archive_parse.c common/msg.c \
	common/file_msg.c common/labels.c common/labels_msg.c common/utf8.c \
	common/sandbox_msg.c
fuzz_proxy_frames_SRCS = dockerd-proxy/docker_frames.c
fuzz_tar_check_SRCS = dockerd-proxy/tar_check.c common/tar_header.c
# managerd: the image allowlist's globs.
fuzz_allowlist_SRCS = managerd/allowlist.c common/utf8.c
# the clients: what the server answers.
fuzz_process_lines_SRCS = client/rest_output.c client/rest_process.c \
	client/rest.c client/rest_http.c client/rest_url.c \
	common/websocket.c common/process_msg.c common/msg.c \
	common/sandbox_msg.c common/ids.c common/utf8.c common/imsg.c \
	common/labels.c common/labels_msg.c common/log.c
# common: the messages between the processes.
fuzz_msg_SRCS = common/msg.c common/sandbox_msg.c common/file_msg.c \
	common/process_msg.c common/ids.c common/caller.c \
	common/metrics_msg.c common/metrics.c common/utf8.c \
	common/labels.c common/labels_msg.c common/stats_msg.c \
	common/docker_event_msg.c
# The keys file, and the chunks its table travels in.
fuzz_keys_file_SRCS = common/keys_file.c common/caller.c common/msg.c \
	common/format.c common/utf8.c
fuzz_imsg_SRCS = common/imsg.c
# Egress policies: a client's JSON, an entry, the byte form, a check.
fuzz_egress_policy_SRCS = common/egress_policy.c common/egress_match.c \
	common/msg.c common/utf8.c
# The egress proxy: a sandbox's request head, in pieces.
fuzz_egress_request_SRCS = egress-proxy/egress_request.c \
	common/egress_policy.c common/msg.c common/utf8.c
# The netns helper: a pid's /proc/<pid>/cgroup against a container id.
fuzz_netns_cgroup_SRCS = netns-helper/netns_cgroup.c common/ids.c

HARNESSES := $(sort $(patsubst fuzz_%_SRCS,%,$(filter fuzz_%_SRCS,\
	$(.VARIABLES))))

S = $(top_srcdir)
B = $(top_builddir)/tests/fuzz
FUZZ_SECONDS ?= 10
# Sanitizers abort on the first finding, UB included, so that a run
# fails instead of printing a warning nobody reads.  Only the product's
# code gets coverage: the harnesses' own branches would slow the runs and
# steer the fuzzer to nothing.
SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
CFLAGS_FUZZ = -g -O1 -fno-omit-frame-pointer -Wall -Wextra \
	-Wno-unused-parameter
CPPFLAGS_FUZZ = -include $(top_builddir)/build_config.h -I$(S)/common \
	-I$(S)/apid -I$(S)/dockerd-proxy -I$(S)/archive-worker -I$(S)/managerd \
	-I$(S)/client -I$(S)/egress-proxy -I$(S)/netns-helper \
	-I$(S)/tests/fuzz $(FUZZ_CPPFLAGS)

# Quiet like automake's silent rules; V=1 shows the commands.
Q = $(if $(filter 1,$(V)),,@)

.SUFFIXES:
.PHONY: build run
.SECONDEXPANSION:
# Keep the objects: they are shared and rebuilt only when their sources
# (or the headers they include, from the .d files) change.
.SECONDARY:

build: $(HARNESSES:%=$(B)/fuzz_%)

ifeq ($(FUZZ_CC),)
$(B)/fuzz_%:
	@echo "fuzz: no clang with libFuzzer (apt-get install clang-14" \
	    "libclang-rt-14-dev, then re-run configure)" >&2; exit 1
else
# One object per source, shared by the harnesses that link it; rebuilt
# when this file (the flags) changes.
$(B)/obj/%.o: $(S)/%.c $(S)/tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCC   $@")
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer-no-link $(SAN) $(CFLAGS_FUZZ) \
	    $(CPPFLAGS_FUZZ) -MMD -MP -c $< -o $@

$(B)/obj/tests/fuzz/%.o: $(S)/tests/fuzz/%.c $(S)/tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZCC   $@")
	$(Q)$(FUZZ_CC) $(SAN) $(CFLAGS_FUZZ) $(CPPFLAGS_FUZZ) -MMD -MP \
	    -c $< -o $@

objects_of = $(patsubst %.c,$(B)/obj/%.o,tests/fuzz/fuzz_$(1).c \
	tests/fuzz/harness.c $(fuzz_$(1)_SRCS))
$(B)/fuzz_%: $$(call objects_of,$$*)
	@$(if $(Q),echo "  FUZZLD   $@")
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer $(SAN) -o $@ $^ $(FUZZ_LIBS)
endif

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# FUZZ_RUNS, when set, reaches run.sh through the environment.
run: build
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(S)/tests/fuzz/run.sh $(S) $(B) \
	    $(HARNESSES)

clean:
	rm -rf $(B)/obj $(B)/work $(HARNESSES:%=$(B)/fuzz_%)
.PHONY: clean
