/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mem_fault.c - SIGBUS net for guest memory whose file shrank (see
 * mem_fault.h).  The table is written by one thread at a time (the control
 * path, under its lock) and read by the signal handler on any thread: a
 * slot is published by storing its end last (release) and retired by
 * clearing its end first, so the handler (acquire) never sees a half-made
 * slot.  The handler calls only async-signal-safe functions (mmap, write,
 * sigaction, raise, gettid).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmd/mem_fault.h"

struct mf_slot {
	uintptr_t start; /* atomic */
	uintptr_t end;	 /* atomic; 0: free */
	uintptr_t mask;	 /* page size - 1 */
	int owner;
	unsigned tag;
	uintptr_t fault; /* atomic; faulting address not yet taken, 0: none */
};

static struct mf_slot slots[PMD_MEMFAULT_SLOTS];
/* The window (pmd_memfault_window_open): its thread (0: closed), page mask and faults. */
static pid_t window_tid;
static uintptr_t window_mask;
static unsigned window_faults;
static int event_fd = -1;
static struct sigaction prev_act;

/* The slot covering a, or NULL. */
static struct mf_slot *mf_lookup(uintptr_t a)
{
	for (unsigned i = 0; i < PMD_MEMFAULT_SLOTS; i++) {
		struct mf_slot *s = &slots[i];
		uintptr_t end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);

		if (end != 0 && a < end && a >= __atomic_load_n(&s->start, __ATOMIC_RELAXED))
			return s;
	}
	return NULL;
}

/* Map a zeroed anonymous page (mask + 1 bytes) over the one holding a; true when done. */
static bool mf_zero_page(uintptr_t a, uintptr_t mask)
{
	return mmap((void *)(a & ~mask), mask + 1, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED;
}

/* Put a zeroed page over the faulting one of slot s and report it; true when done. */
static bool mf_patch(struct mf_slot *s, uintptr_t a)
{
	uint64_t one = 1;
	uintptr_t none = 0;

	if (!mf_zero_page(a, s->mask))
		return false;
	__atomic_compare_exchange_n(&s->fault, &none, a, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	if (write(event_fd, &one, sizeof(one)) != sizeof(one)) {
		/* the counter is already non-zero: the control side will look anyway */
	}
	return true;
}

/* Not ours: the previous handler, or the default action (the process dies). */
static void mf_pass_on(int sig, siginfo_t *si, void *uc)
{
	if ((prev_act.sa_flags & SA_SIGINFO) && prev_act.sa_sigaction != NULL) {
		prev_act.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(prev_act.sa_flags & SA_SIGINFO) && prev_act.sa_handler != SIG_DFL &&
	    prev_act.sa_handler != SIG_IGN) {
		prev_act.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
	/* a fault repeats when the handler returns; a sent signal must be raised again */
	if (si == NULL || si->si_code <= 0)
		raise(SIGBUS);
}

/*
 * A fault on the thread of an open window, past the end of a file (the only
 * file mapping that thread touches there is the one it is making): patched
 * like a slot's, counted for pmd_memfault_window_close().
 */
static bool mf_window_patch(const siginfo_t *si)
{
	if (si->si_code != BUS_ADRERR ||
	    __atomic_load_n(&window_tid, __ATOMIC_ACQUIRE) != gettid() ||
	    !mf_zero_page((uintptr_t)si->si_addr, __atomic_load_n(&window_mask, __ATOMIC_RELAXED)))
		return false;
	__atomic_fetch_add(&window_faults, 1, __ATOMIC_RELAXED);
	return true;
}

static void mf_on_sigbus(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct mf_slot *s = NULL;
	bool patched = false;

	if (si != NULL && si->si_code > 0) {
		s = mf_lookup((uintptr_t)si->si_addr);
		patched = s != NULL ? mf_patch(s, (uintptr_t)si->si_addr) : mf_window_patch(si);
	}
	if (!patched)
		mf_pass_on(sig, si, uc);
	errno = saved;
}

void pmd_memfault_window_open(size_t page)
{
	__atomic_store_n(&window_faults, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&window_mask, (uintptr_t)(page != 0 ? page : 4096) - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&window_tid, gettid(), __ATOMIC_RELEASE);
}

unsigned pmd_memfault_window_close(void)
{
	if (__atomic_load_n(&window_tid, __ATOMIC_RELAXED) != gettid())
		return 0;
	__atomic_store_n(&window_tid, 0, __ATOMIC_RELEASE);
	return __atomic_exchange_n(&window_faults, 0, __ATOMIC_RELAXED);
}

int pmd_memfault_init(void)
{
	struct sigaction sa;

	if (event_fd >= 0)
		return 0;
	event_fd = eventfd(0, EFD_CLOEXEC);
	if (event_fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = mf_on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &prev_act) != 0) {
		int rc = -errno;

		close(event_fd);
		event_fd = -1;
		return rc;
	}
	return 0;
}

int pmd_memfault_fd(void)
{
	return event_fd;
}

int pmd_memfault_register(const void *addr, size_t len, size_t page, int owner, unsigned tag)
{
	uintptr_t a = (uintptr_t)addr;

	if (addr == NULL || len == 0 || a + len < a || page == 0 || (page & (page - 1)) != 0)
		return -EINVAL;
	for (unsigned i = 0; i < PMD_MEMFAULT_SLOTS; i++) {
		struct mf_slot *s = &slots[i];

		if (__atomic_load_n(&s->end, __ATOMIC_RELAXED) != 0)
			continue;
		__atomic_store_n(&s->start, a, __ATOMIC_RELAXED);
		s->mask = page - 1;
		s->owner = owner;
		s->tag = tag;
		__atomic_store_n(&s->fault, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->end, a + len, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

void pmd_memfault_unregister(int owner)
{
	pmd_memfault_unregister_tags(owner, 0, UINT_MAX);
}

void pmd_memfault_unregister_tags(int owner, unsigned lo, unsigned hi)
{
	for (unsigned i = 0; i < PMD_MEMFAULT_SLOTS; i++) {
		struct mf_slot *s = &slots[i];

		if (__atomic_load_n(&s->end, __ATOMIC_RELAXED) != 0 && s->owner == owner &&
		    s->tag >= lo && s->tag < hi) {
			__atomic_store_n(&s->end, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&s->start, 0, __ATOMIC_RELAXED);
		}
	}
}

bool pmd_memfault_take(struct pmd_memfault *f)
{
	for (unsigned i = 0; i < PMD_MEMFAULT_SLOTS; i++) {
		struct mf_slot *s = &slots[i];
		uintptr_t a = __atomic_exchange_n(&s->fault, 0, __ATOMIC_ACQUIRE);

		if (a == 0)
			continue;
		f->owner = s->owner;
		f->tag = s->tag;
		f->offset = a - __atomic_load_n(&s->start, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

bool pmd_memfault_covers(const void *addr)
{
	return mf_lookup((uintptr_t)addr) != NULL;
}
