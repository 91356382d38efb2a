/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* API covered: the calls the mock exports but does not implement (the
 * stubs mock/abi/abi.awk generates from the .calls tables). Each fails in
 * its call's convention and says so once on stderr. Mock-only. Looked up
 * with dlsym and called without arguments, which the stubs ignore. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"

static void *stub(const char *name, const char *version)
{
	void *fn;

	rc_require_mock("the stubs are the mock's");
	fn = version ? dlvsym(RTLD_DEFAULT, name, version) : dlsym(RTLD_DEFAULT, name);
	if (!fn)
		fail_msg("%s%s%s is not exported", name, version ? "@" : "", version ? version : "");
	return fn;
}

struct twice {
	void *fn;
	int kind; /* 'n' null, 'm' minus1, 'p' positive, 'g' negative, 'z' zero, 'v' void */
	long result[2];
	int err[2];
};

static void call_twice(void *arg)
{
	struct twice *t = arg;

	for (int i = 0; i < 2; i++) {
		errno = 12345;
		switch (t->kind) {
		case 'n':
			t->result[i] = ((void *(*)(void))t->fn)() != NULL;
			break;
		case 'm':
		case 'z':
			t->result[i] = ((long (*)(void))t->fn)();
			break;
		case 'p':
		case 'g':
			t->result[i] = ((int (*)(void))t->fn)();
			break;
		default:
			((void (*)(void))t->fn)();
			t->result[i] = 0;
			break;
		}
		t->err[i] = errno;
	}
}

/* Call NAME twice: both results and errnos as the convention says, and one
 * line "rdmamock: LABEL: not implemented" on stderr. */
static void check(const char *name, const char *version, int kind, long result, int err)
{
	struct twice t = { .fn = stub(name, version), .kind = kind };
	char text[1024], want[256];
	int lines = fx_stderr_of(call_twice, &t, text, sizeof text);

	snprintf(want, sizeof want, "rdmamock: %s%s%s: not implemented\n", name,
		 version ? "@" : "", version ? version : "");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(t.result[i], result);
		assert_int_equal(t.err[i], err);
	}
	assert_int_equal(lines, 1);
	assert_string_equal(text, want);
}

void not_implemented__null_and_errno(void **state)
{
	check("ibv_import_device", NULL, 'n', 0, EOPNOTSUPP);
}

void not_implemented__minus1_and_errno(void **state)
{
	check("ibv_cmd_export_dmabuf_fd", NULL, 'm', -1, EPROTONOSUPPORT);
}

/* errno is left as it was: 12345, set before the call. */
void not_implemented__positive_errno(void **state)
{
	check("mlx5dv_devx_free_msi_vector", NULL, 'p', EOPNOTSUPP, 12345);
}

void not_implemented__negative_errno(void **state)
{
	check("mlx5dv_dump_dr_domain", NULL, 'g', -EOPNOTSUPP, 12345);
}

void not_implemented__void(void **state)
{
	check("ibv_unimport_pd", NULL, 'v', 0, 12345);
}

/* The 2006 ABI: ibv_get_device_list@IBVERBS_1.0 fails, so no other
 * IBVERBS_1.0 object can exist. */
void not_implemented__ibverbs_1_0(void **state)
{
	check("ibv_get_device_list", "IBVERBS_1.0", 'n', 0, EOPNOTSUPP);
	check("ibv_get_device_guid", "IBVERBS_1.0", 'z', 0, 12345);
}
