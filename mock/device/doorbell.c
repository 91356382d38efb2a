/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The doorbell register of the mock's mlx5 device. On hardware a store to
 * the UAR page tells the device to look at a queue; here the page is one
 * no access reaches (PROT_NONE), so the store faults, and the storing
 * thread itself then does what the device would: it runs what the
 * doorbell records say, synchronously, before it goes on past the store.
 * No thread watches and nothing sleeps: a doorbell costs one fault
 * (measured on this project's 2-core VM: about 12 us for a fault and its
 * handler; a few microseconds on bare metal).
 *
 * To go on past the store, the handler reads the instruction's length:
 * the stores a doorbell is written with (mov, movnti, the SSE, AVX and
 * AVX-512 moves to memory), with their prefixes and addressing forms.
 * A BlueFlame copy is many such stores into the register: its first,
 * at the start of a buffer, rings; the rest are stepped over with no
 * ring (glibc's copy of 64 bytes with AVX-512 is two stores of 64 to the
 * same place: the second rings again and finds nothing new). A store it
 * cannot read is stepped over by the CPU instead: the page opened, the
 * trap flag set, and on the trap after it the page closed again, which
 * costs a second fault.
 *
 * The handler is installed when the first page is made, and again when a
 * program has put its own in its place (UCX installs one for its error
 * reports): each time, the one it replaces is kept and gets every fault
 * that is not a doorbell's. x86-64 only; a CPU's user shadow stack (CET),
 * which Debian 12's kernel does not enable, would refuse the return
 * doorbell_call makes. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "device/mlx5.h"
#include "control/mock.h"

#if defined(__x86_64__)

#define PAGE 4096u
#define TF 0x100u /* the trap flag in RFLAGS */

static char *page;
static void (*ring_fn)(void);
static struct sigaction prev_segv, prev_trap;
static __thread bool stepping;

static bool on_page(const void *addr)
{
	return page && (const char *)addr >= page && (const char *)addr < page + PAGE;
}

/* The length of a ModRM operand's bytes after the opcode: ModRM, SIB and
 * displacement; 0 for a register operand (not a store). */
static unsigned modrm_len(const uint8_t *p)
{
	uint8_t modrm = p[0], mod = modrm >> 6, rm = modrm & 7;
	unsigned n = 1;

	if (mod == 3)
		return 0;
	if (rm == 4) {
		uint8_t base = p[1] & 7;

		n++;
		if (mod == 0 && base == 5)
			n += 4;
	} else if (mod == 0 && rm == 5) {
		n += 4; /* RIP-relative */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return n;
}

/* Whether a two-byte (0F) opcode is a store to its ModRM operand. */
static bool store_0f(uint8_t op)
{
	switch (op) {
	case 0x11: /* movups/movupd/movss/movsd */
	case 0x13: /* movlps/movlpd */
	case 0x17: /* movhps/movhpd */
	case 0x29: /* movaps/movapd */
	case 0x2b: /* movntps/movntpd */
	case 0x7e: /* movd/movq from an xmm (66, F3 forms) */
	case 0x7f: /* movdqa/movdqu/movq */
	case 0xc3: /* movnti */
	case 0xd6: /* movq */
	case 0xe7: /* movntdq/movntq */
		return true;
	default:
		return false;
	}
}

/* The length of the store at p, or 0 when it is not one read here. */
static unsigned store_len(const uint8_t *p)
{
	const uint8_t *start = p;
	bool opsize = false, rex_w = false;
	unsigned m;

	for (;; p++) {
		if (*p == 0x66)
			opsize = true;
		else if (*p == 0xf2 || *p == 0xf3 || *p == 0x2e || *p == 0x3e || *p == 0x26 ||
			 *p == 0x64 || *p == 0x65 || *p == 0x36)
			;
		else
			break;
	}
	if ((*p & 0xf0) == 0x40) {
		rex_w = *p & 8;
		p++;
	}
	switch (*p) {
	case 0x88: /* mov r/m8, r8 */
	case 0x89: /* mov r/m, r */
		return (m = modrm_len(p + 1)) ? (unsigned)(p - start) + 1 + m : 0;
	case 0xc6: /* mov r/m8, imm8 */
		return (m = modrm_len(p + 1)) ? (unsigned)(p - start) + 1 + m + 1 : 0;
	case 0xc7: /* mov r/m, imm16/32 */
		return (m = modrm_len(p + 1)) ? (unsigned)(p - start) + 1 + m + (opsize && !rex_w ? 2 : 4)
					      : 0;
	case 0x0f:
		if (!store_0f(p[1]))
			return 0;
		return (m = modrm_len(p + 2)) ? (unsigned)(p - start) + 2 + m : 0;
	case 0xc5: /* VEX, two bytes: map 0F */
		if (!store_0f(p[2]))
			return 0;
		return (m = modrm_len(p + 3)) ? (unsigned)(p - start) + 3 + m : 0;
	case 0xc4: /* VEX, three bytes: map 0F only */
		if ((p[1] & 0x1f) != 1 || !store_0f(p[3]))
			return 0;
		return (m = modrm_len(p + 4)) ? (unsigned)(p - start) + 4 + m : 0;
	case 0x62: /* EVEX (AVX-512): map 0F only */
		if ((p[1] & 3) != 1 || !store_0f(p[4]))
			return 0;
		return (m = modrm_len(p + 5)) ? (unsigned)(p - start) + 5 + m : 0;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------- leaving the handler
 *
 * The device does not run in the signal handler: it takes locks, and may
 * allocate, write a message, wait, none of which a handler may do. The
 * handler only moves the thread: it makes it continue in doorbell_call,
 * as if the store had been a call, with the address after the store to
 * return to. The thread's red zone (the 128 bytes under its stack pointer
 * that code may use without moving it) is left alone: the return address
 * goes under it, and doorbell_call returns with `ret $128`, which leaves
 * the stack pointer where the store had it. Between, every register the
 * program may hold a value in is kept: the flags, the caller-saved
 * general registers, and the whole extended state (XSAVE, of the size
 * CPUID gives, or FXSAVE on a CPU without it), since the device's code,
 * glibc's among it, uses vector registers. */

__attribute__((used)) uint64_t xsave_size = 576; /* the area doorbell_call keeps, 64-aligned */
__attribute__((used)) int use_xsave;

void mlx5_doorbell_ring(void); /* what doorbell_call calls */

void mlx5_doorbell_ring(void)
{
	ring_fn();
}

__asm__(".text\n"
	".p2align 4\n"
	".type doorbell_call, @function\n"
	"doorbell_call:\n"
	"	pushfq\n"
	"	push %rax\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n"
	"	push %r8\n push %r9\n push %r10\n push %r11\n push %rbx\n push %rbp\n"
	"	mov %rsp, %rbx\n"
	"	and $-64, %rsp\n"
	"	sub xsave_size(%rip), %rsp\n"
	/* the XSAVE header (bytes 512 to 575) zeroed, as XRSTOR wants it */
	"	xor %eax, %eax\n"
	"	mov $8, %ecx\n"
	"1:	movq %rax, 504(%rsp,%rcx,8)\n"
	"	loop 1b\n"
	"	mov $-1, %eax\n mov $-1, %edx\n"
	"	cmpl $0, use_xsave(%rip)\n"
	"	je 2f\n"
	"	xsave64 (%rsp)\n"
	"	jmp 3f\n"
	"2:	fxsave64 (%rsp)\n"
	"3:	cld\n"
	"	call mlx5_doorbell_ring\n"
	"	mov $-1, %eax\n mov $-1, %edx\n"
	"	cmpl $0, use_xsave(%rip)\n"
	"	je 4f\n"
	"	xrstor64 (%rsp)\n"
	"	jmp 5f\n"
	"4:	fxrstor64 (%rsp)\n"
	"5:	mov %rbx, %rsp\n"
	"	pop %rbp\n pop %rbx\n pop %r11\n pop %r10\n pop %r9\n pop %r8\n"
	"	pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n pop %rax\n"
	"	popfq\n"
	"	ret $128\n"
	".size doorbell_call, .-doorbell_call\n");

void doorbell_call(void);

/* The thread goes on in doorbell_call, which returns to resume. */
static void divert(ucontext_t *uc, greg_t resume)
{
	greg_t rsp = uc->uc_mcontext.gregs[REG_RSP] - 128 - 8;

	*(greg_t *)rsp = resume;
	uc->uc_mcontext.gregs[REG_RSP] = rsp;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)doorbell_call;
}

/* The size of the extended state this CPU and kernel keep (CPUID 0xD,
 * for the features XCR0 enables), 64-aligned. */
static void xsave_setup(void)
{
	unsigned a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27))) /* OSXSAVE */
		return;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
	if (b < 576)
		return;
	xsave_size = (b + 63) & ~63u;
	use_xsave = 1;
}

/* What the program's disposition does with a signal that is not a
 * doorbell's, as if the mock's handler were not there. */
static void pass_on(struct sigaction *prev, int sig, siginfo_t *si, void *ctx)
{
	void (*handler)(int) = prev->sa_handler; /* SA_SIGINFO's shares it */
	/* The kernel's own (a fault, a trap: si_code > 0) it delivers even
	 * when ignored, reset to the default (force_sig_fault); one sent by
	 * kill or raise (si_code <= 0) it drops when ignored. */
	bool forced = si->si_code > 0;

	if (handler == SIG_IGN && !forced)
		return;
	if (handler == SIG_IGN || handler == SIG_DFL) {
		/* Die of it as the program would have: a fault repeats when
		 * the handler returns, now fatal; a trap or a sent signal
		 * does not, so it is sent again. */
		signal(sig, SIG_DFL);
		if (!(sig == SIGSEGV && forced))
			raise(sig);
		return;
	}
	if (prev->sa_flags & SA_SIGINFO)
		prev->sa_sigaction(sig, si, ctx);
	else
		handler(sig);
}

/* Whether a store is past the start of a BlueFlame buffer: the rest of
 * a WQE's copy, which the device need not read (it reads the SQ), so the
 * store is skipped without a ring. The copy's first store rings. */
static bool bf_rest(const void *addr)
{
	uintptr_t off = (uintptr_t)((const char *)addr - page);

	return off >= MLX5_BF_OFFSET && off % MLX5_BF_BUF_SIZE;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];
	unsigned len;
	int saved = errno;

	if (si->si_code <= 0 || !on_page(si->si_addr)) { /* sent, or not the register's */
		pass_on(&prev_segv, sig, si, ctx);
		return;
	}
	len = store_len((const uint8_t *)(uintptr_t)*rip);
	if (len && bf_rest(si->si_addr)) {
		*rip += (greg_t)len; /* the rest of a BlueFlame copy */
	} else if (len) {
		divert(uc, *rip + (greg_t)len);
	} else {
		/* Let the CPU do it: the page open for one instruction. */
		mprotect(page, PAGE, PROT_READ | PROT_WRITE);
		uc->uc_mcontext.gregs[REG_EFL] |= TF;
		stepping = true;
	}
	errno = saved;
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	if (!stepping) {
		pass_on(&prev_trap, sig, si, ctx);
		return;
	}
	stepping = false;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TF;
	mprotect(page, PAGE, PROT_NONE);
	divert(uc, uc->uc_mcontext.gregs[REG_RIP]);
	errno = saved;
}

/* Put the handlers in place unless they are there, keeping what they
 * replace. */
static void install(void)
{
	struct sigaction sa = { .sa_flags = SA_SIGINFO | SA_NODEFER }, cur;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, NULL, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) &&
						      cur.sa_sigaction == on_segv)) {
		sa.sa_sigaction = on_segv;
		sigaction(SIGSEGV, &sa, &prev_segv);
	}
	if (sigaction(SIGTRAP, NULL, &cur) == 0 && !((cur.sa_flags & SA_SIGINFO) &&
						      cur.sa_sigaction == on_trap)) {
		sa.sa_sigaction = on_trap;
		sigaction(SIGTRAP, &sa, &prev_trap);
	}
}

void *mlx5_doorbell_page(void (*ring)(void))
{
	if (!page) {
		xsave_setup();
		void *p = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		page = p;
	}
	ring_fn = ring;
	install();
	return page;
}

#else

void *mlx5_doorbell_page(void (*ring)(void))
{
	static int said;

	(void)ring;
	mock_not_implemented("the mlx5 doorbell page (x86-64 only)", &said);
	return NULL;
}

#endif
