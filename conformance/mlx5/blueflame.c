/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the doorbell and BlueFlame register of a QP that
 * mlx5dv_init_obj hands over (bf.reg, bf.size), written with the stores
 * programs write them with: libmlx5's post_send (mmio_write64_be at
 * bf->reg + bf->offset; mlx5_bf_copy's 8-byte moves), UCX's
 * uct_ib_mlx5_bf_copy (16-byte SSE moves, block by block, the source
 * wrapping at the end of the send queue), a compiler's vector moves (AVX,
 * AVX-512), non-temporal stores, and a structure copied by a string
 * instruction. The register is write-combining memory on a ConnectX: any
 * store reaches it, and the program goes on with its registers as they
 * were. The stores are written in assembly, so that each is the form
 * named whatever the compiler's options; x86-64 only, mlx5-only.
 * Neither libibverbs nor libmlx5 installs a signal handler: a program's
 * own handlers, and the default actions it leaves, work after
 * mlx5dv_init_obj as before. */
#include <endian.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "raw.h"

#if defined(__x86_64__)
#include <emmintrin.h>

/* Values that live in a general and a vector register across a store:
 * the store must leave them as they were. */
struct canary {
	uint64_t g;
	__m128i x;
};

#define CANARIES [cg] "+r"(c->g), [cx] "+x"(c->x)

/* ---------------------------------------------------------------- a 64-byte block each */

/* libmlx5's mlx5_bf_copy on x86-64: mmio_memcpy_x64, eight
 * mmio_write64_be, each a move of 8 bytes at its displacement. */
static void block_mov64(volatile void *dst, const void *src, struct canary *c)
{
	__asm__ volatile("mov 0(%[s]), %%rax\n\tmov %%rax, 0(%[d])\n\t"
			 "mov 8(%[s]), %%rax\n\tmov %%rax, 8(%[d])\n\t"
			 "mov 16(%[s]), %%rax\n\tmov %%rax, 16(%[d])\n\t"
			 "mov 24(%[s]), %%rax\n\tmov %%rax, 24(%[d])\n\t"
			 "mov 32(%[s]), %%rax\n\tmov %%rax, 32(%[d])\n\t"
			 "mov 40(%[s]), %%rax\n\tmov %%rax, 40(%[d])\n\t"
			 "mov 48(%[s]), %%rax\n\tmov %%rax, 48(%[d])\n\t"
			 "mov 56(%[s]), %%rax\n\tmov %%rax, 56(%[d])"
			 : CANARIES
			 : [d] "r"(dst), [s] "r"(src)
			 : "rax", "memory");
}

/* Four 16-byte moves through xmm0..3, with the store instruction given. */
#define BLOCK_SSE(name, store)                                                          \
	static void name(volatile void *dst, const void *src, struct canary *c)        \
	{                                                                               \
		__asm__ volatile("movdqu 0(%[s]), %%xmm0\n\tmovdqu 16(%[s]), %%xmm1\n\t" \
				 "movdqu 32(%[s]), %%xmm2\n\tmovdqu 48(%[s]), %%xmm3\n\t" \
				 store " %%xmm0, 0(%[d])\n\t" store " %%xmm1, 16(%[d])\n\t" \
				 store " %%xmm2, 32(%[d])\n\t" store " %%xmm3, 48(%[d])"   \
				 : CANARIES                                             \
				 : [d] "r"(dst), [s] "r"(src)                           \
				 : "xmm0", "xmm1", "xmm2", "xmm3", "memory");           \
	}
/* UCX's copy of __m128i words (SSE4.2 builds), as gcc writes an aligned
 * __m128i store; its packed 64-byte structure (newer UCX), unaligned;
 * an unaligned integer store; and the non-temporal store, fenced. */
BLOCK_SSE(block_movaps, "movaps")
BLOCK_SSE(block_movups, "movups")
BLOCK_SSE(block_movdqu, "movdqu")
BLOCK_SSE(block_movntdq, "movntdq")

/* Non-temporal 8-byte stores (movnti), the way a program writes
 * write-combining memory past the cache. */
static void block_movnti(volatile void *dst, const void *src, struct canary *c)
{
	__asm__ volatile("mov 0(%[s]), %%rax\n\tmovnti %%rax, 0(%[d])\n\t"
			 "mov 8(%[s]), %%rax\n\tmovnti %%rax, 8(%[d])\n\t"
			 "mov 16(%[s]), %%rax\n\tmovnti %%rax, 16(%[d])\n\t"
			 "mov 24(%[s]), %%rax\n\tmovnti %%rax, 24(%[d])\n\t"
			 "mov 32(%[s]), %%rax\n\tmovnti %%rax, 32(%[d])\n\t"
			 "mov 40(%[s]), %%rax\n\tmovnti %%rax, 40(%[d])\n\t"
			 "mov 48(%[s]), %%rax\n\tmovnti %%rax, 48(%[d])\n\t"
			 "mov 56(%[s]), %%rax\n\tmovnti %%rax, 56(%[d])\n\t"
			 "sfence"
			 : CANARIES
			 : [d] "r"(dst), [s] "r"(src)
			 : "rax", "memory");
}

/* glibc's memcpy of 64 bytes with AVX2 (__memmove_avx_unaligned): two
 * 32-byte moves (two-byte VEX). */
static void block_avx(volatile void *dst, const void *src, struct canary *c)
{
	__asm__ volatile("vmovdqu 0(%[s]), %%ymm0\n\tvmovdqu 32(%[s]), %%ymm1\n\t"
			 "vmovdqu %%ymm0, 0(%[d])\n\tvmovdqu %%ymm1, 32(%[d])\n\t"
			 "vzeroupper"
			 : CANARIES
			 : [d] "r"(dst), [s] "r"(src)
			 : "xmm0", "xmm1", "memory");
}

/* The same with the destination in r8, as a compiler may allocate it:
 * the base needs VEX's three-byte form. */
static void block_avx_r8(volatile void *dst, const void *src, struct canary *c)
{
	/* Moved into r8 in the asm itself: a local register variable is not
	 * kept there across the calls an instrumented build (TSan) inserts. */
	__asm__ volatile("mov %[d], %%r8\n\t"
			 "vmovdqu 0(%[s]), %%ymm0\n\tvmovdqu 32(%[s]), %%ymm1\n\t"
			 "vmovdqu %%ymm0, 0(%%r8)\n\tvmovdqu %%ymm1, 32(%%r8)\n\t"
			 "vzeroupper"
			 : CANARIES
			 : [d] "r"(dst), [s] "r"(src)
			 : "r8", "xmm0", "xmm1", "memory");
}

/* glibc's memcpy of 64 bytes with AVX-512 (__memmove_avx512_unaligned):
 * one 64-byte move (EVEX). */
static void block_avx512(volatile void *dst, const void *src, struct canary *c)
{
	__asm__ volatile("vmovdqu64 (%[s]), %%zmm0\n\tvmovdqu64 %%zmm0, (%[d])\n\t"
			 "vzeroupper"
			 : CANARIES
			 : [d] "r"(dst), [s] "r"(src)
			 : "xmm0", "memory");
}

/* A 64-byte structure assigned, as gcc -Os copies one: rep movsq. */
static void block_rep_movsq(volatile void *dst, const void *src, struct canary *c)
{
	void *d = (void *)(uintptr_t)dst;
	const void *s = src;
	unsigned long n = 8;

	__asm__ volatile("rep movsq" : CANARIES, "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

/* ---------------------------------------------------------------- an 8-byte doorbell each */

/* libmlx5's post_send: mmio_write64_be(bf->reg + bf->offset, ...), the
 * register and the buffer's offset in two registers. */
static void db_base_index(volatile void *reg, uintptr_t offset, uint64_t v, struct canary *c)
{
	__asm__ volatile("mov %[v], (%[r],%[o],1)"
			 : CANARIES
			 : [r] "r"(reg), [o] "r"(offset), [v] "r"(v)
			 : "memory");
}

/* A program that keeps its UAR page and adds the register's place in it
 * (0x800 or 0xa00) as a constant: a 32-bit displacement. */
static void db_page_disp32(volatile void *reg, uintptr_t offset, uint64_t v, struct canary *c)
{
	uintptr_t in_page = (uintptr_t)reg % 4096;
	char *base = (char *)((uintptr_t)reg - in_page + offset);

	if (in_page == 0x800)
		__asm__ volatile("mov %[v], 0x800(%[b])" : CANARIES : [b] "r"(base), [v] "r"(v) : "memory");
	else if (in_page == 0xa00)
		__asm__ volatile("mov %[v], 0xa00(%[b])" : CANARIES : [b] "r"(base), [v] "r"(v) : "memory");
	else
		fail_msg("bf.reg at 0x%lx in its page", (unsigned long)in_page);
}

/* The same with the offset in an index register too. */
static void db_page_index_disp32(volatile void *reg, uintptr_t offset, uint64_t v, struct canary *c)
{
	uintptr_t in_page = (uintptr_t)reg % 4096;
	char *page = (char *)((uintptr_t)reg - in_page);

	if (in_page == 0x800)
		__asm__ volatile("mov %[v], 0x800(%[p],%[o],1)"
				 : CANARIES
				 : [p] "r"(page), [o] "r"(offset), [v] "r"(v)
				 : "memory");
	else if (in_page == 0xa00)
		__asm__ volatile("mov %[v], 0xa00(%[p],%[o],1)"
				 : CANARIES
				 : [p] "r"(page), [o] "r"(offset), [v] "r"(v)
				 : "memory");
	else
		fail_msg("bf.reg at 0x%lx in its page", (unsigned long)in_page);
}

enum cpu_need { CPU_ANY, CPU_AVX, CPU_AVX512 };

struct store_form {
	const char *name;
	void (*block)(volatile void *dst, const void *src, struct canary *c);
	void (*doorbell)(volatile void *reg, uintptr_t offset, uint64_t v, struct canary *c);
	enum cpu_need cpu;
};

static const struct store_form forms[] = {
	{ "libmlx5 mlx5_bf_copy (8-byte moves)", block_mov64, NULL, CPU_ANY },
	{ "UCX uct_ib_mlx5_bf_copy (movaps)", block_movaps, NULL, CPU_ANY },
	{ "UCX packed block copy (movups)", block_movups, NULL, CPU_ANY },
	{ "unaligned 16-byte copy (movdqu)", block_movdqu, NULL, CPU_ANY },
	{ "non-temporal 16-byte copy (movntdq, sfence)", block_movntdq, NULL, CPU_ANY },
	{ "non-temporal 8-byte copy (movnti, sfence)", block_movnti, NULL, CPU_ANY },
	{ "glibc memcpy, AVX2 (vmovdqu ymm)", block_avx, NULL, CPU_AVX },
	{ "vmovdqu ymm to (%r8) (three-byte VEX)", block_avx_r8, NULL, CPU_AVX },
	{ "glibc memcpy, AVX-512 (vmovdqu64 zmm)", block_avx512, NULL, CPU_AVX512 },
	{ "structure copy (rep movsq)", block_rep_movsq, NULL, CPU_ANY },
	{ "libmlx5 doorbell (bf->reg + bf->offset)", NULL, db_base_index, CPU_ANY },
	{ "doorbell from the UAR page (disp32)", NULL, db_page_disp32, CPU_ANY },
	{ "doorbell from the UAR page (index, disp32)", NULL, db_page_index_disp32, CPU_ANY },
};

static bool cpu_has(enum cpu_need need)
{
	__builtin_cpu_init();
	switch (need) {
	case CPU_AVX:
		return __builtin_cpu_supports("avx");
	case CPU_AVX512:
		return __builtin_cpu_supports("avx512f");
	default:
		return true;
	}
}

/* An RDMA WRITE of len bytes of inline data to buf[remote..], written in
 * the send queue from the producer index (wrapping), the record moved
 * past it; its first block's index. */
static uint16_t put_inline_write(struct raw *r, const void *data, uint32_t len, int remote)
{
	char wqe[256] = { 0 };
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_raddr_seg *ra = (void *)(ctrl + 1);
	struct mlx5_wqe_inl_data_seg *inl = (void *)(ra + 1);
	uint32_t ds = (uint32_t)(sizeof *ctrl + sizeof *ra + (sizeof *inl + len + 15) / 16 * 16) / 16;
	uint32_t nbb = (ds * 16 + 63) / 64;
	uint16_t index = (uint16_t)r->sq_pi;

	assert_true(ds * 16 <= sizeof wqe);
	mlx5dv_set_ctrl_seg(ctrl, index, MLX5_OPCODE_RDMA_WRITE, 0, r->q.qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, (uint8_t)ds, 0, 0);
	ra->raddr = htobe64((uintptr_t)&r->buf[remote]);
	ra->rkey = htobe32(r->mr->rkey);
	inl->byte_count = htobe32(len | MLX5_INLINE_SEG);
	memcpy(inl + 1, data, len);
	for (uint32_t i = 0; i < nbb; i++)
		memcpy((char *)r->qp.sq.buf + (size_t)((r->sq_pi + i) & (r->qp.sq.wqe_cnt - 1)) * 64,
		       wqe + i * 64, 64);
	r->sq_pi += nbb;
	__atomic_store_n(&r->qp.dbrec[MLX5_SND_DBR], htobe32(r->sq_pi & 0xffff), __ATOMIC_RELEASE);
	return index;
}

/* The WQE at index rung for with form: its blocks copied from the send
 * queue into the BlueFlame buffer of this turn, the source wrapping at
 * the queue's end (a copy form), or its first 8 bytes written there (a
 * doorbell form); the next turn's buffer is the other one. The canaries
 * are checked after. */
static void ring_with(struct raw *r, const struct store_form *form, uint16_t index)
{
	uint32_t nbb = (uint32_t)(uint16_t)(r->sq_pi - index);
	volatile char *reg = (volatile char *)((uintptr_t)r->qp.bf.reg ^ r->bf_offset);
	struct canary c = { .g = 0x5eedc0ffee15900dull, .x = _mm_set_epi64x(0x0123456789abcdefll, -2) };
	struct canary was = c;

	for (uint32_t i = 0; i < nbb; i++) {
		const char *src = (const char *)r->qp.sq.buf +
				  (size_t)((index + i) & (r->qp.sq.wqe_cnt - 1)) * 64;

		if (form->block)
			form->block(reg + i * 64, src, &c);
		else if (i == 0)
			form->doorbell(r->qp.bf.reg, r->bf_offset, *(const uint64_t *)src, &c);
	}
	r->bf_offset ^= r->qp.bf.size;
	if (c.g != was.g || memcmp(&c.x, &was.x, sizeof c.x))
		fail_msg("%s: a register changed across the store", form->name);
}

/* Every form rings: each WQE, of one block and of three (an RDMA WRITE
 * of 8 and of 100 inline bytes), runs, its CQE naming its index, its
 * bytes where it wrote them; the program goes on after each store with
 * its registers as they were. */
void mlx5dv_init_obj__bf_store_forms(void **state)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 128 };
	unsigned char data[100];
	struct raw r;
	int ran = 0;

	raw_open_with(&r, &cap, false);
	raw_require_bf(&r);
	for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
		const struct store_form *form = &forms[f];
		uint16_t index;

		if (!cpu_has(form->cpu)) {
			print_message("%s: not on this CPU\n", form->name);
			continue;
		}
		for (size_t i = 0; i < sizeof data; i++)
			data[i] = (unsigned char)(f * 16 + i);
		memset(&r.buf[16], 0, 8 * 48);
		index = put_inline_write(&r, data, 8, 16);
		ring_with(&r, form, index);
		raw_req(&r, MLX5_OPCODE_RDMA_WRITE, index);
		if (memcmp(&r.buf[16], data, 8))
			fail_msg("%s: the one-block WRITE did not land", form->name);
		index = put_inline_write(&r, data, sizeof data, 32);
		assert_int_equal((uint16_t)(r.sq_pi - index), 3);
		ring_with(&r, form, index);
		raw_req(&r, MLX5_OPCODE_RDMA_WRITE, index);
		if (memcmp(&r.buf[32], data, sizeof data))
			fail_msg("%s: the three-block WRITE did not land", form->name);
		ran++;
	}
	assert_true(ran >= 10);
	raw_close(&r);
}

/* ---------------------------------------------------------------- the program's signals */

static volatile sig_atomic_t segv_seen, trap_seen;
static void *volatile segv_addr;
static char *own_page; /* a page of the program's own, no access */

/* A program's fault handler (UCX's error reports install one): it
 * records the fault and opens the page, and the store goes on. */
static void program_on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	segv_seen++;
	segv_addr = si->si_addr;
	if (si->si_code == SEGV_ACCERR && own_page)
		mprotect(own_page, 4096, PROT_READ | PROT_WRITE);
}

static void program_on_trap(int sig)
{
	(void)sig;
	trap_seen++;
}

static void install_program_handlers(void)
{
	struct sigaction segv = { .sa_sigaction = program_on_segv, .sa_flags = SA_SIGINFO };
	struct sigaction trap = { .sa_handler = program_on_trap };

	sigemptyset(&segv.sa_mask);
	sigemptyset(&trap.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &segv, NULL), 0);
	assert_int_equal(sigaction(SIGTRAP, &trap, NULL), 0);
}

/* A store to the program's own page, its handler called once with the
 * page's address; a SIGTRAP it raises, its handler called once; then a
 * WRITE rung for through the register still runs. */
static void own_signals_then_ring(struct raw *r, int step)
{
	uint16_t index;

	segv_seen = trap_seen = 0;
	segv_addr = NULL;
	assert_int_equal(mprotect(own_page, 4096, PROT_NONE), 0);
	*(volatile uint64_t *)(own_page + 8) = 0x600d;
	assert_int_equal(segv_seen, 1);
	if (segv_addr != own_page + 8)
		fail_msg("step %d: the program's handler got %p, not its page's %p", step, segv_addr,
			 (void *)(own_page + 8));
	assert_true(*(volatile uint64_t *)(own_page + 8) == 0x600d);
	assert_int_equal(raise(SIGTRAP), 0);
	assert_int_equal(trap_seen, 1);
	index = put_inline_write(r, &step, sizeof step, 16);
	ring_with(r, &forms[0], index);
	raw_req(r, MLX5_OPCODE_RDMA_WRITE, index);
	assert_memory_equal(&r->buf[16], &step, sizeof step);
	assert_int_equal(segv_seen, 1);
	assert_int_equal(trap_seen, 1);
}

/* A program's SIGSEGV (with SA_SIGINFO) and SIGTRAP handlers, put in
 * place before the device is opened (as UCX does at its start), get the
 * program's own fault and trap after mlx5dv_init_obj; put in place after
 * it, they get them after the next mlx5dv_init_obj (a QP handed over
 * again, as a program does for each QP it makes). Doorbells ring
 * throughout. */
void mlx5dv_init_obj__program_signal_handlers(void **state)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_qp again;
	struct raw r;

	own_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(own_page != MAP_FAILED);
	install_program_handlers();
	raw_open(&r);
	raw_require_bf(&r);
	own_signals_then_ring(&r, 1);
	install_program_handlers();
	obj = (struct mlx5dv_obj){ .qp = { .in = r.q.qp, .out = &again } };
	FX_VERBS_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
	assert_ptr_equal(again.bf.reg, r.qp.bf.reg);
	own_signals_then_ring(&r, 2);
	raw_close(&r);
	munmap(own_page, 4096);
	own_page = NULL;
}

/* The children of mlx5dv_init_obj__default_signal_actions, each after
 * its parent's doorbell, with the dispositions the runner gives a child
 * (SIGSEGV's default) or one of their own: each hands the parent's QP
 * over again first, as a program does for each QP it makes (on the mock
 * that puts its doorbell's handler back over the disposition), then
 * raises SIGTRAP, is sent SIGSEGV, or faults with SIGSEGV ignored. */
static struct ibv_qp *child_qp;

static void child_hand_over(void)
{
	struct mlx5dv_qp dv;
	struct mlx5dv_obj obj = { .qp = { .in = child_qp, .out = &dv } };

	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP)) {
		fprintf(stderr, "mlx5dv_init_obj failed\n");
		_exit(99);
	}
}

static void child_raises_sigtrap(void *arg)
{
	(void)arg;
	child_hand_over();
	raise(SIGTRAP);
	fprintf(stderr, "went on past raise(SIGTRAP)\n");
}

static void child_sent_sigsegv(void *arg)
{
	(void)arg;
	child_hand_over();
	kill(getpid(), SIGSEGV);
	fprintf(stderr, "went on past kill(SIGSEGV)\n");
}

static void child_faults_ignoring_sigsegv(void *arg)
{
	char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	if (page == MAP_FAILED)
		_exit(98);
	signal(SIGSEGV, SIG_IGN);
	child_hand_over();
	*(volatile char *)page = 1;
	fprintf(stderr, "went on past a fault\n");
}

static void expect_killed(void (*fn)(void *), int sig, const char *what)
{
	struct rc_crash end;

	rc_run_child(fn, NULL, &end);
	if (end.signal != sig)
		fail_msg("%s: the child ended with signal %d, exit code %d, not signal %d; stderr: %s",
			 what, end.signal, end.exit_code, sig, end.stderr_text);
}

/* signal(7): a signal's default action ends the process (SIGTRAP,
 * SIGSEGV: with a core), and a fault's SIGSEGV that the program ignores
 * ends it too (the kernel's force_sig_fault resets it to the default);
 * mlx5dv_init_obj changes none of that. */
void mlx5dv_init_obj__default_signal_actions(void **state)
{
	struct raw r;

	raw_open(&r);
	raw_rdma(&r, MLX5_OPCODE_RDMA_WRITE, 16, 0, 0, 0);
	child_qp = r.q.qp;
	expect_killed(child_raises_sigtrap, SIGTRAP, "raise(SIGTRAP)");
	expect_killed(child_sent_sigsegv, SIGSEGV, "kill(SIGSEGV)");
	expect_killed(child_faults_ignoring_sigsegv, SIGSEGV, "a fault with SIGSEGV ignored");
	raw_close(&r);
}

#else

void mlx5dv_init_obj__bf_store_forms(void **state)
{
	(void)state;
	RC_SKIP("x86-64 only: the stores are x86-64 instructions");
}

void mlx5dv_init_obj__program_signal_handlers(void **state)
{
	(void)state;
	RC_SKIP("x86-64 only: the suite's BlueFlame stores are x86-64 instructions");
}

void mlx5dv_init_obj__default_signal_actions(void **state)
{
	(void)state;
	RC_SKIP("x86-64 only: the suite's BlueFlame stores are x86-64 instructions");
}

#endif
