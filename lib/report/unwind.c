// SPDX-License-Identifier: MIT
/*
 * DWARF unwinding of a sample's user stack (pmon record --call-graph
 * dwarf), as perf's unwind-libdw does: one Dwfl per process with its files
 * reported at their load addresses, attached to a "thread" whose registers
 * and memory are the sample's register set and stack copy; libdwfl walks
 * the CFI (.eh_frame / .debug_frame) frame by frame.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "report/report.h"

struct pmon__unw {
	Dwfl *dwfl;
	pid_t pid;
	bool attached;
	/* The sample being unwound. */
	Dwarf_Word
		regs[17]; /* DWARF x86-64 numbering: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	const uint8_t *stack;
	uint64_t sp, size;
	uint64_t *pcs;
	int n, max;
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct pmon__unw *pmon__unw_new(pid_t pid)
{
	struct pmon__unw *u = calloc(1, sizeof(*u));

	if (u && !(u->dwfl = dwfl_begin(&proc_cb))) {
		free(u);
		return NULL;
	}
	if (u) {
		u->pid = pid;
		dwfl_report_begin(u->dwfl);
	}
	return u;
}

int pmon__unw_report(struct pmon__unw *u, const char *path, uint64_t base)
{
	int fd = pmon__open_regular(path, false); /* not a FIFO: see open_module() */

	if (fd < 0)
		return fd;
	/* On success elfutils owns @fd (libdwfl.h); on failure it leaves a
	 * descriptor it did not open alone. */
	if (dwfl_report_elf(u->dwfl, path, path, fd, base, false))
		return 0;
	close(fd);
	return -ENOENT;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct pmon__unw *u = arg;

	(void)dwfl;
	if (*thread_argp) /* one thread: the sample's */
		return 0;
	*thread_argp = u;
	return u->pid;
}

/* Memory is the stack copy; anything else cannot be read (and need not:
 * the CFI itself comes from the files). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pmon__unw *u = arg;

	(void)dwfl;
	/* Written so that nothing wraps: @addr comes from the CFI applied to a
	 * recorded stack, and a crafted recording makes it anything
	 * (addr + 8 > sp + size wrapped near 2^64 and read far off the copy). */
	if (u->size < sizeof(*result) || addr < u->sp || addr - u->sp > u->size - sizeof(*result))
		return false;
	memcpy(result, u->stack + (addr - u->sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pmon__unw *u = arg;

	if (!dwfl_thread_state_registers(thread, 0, 17, u->regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_cb = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

int pmon__unw_finish(struct pmon__unw *u)
{
	if (dwfl_report_end(u->dwfl, NULL, NULL))
		return -EINVAL;
	u->attached = dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_cb, u);
	return u->attached ? 0 : -ENOTSUP;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct pmon__unw *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* perf's x86 register order in a sample (PMON_REGS_USER_X86: AX BX CX DX SI
 * DI BP SP IP, then R8-R15) to DWARF's. */
int pmon__unw_frames(struct pmon__unw *u, const uint64_t *perf_regs, const uint8_t *stack,
		     uint64_t size, uint64_t *pcs, int max)
{
	static const int dwarf_of[17] = {
		0, 3, 2, 1, 4, 5, 6, 7, 16, 8, 9, 10, 11, 12, 13, 14, 15
	};

	if (!u->attached || max <= 0)
		return 0;
	for (int i = 0; i < 17; i++)
		u->regs[dwarf_of[i]] = perf_regs[i];
	u->stack = stack;
	u->size = size;
	u->sp = perf_regs[7];
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	/* A walk that ends in an error (no CFI further up, a frame outside the
	 * copied stack) keeps the frames it found. */
	dwfl_getthread_frames(u->dwfl, u->pid, on_frame, u);
	return u->n;
}

void pmon__unw_free(struct pmon__unw *u)
{
	if (!u)
		return;
	dwfl_end(u->dwfl);
	free(u);
}
