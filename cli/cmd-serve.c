// SPDX-License-Identifier: MIT
/*
 * pmon serve (issue #19): an agent for every host of a fleet. /metrics
 * exports what the collector (libpmon's pmon_collector, include/pmon/
 * collect.h) counts in the background as Prometheus text or OpenMetrics, /debug/pprof/profile samples the whole
 * system (or a cgroup) for N seconds and answers with pprof's gzipped
 * profile.proto, the exporter of `pmon report --format pprof`. HTTP,
 * TLS and basic authentication are libmicrohttpd's; this file only routes.
 * Lives in pmon-serve.so (loaded by cli/ui.c), so pmon itself never maps
 * libmicrohttpd.
 *
 * Threads: libmicrohttpd's one polling thread (epoll), which answers every
 * connection (a scrape only copies pointers to the body the last reading
 * rendered: lib/monitor/collect.c); a profile's own thread while it samples
 * (its connection is suspended meanwhile, so scrapes go on); the
 * collector's; and the main thread, which waits for SIGTERM/SIGINT/SIGHUP
 * with sigwait(): those signals are blocked in every thread before any is
 * created. A thread per connection cost a clone(), a stack and an exit per
 * scrape (Prometheus opens a connection per scrape when keep-alive is off,
 * as urllib does).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"
#include <pmon/pmon.h>

#define MAX_PROFILE_S 60
#define MAX_HZ 1000
#define MAX_FILE (1 << 20) /* certificates, keys, the auth file */

struct user {
	char *name, *password;
};

struct server {
	struct pmon_collector *col;
	struct user *users;
	size_t nusers;
	unsigned max_profile_s;
	atomic_bool profiling, stopping;
	/* Profile requests not yet answered (libmicrohttpd's completion callback
	 * counts them down): a stop waits for them, so that a profile cut short
	 * is answered 503 before the connections are shut. */
	pthread_mutex_t lock;
	pthread_cond_t answered; /* also: a profile thread ended */
	unsigned profiles_open;
	unsigned profile_threads; /* running: a stop waits for them to end */
};

/* A profile request, from its suspension to its answer (the request's
 * con_cls). */
struct profile_job {
	struct server *s;
	struct MHD_Connection *conn;
	unsigned long secs, hz;
	bool cgroup;
	char cgpath[PATH_MAX];
	/* set by the profile's thread before it resumes the connection */
	int err;
	char why[512];
	char *buf;
	size_t len;
};

/* A request's con_cls: seen (the headers are in); else a struct profile_job. */
static int seen_marker;

/* cmd_serve is what pmon-serve.so exports (cli/pmon-serve.map). */
int cmd_serve(int argc, char **argv);

/* ---- files -------------------------------------------------------------- */

/* The whole of @path (at most MAX_FILE bytes), NUL-terminated; NULL after
 * printing why. @secret: refuse a file others may read. */
static char *slurp(const char *path, const char *what, bool secret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;

	if (fd < 0) {
		cli_error("cannot open %s '%s': %s", what, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		cli_error("%s '%s' is not a regular file of at most 1 MiB", what, path);
		goto out;
	}
	if (secret && (st.st_mode & 077)) {
		cli_error("%s '%s' may be read by others (mode %04o): chmod 600 it", what, path,
			  (unsigned)(st.st_mode & 07777));
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		cli_error("out of memory");
		goto out;
	}
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	if (n < 0) {
		cli_error("cannot read %s '%s': %s", what, path, strerror(errno));
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
out:
	close(fd);
	return buf;
}

/* "user:password" lines ('#' comments, blank lines skipped). */
static int load_users(struct server *s, const char *path)
{
	char *text = slurp(path, "auth file", true), *save = NULL;
	unsigned lineno = 0;

	if (!text)
		return CLI_USAGE;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		char *colon = strchr(line, ':');
		if (!colon || colon == line || !colon[1]) {
			cli_error("auth file '%s' line %u: expected 'user:password'", path, lineno);
			free(text);
			return CLI_USAGE;
		}
		struct user *nu = realloc(s->users, (s->nusers + 1) * sizeof(*nu));
		if (!nu) {
			free(text);
			return CLI_FAIL;
		}
		s->users = nu;
		*colon = '\0';
		s->users[s->nusers].name = strdup(line);
		s->users[s->nusers].password = strdup(colon + 1);
		s->nusers++;
	}
	free(text);
	if (!s->nusers) {
		cli_error("auth file '%s' names no user", path);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* Compare without an early exit: the time taken does not tell how much of
 * a guessed password was right. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return !d;
}

/* ---- the listen address -------------------------------------------------- */

/* "127.0.0.1:9464", "[::1]:9464", "localhost:9464". */
static bool parse_listen(const char *s, struct sockaddr_storage *ss, bool *v6, bool *loopback)
{
	char host[128];
	const char *colon;
	unsigned long port;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return false;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535 || colon[1] == '-' || colon[1] == '+')
		return false;
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*v6 = false;
		*loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
		return true;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*v6 = true;
		*loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		return true;
	}
	return false;
}

/* ---- responses ----------------------------------------------------------- */

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned code, const char *type,
			     struct MHD_Response *r)
{
	enum MHD_Result ret;

	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (code == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);

	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	return queue(conn, code, type, r);
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned code, const char *msg)
{
	return reply(conn, code, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

/* A formatted plain-text answer (an error naming the parameter). */
__attribute__((format(printf, 3, 4))) static enum MHD_Result
textf(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(conn, code, "text/plain; charset=utf-8", msg, (size_t)n, true);
}

static enum MHD_Result page_index(struct server *s, struct MHD_Connection *conn)
{
	char *items = NULL, *body = NULL;
	size_t ilen = 0;

	if (pmon_collector__describe(s->col, &items, &ilen))
		return MHD_NO;
	int n = asprintf(
		&body,
		"<!DOCTYPE html>\n<html><head><title>pmon serve</title></head><body>\n"
		"<h1>pmon serve %s</h1>\n<ul>\n"
		"<li><a href=\"/metrics\">/metrics</a>: Prometheus text or OpenMetrics</li>\n"
		"<li><a href=\"/debug/pprof/profile?seconds=5\">/debug/pprof/profile"
		"?seconds=N&amp;hz=H</a>: a CPU profile (pprof)</li>\n"
		"<li><a href=\"/healthz\">/healthz</a></li>\n</ul>\n"
		"<h2>Exported</h2>\n<ul>\n%s</ul>\n</body></html>\n",
		pmon_version(), items);
	free(items);
	if (n < 0)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", body, (size_t)n, true);
}

static enum MHD_Result page_metrics(struct server *s, struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	bool om = serve_accept_openmetrics(accept);
	struct pmon_scrape *sc;
	struct MHD_IoVec iov[2];
	size_t len;

	if (pmon_collector__render(s->col, om, &sc))
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	/* Sent from the shared body itself (sendmsg() of both parts): the
	 * response drops its reference when done. */
	iov[0].iov_base = pmon_scrape__body(sc, &len);
	iov[0].iov_len = len;
	iov[1].iov_base = pmon_scrape__tail(sc, &len);
	iov[1].iov_len = len;
	struct MHD_Response *r = MHD_create_response_from_iovec(iov, 2, pmon_scrape__free, sc);
	if (!r) {
		pmon_scrape__free(sc);
		return MHD_NO;
	}
	return queue(conn, MHD_HTTP_OK,
		     om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			: "text/plain; version=0.0.4; charset=utf-8",
		     r);
}

/* ---- profiles ------------------------------------------------------------ */

static int drain_rec(void *ctx, const void *rec, size_t len)
{
	return pmon_data_writer__add(ctx, rec, len);
}

/* A query parameter as a number in [1, @max]; @def when absent. */
static bool query_uint(struct MHD_Connection *conn, const char *key, unsigned long def,
		       unsigned long max, unsigned long *out)
{
	return serve_query_uint(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key), def,
				max, out);
}

/*
 * Sample cpu-clock on every CPU (or the tasks of @cgroup) at @hz for @secs
 * seconds into a private recording, then turn it into pprof's format with
 * the report's reader and exporter. Return: 0 with the gzipped profile in
 * *@out; -errno with @why set.
 */
static int profile(struct server *s, unsigned long secs, unsigned long hz, const char *cgroup,
		   char **out, size_t *outlen, char *why, size_t whylen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	const char *tmp = getenv("TMPDIR");
	struct pmon_evlist *ev = pmon_evlist__new(NULL);
	struct pmon_sampler *smp = NULL;
	struct pmon_data_writer *w = NULL;
	/* every CPU; a cgroup's tasks on every CPU with one */
	struct pmon_target *t =
		cgroup ? pmon_target__new_cgroup(cgroup) : pmon_target__new_cpus(NULL, 0);
	struct pmon_sample_opts so = { .sz = sizeof(so), .freq = hz, .callchain = true };
	struct pmon_report r = { 0 };
	bool have_report = false;
	int err;

	*out = NULL;
	snprintf(dir, sizeof(dir), "%s/pmon-serve-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	path[0] = '\0';
	if (!ev || !mkdtemp(dir)) {
		err = -errno;
		snprintf(why, whylen, "cannot make a temporary directory: %s", strerror(errno));
		dir[0] = '\0';
		goto out;
	}
	snprintf(path, sizeof(path), "%s/profile.pmon", dir);
	if ((err = pmon_evlist__add(ev, "cpu-clock")) ||
	    (err = t && (smp = pmon_sampler__open(ev, t, &so)) ? 0 : -errno)) {
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	struct pmon_data_header h = { .sample_type = pmon_sampler__sample_type(smp),
				      .regs_user = pmon_sampler__regs_user(smp),
				      .attr_type = pmon_evlist__event(ev, 0)->attr.type,
				      .attr_config = pmon_evlist__event(ev, 0)->attr.config,
				      .freq = hz };
	snprintf(h.event, sizeof(h.event), "cpu-clock");
	snprintf(h.command, sizeof(h.command), "pmon serve profile %lus", secs);
	const uint64_t *ids = NULL;
	size_t nids = pmon_sampler__ids(smp, 0, &ids);
	if ((err = (w = pmon_data_writer__open(path, &h)) ? 0 : -errno) ||
	    (err = pmon_data_writer__add_event(w, 0, "cpu-clock", h.attr_type, h.attr_config, 0, hz,
					       ids, nids))) {
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	pmon_sampler__enable(smp);
	/* Mappings made before the profile began come from /proc. */
	if (pmon_data_writer__add_maps(w, 0) < 0) {
		err = -EIO;
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	double end = pmon_monotonic_s() + (double)secs;
	while (pmon_monotonic_s() < end && !atomic_load(&s->stopping)) {
		pmon_sampler__poll(smp, 200);
		long n = pmon_sampler__drain(smp, drain_rec, w);
		if (n < 0 || pmon_data_writer__flush(w)) {
			err = n < 0 ? (int)n : -EIO;
			snprintf(why, whylen, "%s", pmon_errdetail());
			goto out;
		}
	}
	pmon_sampler__disable(smp);
	if (pmon_sampler__drain(smp, drain_rec, w) < 0) {
		err = -EIO;
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	err = pmon_data_writer__close(w);
	w = NULL;
	if (err) {
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	if (atomic_load(&s->stopping)) {
		err = -ECANCELED;
		snprintf(why, whylen, "pmon serve is stopping; the profile was cut short");
		goto out;
	}
	struct pmon_report_opts ro = { .sz = sizeof(ro) };
	if ((err = pmon_report_read(path, &ro, &r))) {
		snprintf(why, whylen, "%s", pmon_errdetail());
		goto out;
	}
	have_report = true;
	FILE *f = open_memstream(out, outlen);
	if (!f) {
		err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	err = pmon_report_write_pprof(&r, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		snprintf(why, whylen, "cannot write the profile: %s", strerror(-err));
		free(*out);
		*out = NULL;
	}
out:
	pmon_target__free(t);
	if (w)
		pmon_data_writer__abandon(w);
	pmon_sampler__close(smp);
	pmon_evlist__free(ev);
	if (have_report)
		pmon_report_release(&r);
	if (path[0])
		unlink(path);
	if (dir[0])
		rmdir(dir);
	return err;
}

/* A profile's thread: sample, keep the answer in the job, resume the
 * connection (libmicrohttpd then calls handle() again, which answers). */
static void *profile_main(void *arg)
{
	struct profile_job *j = arg;
	struct server *s = j->s;

	j->err = profile(s, j->secs, j->hz, j->cgroup ? j->cgpath : NULL, &j->buf, &j->len, j->why,
			 sizeof(j->why));
	pmon_collector__set_profiling(s->col, false);
	atomic_store(&s->profiling, false);
	MHD_resume_connection(j->conn); /* j belongs to the connection from here */
	pthread_mutex_lock(&s->lock);
	s->profile_threads--;
	pthread_cond_broadcast(&s->answered);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The answer of a profile whose thread has ended. */
static enum MHD_Result profile_answer(struct profile_job *j)
{
	char *buf = j->buf;

	if (j->err)
		return textf(j->conn,
			     j->err == -ECANCELED ? MHD_HTTP_SERVICE_UNAVAILABLE
						  : MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "cannot profile: %s\n", j->why);
	j->buf = NULL; /* the response frees it */
	return reply(j->conn, MHD_HTTP_OK, "application/octet-stream", buf, j->len, true);
}

static enum MHD_Result page_profile(struct server *s, struct MHD_Connection *conn, void **con_cls)
{
	unsigned long secs, hz;
	const char *cg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cgroup");
	char cgpath[PATH_MAX];

	if (!query_uint(conn, "seconds", 10, s->max_profile_s, &secs))
		return textf(conn, MHD_HTTP_BAD_REQUEST,
			     "seconds: a whole number from 1 to %u (--max-profile-seconds)\n",
			     s->max_profile_s);
	if (!query_uint(conn, "hz", 99, MAX_HZ, &hz))
		return textf(conn, MHD_HTTP_BAD_REQUEST, "hz: a whole number from 1 to %d\n",
			     MAX_HZ);
	/* A cgroup by its label in the metrics, among those counted: a client
	 * names no directory of this host. */
	if (cg && !pmon_collector__cgroup_path(s->col, cg, cgpath, sizeof(cgpath)))
		return text(conn, MHD_HTTP_NOT_FOUND,
			    "cgroup: no counted cgroup has that label (see /metrics)\n");
	struct profile_job *j = calloc(1, sizeof(*j));
	if (!j)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	*j = (struct profile_job){ .s = s, .conn = conn, .secs = secs, .hz = hz, .cgroup = !!cg };
	if (cg)
		snprintf(j->cgpath, sizeof(j->cgpath), "%s", cgpath);
	bool no = false;
	if (!atomic_compare_exchange_strong(&s->profiling, &no, true)) {
		free(j);
		return text(conn, MHD_HTTP_TOO_MANY_REQUESTS,
			    "a profile is being taken; one at a time\n");
	}
	pthread_mutex_lock(&s->lock);
	s->profiles_open++; /* counted down when answered (request_done) */
	*con_cls = j;
	pthread_mutex_unlock(&s->lock);
	if (atomic_load(&s->stopping)) {
		atomic_store(&s->profiling, false);
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "cannot profile: pmon serve is stopping\n");
	}
	pmon_collector__set_profiling(s->col, true);
	/* The polling thread must not sample for N seconds: the connection
	 * waits, suspended, while a thread of its own does. */
	pthread_attr_t attr;
	pthread_t th;
	int err = pthread_attr_init(&attr);
	if (!err)
		err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&s->lock);
	MHD_suspend_connection(conn);
	if (!err)
		err = pthread_create(&th, &attr, profile_main, j);
	if (!err)
		s->profile_threads++;
	pthread_mutex_unlock(&s->lock);
	pthread_attr_destroy(&attr);
	if (err) {
		MHD_resume_connection(conn);
		pmon_collector__set_profiling(s->col, false);
		atomic_store(&s->profiling, false);
		j->err = -err;
		snprintf(j->why, sizeof(j->why), "cannot start its thread: %s", strerror(err));
	}
	return MHD_YES; /* answered by profile_answer() once resumed */
}

/* ---- routing ------------------------------------------------------------- */

static bool authorized(struct server *s, struct MHD_Connection *conn)
{
	char *pass = NULL;
	char *user = MHD_basic_auth_get_username_password(conn, &pass);
	bool ok = false;

	for (size_t i = 0; user && pass && i < s->nusers; i++)
		ok |= !strcmp(user, s->users[i].name) & same_secret(pass, s->users[i].password);
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;

	if (!*con_cls) { /* the headers are in; answer on the next call */
		*con_cls = &seen_marker;
		return MHD_YES;
	}
	if (*con_cls != &seen_marker) /* a profile, resumed: its thread has ended */
		return profile_answer(*con_cls);
	if (*upload_data_size) { /* a body is ignored, and refused below */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (s->nusers && !authorized(s, conn)) {
		struct MHD_Response *r = MHD_create_response_from_buffer(
			13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		enum MHD_Result ret = MHD_queue_basic_auth_fail_response(conn, "pmon", r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!strcmp(url, "/metrics"))
		return page_metrics(s, conn);
	if (!strcmp(url, "/healthz"))
		return text(conn, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/"))
		return page_index(s, conn);
	if (!strcmp(url, "/debug/pprof/profile"))
		return page_profile(s, conn, con_cls);
	return text(conn, MHD_HTTP_NOT_FOUND, "not found; see /\n");
}

/* libmicrohttpd's MHD_OPTION_NOTIFY_COMPLETED: a request was answered (its
 * response sent) or its connection closed. */
static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;

	struct profile_job *j = *con_cls;

	(void)conn;
	(void)toe;
	if (!j || *con_cls == &seen_marker)
		return;
	pthread_mutex_lock(&s->lock);
	s->profiles_open--;
	*con_cls = NULL;
	pthread_cond_broadcast(&s->answered);
	pthread_mutex_unlock(&s->lock);
	free(j->buf);
	free(j);
}

/*
 * Wait until every profile's thread has ended (the sampling loop sees
 * s->stopping within 200 ms; the thread uses the collector and resumes
 * its connection, and libmicrohttpd must have no connection suspended
 * when it stops), then (10 s at most) until every profile request has been
 * answered: MHD_stop_daemon() shuts every connection's socket first thing,
 * which would cut the 503 off (the client would see an empty reply).
 */
static void wait_profiles_answered(struct server *s)
{
	struct timespec until;

	pthread_mutex_lock(&s->lock);
	while (s->profile_threads)
		pthread_cond_wait(&s->answered, &s->lock);
	pthread_mutex_unlock(&s->lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&s->lock);
	while (s->profiles_open &&
	       pthread_cond_timedwait(&s->answered, &s->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&s->lock);
}

/* libmicrohttpd's own messages (a client that went away, a header too large)
 * are the clients' business, not the operator's. */
static void quiet_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

/* perf_event descriptors this process still has (0 after a clean stop):
 * the entries of /proc/self/fd, not every possible number. */
static unsigned perf_fds_left(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char link[300], target[64];
	unsigned n = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (k < 0)
			continue;
		target[k] = '\0';
		n += !strcmp(target, "anon_inode:[perf_event]");
	}
	if (d)
		closedir(d);
	return n;
}

/* ---- the command --------------------------------------------------------- */

/* What the options say to count. */
struct serve_opts {
	const char *events; /* -e, or NULL for the defaults */
	bool system_wide; /* -a: every task, per CPU */
	char **cgroups; /* --cgroup, as given */
	size_t ncgroups;
	const char *cgroup_root; /* --cgroup-root: every cgroup below, rescanned */
	bool rdt;
	const char *resctrl_root; /* --resctrl-root, or NULL: the mounted one */
	unsigned interval_ms;
};

/* --cgroup PATH, repeatable: appended to the serve_opts at opt->value. */
static int opt_cgroup(const struct cli_option *opt, const char *arg)
{
	struct serve_opts *o = opt->value;
	char **nc = realloc(o->cgroups, (o->ncgroups + 1) * sizeof(*nc));

	if (!nc) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	o->cgroups = nc;
	o->cgroups[o->ncgroups++] = (char *)arg;
	return CLI_OK;
}

/* libmicrohttpd serving @s on @ss (HTTPS with @cert_pem), or NULL. */
static struct MHD_Daemon *daemon_start(struct server *s, struct sockaddr_storage *ss, bool v6,
				       const char *cert_pem, const char *key_pem)
{
	const char *cert = cert_pem;
	struct MHD_Daemon *d;

	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME |
		(MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
									: MHD_USE_POLL) |
		MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0) | (cert ? MHD_USE_TLS : 0);
	/* Limits against clients that misbehave: headers beyond 32 KiB get 431,
	 * an idle or trickling connection is closed after 10 s, and at most 128
	 * connections at once. */
	if (cert)
		d = MHD_start_daemon(
			flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, ss,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_CONNECTION_LIMIT,
			(unsigned)128, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
			MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL, MHD_OPTION_NOTIFY_COMPLETED,
			request_done, s, MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
			MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, ss,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)128,
				     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				     MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
				     MHD_OPTION_NOTIFY_COMPLETED, request_done, s, MHD_OPTION_END);
	return d;
}

/* Say where it listens, then serve until SIGTERM, SIGINT or SIGHUP (blocked
 * in every thread: taken here with sigwait()) and answer the profiles in
 * progress. */
static void serve_until_signal(struct server *s, struct MHD_Daemon *d,
			       const struct sockaddr_storage *ss, bool v6, bool tls,
			       unsigned interval_ms)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char host[INET6_ADDRSTRLEN] = "?";
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
	fprintf(stderr,
		"pmon serve: listening on %s://%s%s%s:%u/ (%zu events, %zu cgroups, every %u ms)\n",
		tls ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "",
		info ? (unsigned)info->port : 0u, pmon_collector__nevents(s->col),
		pmon_collector__ncgroups(s->col), interval_ms);

	int sig = 0;
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	while (sigwait(&stop, &sig))
		;
	atomic_store(&s->stopping, true); /* a profile in progress ends */
	fprintf(stderr, "pmon serve: stopping (%s)\n", strsignal(sig));
	wait_profiles_answered(s);
}

/* --tls-cert and --tls-key, read. Return: CLI_OK (*@cert_pem and *@key_pem
 * set, or NULL without TLS) or the exit code, said. */
static int load_tls(const char *cert, const char *key, char **cert_pem, char **key_pem)
{
	if (!cert != !key) {
		cli_error("--tls-cert and --tls-key go together");
		return CLI_USAGE;
	}
	if (!cert)
		return CLI_OK;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		cli_error("this libmicrohttpd was built without TLS");
		return CLI_UNSUPPORTED;
	}
	if (!(*cert_pem = slurp(cert, "certificate", false)) ||
	    !(*key_pem = slurp(key, "key", true)))
		return CLI_USAGE;
	return CLI_OK;
}

/* The library's collector for what the options say, each failure said in
 * one line. Return: CLI_OK with *@out set, or the exit code. */
static int collector_new(const struct serve_opts *o, struct pmon_collector **out)
{
	struct pmon_collector_opts co = { .sz = sizeof(co),
					  .events = o->events,
					  .interval_ms = o->interval_ms,
					  .rdt = o->rdt,
					  .resctrl_root = o->resctrl_root };
	struct pmon_collector *c = pmon_collector__new(&co);
	const char *why;
	int err;

	*out = NULL;
	if (!c) {
		cli_error("%s", pmon_errdetail());
		/* out of memory, out of descriptors; else the events named */
		return errno == ENOMEM || errno == EMFILE || errno == ENFILE || errno == ENODEV
			? CLI_FAIL
			: CLI_USAGE;
	}
	if ((why = pmon_collector__rdt_unavailable(c)))
		cli_warn("--rdt: no resctrl monitoring here (%s); pmon_rdt_available is 0", why);
	if (o->system_wide && pmon_collector__add_system_wide(c)) {
		cli_error("cannot count system-wide: %s", pmon_errdetail());
		pmon_collector__free(c);
		return CLI_UNSUPPORTED;
	}
	for (size_t i = 0; i < o->ncgroups; i++) {
		err = pmon_collector__add_cgroup(c, o->cgroups[i]);
		if (err) {
			cli_error("cannot count cgroup '%s': %s", o->cgroups[i], pmon_errdetail());
			pmon_collector__free(c);
			return err == -ENOENT || err == -ENOTDIR ? CLI_USAGE : CLI_UNSUPPORTED;
		}
	}
	if (o->cgroup_root && pmon_collector__watch_root(c, o->cgroup_root)) {
		cli_error("--cgroup-root: %s", pmon_errdetail());
		pmon_collector__free(c);
		return CLI_USAGE;
	}
	*out = c;
	return CLI_OK;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { 0 };
	struct server s = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .answered = PTHREAD_COND_INITIALIZER };
	const char *listen = "127.0.0.1:9464", *cert = NULL, *key = NULL, *auth = NULL;
	char *cert_pem = NULL, *key_pem = NULL;
	struct MHD_Daemon *d = NULL;
	unsigned long interval = 1000, maxprof = 30;
	int rc = CLI_OK;
	const struct cli_option options[] = {
		CLI_OPT_TEXT("Count in the background and serve, over HTTP:\n"
			     "  /metrics               Prometheus text 0.0.4 or OpenMetrics 1.0 "
			     "(Accept)\n"
			     "  /debug/pprof/profile   ?seconds=N&hz=H: a CPU profile for go tool "
			     "pprof\n"
			     "  /healthz, /            liveness; what is exported"),
		CLI_OPT_STRING(0, "listen", &listen, "ADDR:PORT",
			       "default 127.0.0.1:9464; [::1]:PORT for IPv6; port 0\n"
			       "picks a free one (printed on stderr)"),
		CLI_OPT_JOIN('e', "events", &o.events, "LIST",
			     "events to count, comma-separated or -e again (default:\n"
			     "the software events, and cycles, instructions,\n"
			     "branches where a PMU exists)"),
		CLI_OPT_FLAG('a', "all-cpus", &o.system_wide,
			     "every task on every CPU (the default without cgroups)"),
		CLI_OPT_CALLBACK(0, "cgroup", &o, "PATH", opt_cgroup,
				 "count this cgroup directory, per CPU (repeatable)"),
		CLI_OPT_STRING(0, "cgroup-root", &o.cgroup_root, "PATH",
			       "count every cgroup below PATH, as they come and go"),
		CLI_OPT_FLAG(0, "rdt", &o.rdt,
			     "L3 occupancy and memory bandwidth (resctrl), of the\n"
			     "system and of each counted cgroup's threads"),
		CLI_OPT_STRING(0, "resctrl-root", &o.resctrl_root, "DIR",
			       "another resctrl mount (tests: an emulated tree)"),
		CLI_OPT_UINT_MIN(0, "interval", &interval, "MS", 100, 3600000, "100 ms at least",
				 "reading interval (default 1000, 100 at least)"),
		CLI_OPT_STRING(0, "tls-cert", &cert, "FILE",
			       "serve HTTPS with this PEM certificate"),
		CLI_OPT_STRING(0, "tls-key", &key, "FILE", "...and this key (mode 0600)"),
		CLI_OPT_STRING(0, "auth-file", &auth, "FILE",
			       "basic authentication: lines 'user:password'"),
		CLI_OPT_UINT_MIN(0, "max-profile-seconds", &maxprof, "N", 1, 3600, "1 at least",
				 "the longest profile one request may ask for (30)"),
		CLI_OPT_TEXT(
			"Cgroups need a perf_event hierarchy (cgroup v1) or cgroup v2 with the\n"
			"perf_event controller. Metric list: docs/serve.md."),
		CLI_OPT_END(),
	};
	int argi = cli_parse_options(
		"serve",
		"usage: pmon serve [--listen ADDR:PORT] [-e EVENTS] [-a] [--cgroup PATH]...\n"
		"                  [--cgroup-root PATH] [--rdt [--resctrl-root DIR]] [--interval "
		"MS]\n"
		"                  [--tls-cert FILE --tls-key FILE] [--auth-file FILE]\n"
		"                  [--max-profile-seconds N]",
		options, 0, argc, argv);

	if (argi <= 0) {
		rc = -argi;
		goto out;
	}
	if (argi < argc) {
		cli_error("unexpected argument '%s' (pmon serve runs no command)", argv[argi]);
		rc = CLI_USAGE;
		goto out;
	}
	o.interval_ms = (unsigned)interval;
	s.max_profile_s = (unsigned)maxprof;
	if (!o.ncgroups && !o.cgroup_root)
		o.system_wide = true;

	struct sockaddr_storage ss;
	bool v6 = false, loopback = false;
	if (!parse_listen(listen, &ss, &v6, &loopback)) {
		cli_error("--listen '%s': expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or [::1]:9464",
			  listen);
		rc = CLI_USAGE;
		goto out;
	}
	if ((rc = load_tls(cert, key, &cert_pem, &key_pem)) != CLI_OK)
		goto out;
	if (auth && (rc = load_users(&s, auth)) != CLI_OK)
		goto out;
	if (!loopback && !auth)
		cli_warn("serving on '%s', beyond this host, without --auth-file", listen);

	/* Before any thread exists: every thread inherits the blocked set, and
	 * the main thread takes the signals with sigwait(). */
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);

	rc = collector_new(&o, &s.col);
	if (rc != CLI_OK)
		goto unblock;
	if (pmon_collector__start(s.col)) {
		cli_error("cannot start the collector thread");
		rc = CLI_FAIL;
		goto unblock;
	}
	d = daemon_start(&s, &ss, v6, cert_pem, key_pem);
	if (!d) {
		cli_error("cannot listen on '%s': %s", listen,
			  errno ? strerror(errno) : "libmicrohttpd refused the options");
		rc = CLI_FAIL;
		goto unblock;
	}
	serve_until_signal(&s, d, &ss, v6, cert != NULL, o.interval_ms);

unblock:
	if (d)
		MHD_stop_daemon(d);
	pmon_collector__free(s.col);
	s.col = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == CLI_OK) {
		/* Every counter must be closed by now: say so if not. */
		unsigned left = perf_fds_left();
		if (left) {
			cli_error("%u perf_event descriptors still open after stopping", left);
			rc = CLI_FAIL;
		}
	}
out:
	for (size_t i = 0; i < s.nusers; i++) {
		free(s.users[i].name);
		free(s.users[i].password);
	}
	free(s.users);
	free(cert_pem);
	free(key_pem);
	free(o.cgroups);
	return rc;
}
