// SPDX-License-Identifier: MIT
/*
 * Linux resctrl monitoring groups (pmon/rdt.h), following
 * Documentation/arch/x86/resctrl.rst: mkdir under mon_groups allocates an
 * RMID (ENOSPC when none is free, EBUSY while freed ones are in limbo),
 * writing a task id to "tasks" moves it, mon_data/mon_L3_XX/<event> reads
 * a number or Error/Unavailable/Unassigned, rmdir frees the RMID.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"
#include <pmon/rdt.h>

#define RDTGROUP_SUPER_MAGIC 0x7655821 /* include/uapi/linux/magic.h */

static const char *const event_files[] = { "llc_occupancy", "mbm_total_bytes", "mbm_local_bytes" };

struct pmon_rdt_group {
	char path[512];
	char root[256];
	bool emulated;
	bool owned; /* created by pmon: removed by pmon */
};

const char *pmon_rdt_state_name(enum pmon_rdt_state s)
{
	switch (s) {
	case PMON_RDT_OK:
		return "ok";
	case PMON_RDT_ERROR:
		return "Error";
	case PMON_RDT_UNAVAILABLE:
		return "Unavailable";
	case PMON_RDT_UNASSIGNED:
		return "Unassigned";
	default:
		return "absent";
	}
}

static int find_root(const char *root, char *out, size_t len)
{
	FILE *f;
	char line[1024];

	if (root) {
		pmon__strlcpy(out, root, len);
		return 0;
	}
	f = fopen("/proc/mounts", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char dev[256], dir[256], fs[64];
		if (sscanf(line, "%255s %255s %63s", dev, dir, fs) == 3 && !strcmp(fs, "resctrl")) {
			pmon__strlcpy(out, dir, len);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	return pmon__err(-ENOENT,
			 "resctrl is not mounted (as root: mount -t resctrl resctrl "
			 "/sys/fs/resctrl)");
}

static unsigned count_groups(const char *root)
{
	char path[600];
	unsigned n = 0;
	DIR *d;
	struct dirent *de;

	/* Every control group and monitoring group holds an RMID; the root
	 * group holds RMID 0. */
	d = opendir(root);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "info") ||
		    !strcmp(de->d_name, "mon_groups") || !strcmp(de->d_name, "mon_data"))
			continue;
		pmon__fmt(path, sizeof(path), "%s/%s/tasks", root, de->d_name);
		if (access(path, F_OK) == 0)
			n++;
	}
	if (d)
		closedir(d);
	pmon__fmt(path, sizeof(path), "%s/mon_groups", root);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n + 1;
}

int pmon_rdt_caps(const char *root, struct pmon_rdt_caps *c)
{
	char path[600], text[512];
	struct statfs sf;
	long v;
	int err;

	memset(c, 0, sizeof(*c));
	err = find_root(root, c->root, sizeof(c->root));
	if (err)
		return err;
	c->emulated = statfs(c->root, &sf) || sf.f_type != RDTGROUP_SUPER_MAGIC;
	pmon__fmt(path, sizeof(path), "%s/info/L3_MON/num_rmids", c->root);
	if (pmon__read_long(path, &v))
		return pmon__err(-ENOENT, "%s: no L3 monitoring (info/L3_MON/num_rmids missing)",
				 c->root);
	c->num_rmids = (unsigned)v;
	pmon__fmt(path, sizeof(path), "%s/info/L3_MON/mon_features", c->root);
	if (pmon__read_text(path, text, sizeof(text)) >= 0) {
		c->occupancy = strstr(text, "llc_occupancy") != NULL;
		c->mbm_total = strstr(text, "mbm_total_bytes") != NULL;
		c->mbm_local = strstr(text, "mbm_local_bytes") != NULL;
	}
	pmon__fmt(path, sizeof(path), "%s/info/L3_MON/max_threshold_occupancy", c->root);
	if (!pmon__read_long(path, &v))
		c->max_threshold_occupancy = (uint64_t)v;
	c->groups = count_groups(c->root);
	return 0;
}

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

/* Emulated tree: create the group's files as the kernel would. */
static int emulate_group(const struct pmon_rdt_group *g)
{
	char src[600], dst[700], path[800];
	DIR *d;
	struct dirent *de;
	int err;

	pmon__fmt(path, sizeof(path), "%s/tasks", g->path);
	if ((err = put(path, "")))
		return err;
	pmon__fmt(dst, sizeof(dst), "%s/mon_data", g->path);
	if (mkdir(dst, 0755) && errno != EEXIST)
		return -errno;
	pmon__fmt(src, sizeof(src), "%s/mon_data", g->root);
	d = opendir(src);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "mon_", 4))
			continue;
		pmon__fmt(path, sizeof(path), "%s/%s", dst, de->d_name);
		mkdir(path, 0755);
		for (size_t i = 0; i < PMON_ARRAY_SIZE(event_files); i++) {
			char f[900], s[900];
			pmon__fmt(s, sizeof(s), "%s/%s/%s", src, de->d_name, event_files[i]);
			if (access(s, F_OK))
				continue;
			pmon__fmt(f, sizeof(f), "%s/%s", path, event_files[i]);
			put(f, "0\n");
		}
	}
	if (d)
		closedir(d);
	return 0;
}

static int group_new(const char *root, struct pmon_rdt_group **out)
{
	static unsigned seq;
	struct pmon_rdt_caps caps;
	struct pmon_rdt_group *g;
	int err = pmon_rdt_caps(root, &caps);

	if (err)
		return err;
	/* The kernel answers ENOSPC; say first which RMIDs are taken. */
	if (caps.groups >= caps.num_rmids)
		return pmon__err(-ENOSPC,
				 "no free RMID: %u groups hold all %u RMIDs of %s (remove a group; "
				 "ones named pmon-PID-N were left by a pmon that crashed)",
				 caps.groups, caps.num_rmids, caps.root);
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	pmon__strlcpy(g->root, caps.root, sizeof(g->root));
	g->emulated = caps.emulated;
	pmon__fmt(g->path, sizeof(g->path), "%s/mon_groups/pmon-%d-%u", caps.root, (int)getpid(),
		  ++seq);
	if (mkdir(g->path, 0755)) {
		err = -errno;
		free(g);
		if (err == -ENOSPC)
			return pmon__err(err, "no free RMID in %s (num_rmids %u)", caps.root,
					 caps.num_rmids);
		if (err == -EBUSY)
			return pmon__err(err,
					 "RMIDs are in limbo (recently freed, cache lines still "
					 "tagged): try again in a moment");
		return pmon__err(err, "cannot create a monitoring group in %s/mon_groups: %s",
				 caps.root, strerror(-err));
	}
	g->owned = true;
	if (g->emulated && (err = emulate_group(g))) {
		pmon_rdt_group__remove(g);
		return pmon__err(err, "emulated resctrl tree: %s", strerror(-err));
	}
	*out = g;
	return 0;
}

struct pmon_rdt_group *pmon_rdt_group__new(const char *root)
{
	struct pmon_rdt_group *g = NULL;

	int err = group_new(root, &g);

	return pmon__ret_ptr(err, g);
}

static int group_root(const char *root, struct pmon_rdt_group **out)
{
	struct pmon_rdt_caps caps;
	struct pmon_rdt_group *g;
	int err = pmon_rdt_caps(root, &caps);

	if (err)
		return err;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	pmon__strlcpy(g->root, caps.root, sizeof(g->root));
	pmon__strlcpy(g->path, caps.root, sizeof(g->path));
	g->emulated = caps.emulated;
	*out = g;
	return 0;
}

struct pmon_rdt_group *pmon_rdt_group__root(const char *root)
{
	struct pmon_rdt_group *g = NULL;

	int err = group_root(root, &g);

	return pmon__ret_ptr(err, g);
}

int pmon_rdt_group__set_cpus(struct pmon_rdt_group *g, const char *list)
{
	char path[600];
	int err;

	pmon__fmt(path, sizeof(path), "%s/cpus_list", g->path);
	err = put(path, list);
	if (err == -EINVAL)
		return pmon__err(err, "CPUs '%s': not a subset of the parent group's CPUs", list);
	if (err)
		return pmon__err(err, "%s: %s", path, strerror(-err));
	return 0;
}

const char *pmon_rdt_group__path(const struct pmon_rdt_group *g)
{
	return g->path;
}

static int move_task(const struct pmon_rdt_group *g, pid_t tid)
{
	char path[600], buf[32];
	int fd, n;

	pmon__fmt(path, sizeof(path), "%s/tasks", g->path);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)tid);
	if (write(fd, buf, (size_t)n) != n) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

int pmon_rdt_group__add(struct pmon_rdt_group *g, pid_t pid, bool threads)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	int err = 0, moved = 0;

	if (!threads) {
		err = move_task(g, pid);
		return err == -ESRCH ? pmon__err(err, "process %d no longer exists", (int)pid)
				     : err;
	}
	pmon__fmt(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return pmon__err(-ESRCH, "process %d does not exist", (int)pid);
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		int e = move_task(g, (pid_t)strtol(de->d_name, NULL, 10));
		if (e == -ESRCH) /* a thread that ended meanwhile */
			continue;
		if (e && !err)
			err = e;
		moved += !e;
	}
	closedir(d);
	if (!moved && !err)
		return pmon__err(-ESRCH, "process %d has no threads left", (int)pid);
	return err;
}

static struct pmon_rdt_value read_value(const char *dir, const char *event)
{
	char path[800], text[64];
	struct pmon_rdt_value v = { 0, PMON_RDT_ABSENT };
	uint64_t x;

	pmon__fmt(path, sizeof(path), "%s/%s", dir, event);
	if (pmon__read_text(path, text, sizeof(text)) < 0)
		return v;
	if (!strcmp(text, "Error"))
		v.state = PMON_RDT_ERROR;
	else if (!strcmp(text, "Unavailable"))
		v.state = PMON_RDT_UNAVAILABLE;
	else if (!strcmp(text, "Unassigned"))
		v.state = PMON_RDT_UNASSIGNED;
	else if (!pmon__parse_u64(text, 10, &x))
		v = (struct pmon_rdt_value){ x, PMON_RDT_OK };
	else
		v.state = PMON_RDT_ERROR;
	return v;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct pmon_rdt_domain *)a)->name,
		      ((const struct pmon_rdt_domain *)b)->name);
}

int pmon_rdt_group__read(struct pmon_rdt_group *g, struct pmon_rdt_reading *r)
{
	char path[600], dom[700];
	DIR *d;
	struct dirent *de;

	r->n = 0;
	pmon__fmt(path, sizeof(path), "%s/mon_data", g->path);
	d = opendir(path);
	if (!d)
		return pmon__err(-errno, "%s: %s", path, strerror(errno));
	/* Domains are re-listed every time: one may appear (a CPU coming
	 * online in a new L3 domain) or go. */
	while ((de = readdir(d)) && r->n < PMON_RDT_MAX_DOMAINS) {
		struct pmon_rdt_domain *x;
		if (strncmp(de->d_name, "mon_L3_", 7))
			continue;
		x = &r->d[r->n++];
		pmon__strlcpy(x->name, de->d_name, sizeof(x->name));
		pmon__fmt(dom, sizeof(dom), "%s/%s", path, de->d_name);
		x->occupancy = read_value(dom, event_files[0]);
		x->total = read_value(dom, event_files[1]);
		x->local = read_value(dom, event_files[2]);
	}
	closedir(d);
	qsort(r->d, r->n, sizeof(r->d[0]), cmp_name);
	return 0;
}

/* Deepest directory an emulated group holds: GROUP/mon_data/mon_L3_XX/
 * (files below); anything deeper is not pmon's and is refused, not walked. */
#define RM_MAX_DEPTH 8

/*
 * Remove an emulated group's files (only under mon_groups/pmon-*). The tree
 * is in a folder other users may write, so the walk never builds a path and
 * never follows a link: each directory is entered with openat(O_NOFOLLOW |
 * O_DIRECTORY) relative to its parent's descriptor (a directory swapped for a
 * symbolic link between readdir() and the open fails with ELOOP/ENOTDIR
 * instead of being walked), entries go with unlinkat(), which removes a link
 * itself (unlink(2) answers EISDIR for a directory: then it is entered), and
 * the stack of open directories is a bounded array, not recursion.
 * Return: 0 or the first -errno (-ELOOP for a tree deeper than pmon makes).
 */
static int rm_tree(const char *path)
{
	DIR *st[RM_MAX_DEPTH];
	char names[RM_MAX_DEPTH][256];
	int depth = 0, err = 0, fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	st[0] = fdopendir(fd);
	if (!st[0]) {
		err = -errno;
		close(fd);
		return err;
	}
	depth = 1;
	while (depth) {
		DIR *d = st[depth - 1];
		struct dirent *de;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno && !err)
				err = -errno;
			closedir(d);
			depth--;
			if (depth && unlinkat(dirfd(st[depth - 1]), names[depth], AT_REMOVEDIR) &&
			    !err)
				err = -errno;
			continue;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!unlinkat(dirfd(d), de->d_name, 0))
			continue;
		if (errno != EISDIR) {
			if (!err)
				err = -errno;
			continue;
		}
		if (depth == RM_MAX_DEPTH) {
			if (!err)
				err = -ELOOP;
			continue;
		}
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *c = fd < 0 ? NULL : fdopendir(fd);
		if (!c) {
			if (!err)
				err = -errno;
			if (fd >= 0)
				close(fd);
			continue;
		}
		pmon__strlcpy(names[depth], de->d_name, sizeof(names[depth]));
		st[depth++] = c;
	}
	if (rmdir(path) && !err)
		err = -errno;
	return err;
}

static int remove_dir(const char *path, bool emulated)
{
	if (emulated)
		return rm_tree(path);
	return rmdir(path) ? -errno : 0; /* resctrl removes the files itself */
}

int pmon_rdt_group__remove(struct pmon_rdt_group *g)
{
	int err;

	if (!g)
		return 0;
	if (!g->owned) {
		free(g);
		return 0;
	}
	err = remove_dir(g->path, g->emulated);
	if (err)
		pmon__err(err, "cannot remove %s: %s", g->path, strerror(-err));
	free(g);
	return err;
}

int pmon_rdt_cleanup(const char *root, unsigned *removed)
{
	struct pmon_rdt_caps caps;
	char path[600], grp[800];
	DIR *d;
	struct dirent *de;
	int err = pmon_rdt_caps(root, &caps);

	*removed = 0;
	if (err)
		return err;
	pmon__fmt(path, sizeof(path), "%s/mon_groups", caps.root);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		int pid, n, end = 0;
		/* Only our own naming: pmon-<pid>-<n>, nothing else. */
		if (sscanf(de->d_name, "pmon-%d-%d%n", &pid, &n, &end) != 2 ||
		    de->d_name[end] != '\0' || pid <= 0)
			continue;
		if (pid == getpid() || pmon__process_alive(pid))
			continue; /* its pmon is still running */
		if (!pmon__fmt(grp, sizeof(grp), "%s/%s", path, de->d_name))
			continue; /* a name cut short is another file: never removed */
		if (!remove_dir(grp, caps.emulated))
			(*removed)++;
	}
	if (d)
		closedir(d);
	return 0;
}
