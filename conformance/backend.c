/* Which library the suite runs on. librdmamock exports rdmamock_version and
 * the system's rdma-core does not, so the answer needs no build-time flag:
 * the same objects linked either way report the truth. */
#include <dlfcn.h>

#include "suite.h"

bool rc_backend_is_mock(void)
{
	return dlsym(RTLD_DEFAULT, "rdmamock_version") != NULL;
}

const char *rc_backend_name(void)
{
	return rc_backend_is_mock() ? "mock" : "real";
}
