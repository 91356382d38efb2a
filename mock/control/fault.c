/* Fault points: a thin layer over libfiu so that every entry point asks the
 * same way, and so that fiu-run / fiu-ctrl reach unmodified programs. */
#include <fiu.h>
#include <stdint.h>

#include "mock.h"

__attribute__((constructor)) static void fault_init(void)
{
	/* Idempotent; fiu-run's preload may have called it already. */
	fiu_init(0);
}

bool mock_fault(const char *point, int *err)
{
	intptr_t info;

	if (!fiu_fail(point))
		return false;
	info = (intptr_t)fiu_failinfo();
	*err = (info > 0 && info < 4096) ? (int)info : EIO;
	return true;
}
