// SPDX-License-Identifier: MIT
/*
 * pmon serve's HTTP side (lib/serve/http.h): libmicrohttpd's daemon and
 * what it answers. /metrics sends the body the collector's last reading
 * rendered (libpmon's pmon_collector, include/pmon/collect.h) as
 * Prometheus text or OpenMetrics; /debug/pprof/profile samples the whole
 * system (or a counted cgroup) for N seconds and answers with pprof's
 * gzipped profile.proto, the exporter of `pmon report --format pprof`
 * (libpmon-report); / and /healthz. HTTP, TLS and basic authentication
 * are libmicrohttpd's; this file only routes.
 *
 * Threads: libmicrohttpd's one polling thread (epoll), which answers every
 * connection (a scrape only copies pointers to the body the last reading
 * rendered: lib/monitor/collect.c), and a profile's own thread while it
 * samples (its connection is suspended meanwhile, so scrapes go on). A
 * thread per connection cost a clone(), a stack and an exit per scrape
 * (Prometheus opens a connection per scrape when keep-alive is off, as
 * urllib does).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve/http.h"
#include "serve/serve.h"
#include <pmon/pmon.h>

#define MAX_HZ 1000

/* A profile request, from its suspension to its answer (the request's
 * con_cls). */
struct profile_job {
	struct serve_server *s;
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

/*
 * An open connection (libmicrohttpd's socket context), in s->conns.
 * libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT is a time without traffic:
 * a client that trickles one header byte every few seconds resets it
 * forever, and 128 of them held every connection (issue #31). So the time
 * to a whole request head is bounded here: from the connection (or its
 * previous answer, for the next request of a kept-alive one) until the
 * access handler first sees the request.
 */
struct serve_conn {
	struct serve_conn *prev, *next;
	int fd;
	time_t since; /* CLOCK_MONOTONIC seconds */
	bool head_in, shut;
};

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The connection's head is in (@in), or a new request may begin (!@in). */
static void conn_mark(struct serve_server *s, struct MHD_Connection *conn, bool in)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct serve_conn *c = ci ? ci->socket_context : NULL;

	if (!c)
		return;
	pthread_mutex_lock(&s->conns_lock);
	c->head_in = in;
	c->since = now_s();
	pthread_mutex_unlock(&s->conns_lock);
}

/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION, in its thread. CLOSED
 * comes before libmicrohttpd closes the descriptor, so a sweep (under
 * conns_lock) never shuts a number the kernel has given to another file. */
static void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct serve_server *s = cls;
	struct serve_conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(c = calloc(1, sizeof(*c))))
			return; /* untracked: libmicrohttpd's idle timeout still applies */
		c->fd = ci->connect_fd;
		c->since = now_s();
		pthread_mutex_lock(&s->conns_lock);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->conns_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	pthread_mutex_unlock(&s->conns_lock);
	*socket_context = NULL;
	free(c);
}

unsigned serve_http_sweep(struct serve_server *s)
{
	time_t now = now_s();
	unsigned n = 0;

	pthread_mutex_lock(&s->conns_lock);
	bool crowded = s->nconns >= s->max_conns - s->max_conns / 8;
	time_t limit = crowded ? 1 : (time_t)s->timeout_s;
	for (struct serve_conn *c = s->conns; c; c = c->next) {
		if (c->head_in || c->shut || now - c->since < limit)
			continue;
		/* libmicrohttpd's thread then reads the end of the stream (or
		 * TLS fails) and closes the connection as a client's close. */
		shutdown(c->fd, SHUT_RDWR);
		c->shut = true;
		n++;
	}
	pthread_mutex_unlock(&s->conns_lock);
	return n;
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

static enum MHD_Result page_index(struct serve_server *s, struct MHD_Connection *conn)
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

static enum MHD_Result page_metrics(struct serve_server *s, struct MHD_Connection *conn)
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
 * A profile's folder is $TMPDIR/pmon-serve-PID-XXXXXX: one whose pmon is
 * gone (killed mid-profile: SIGKILL removes nothing) is removed by the next
 * profile, if it is ours and holds nothing but the recording (as pmon
 * bench --asm does with its folders, issue #31.10).
 */
static void remove_stale_profiles(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX], file[PATH_MAX + 32], end;
		struct stat st;
		int pid;
		if (sscanf(e->d_name, "pmon-serve-%d-%*6[A-Za-z0-9]%c", &pid, &end) != 1 ||
		    pid <= 0 || pmon_process_alive(pid))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		snprintf(file, sizeof(file), "%s/profile.pmon", path);
		if (!lstat(file, &st) && S_ISREG(st.st_mode))
			unlink(file);
		rmdir(path); /* fails, harmlessly, where something else is inside */
	}
	closedir(d);
}

/*
 * Sample cpu-clock on every CPU (or the tasks of @cgroup) at @hz for @secs
 * seconds into a private recording, then turn it into pprof's format with
 * the report's reader and exporter. Return: 0 with the gzipped profile in
 * *@out; -errno with @why set.
 */
static int profile(struct serve_server *s, unsigned long secs, unsigned long hz, const char *cgroup,
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
	tmp = tmp && *tmp ? tmp : "/tmp";
	remove_stale_profiles(tmp);
	snprintf(dir, sizeof(dir), "%s/pmon-serve-%d-XXXXXX", tmp, (int)getpid());
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
	struct serve_server *s = j->s;

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

static enum MHD_Result page_profile(struct serve_server *s, struct MHD_Connection *conn,
				    void **con_cls)
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

static bool authorized(struct serve_server *s, struct MHD_Connection *conn)
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
	struct serve_server *s = cls;

	if (!*con_cls) { /* the headers are in; answer on the next call */
		conn_mark(s, conn, true);
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
	struct serve_server *s = cls;

	struct profile_job *j = *con_cls;

	(void)toe;
	conn_mark(s, conn, false); /* the next request's head starts its clock */
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
void serve_http_wait_profiles(struct serve_server *s)
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

struct MHD_Daemon *serve_http_start(struct serve_server *s, struct sockaddr_storage *ss, bool v6,
				    const char *cert_pem, const char *key_pem)
{
	const char *cert = cert_pem;
	struct MHD_Daemon *d;

	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME |
		(MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
									: MHD_USE_POLL) |
		MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0) | (cert ? MHD_USE_TLS : 0);
	/* Limits against clients that misbehave (docs/serve.md, "Slow clients"):
	 * headers beyond 32 KiB get 431; a connection silent for timeout_s is
	 * closed here, one whose request head is late by serve_http_sweep();
	 * max_conns at once, max_client_conns from one address. */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert_pem },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key_pem },
		{ MHD_OPTION_END, 0, NULL },
	};
	d = MHD_start_daemon(
		flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, ss,
		MHD_OPTION_CONNECTION_TIMEOUT, s->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
		s->max_conns, MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->max_client_conns,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_EXTERNAL_LOGGER,
		quiet_log, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_done, s,
		MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s, MHD_OPTION_ARRAY,
		cert ? tls : tls + 2, MHD_OPTION_END);
	return d;
}

unsigned serve_http_port(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);

	return info ? (unsigned)info->port : 0u;
}
