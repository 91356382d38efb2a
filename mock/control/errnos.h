/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The errno tables (mock/<library>/<library>.errnos, compiled by
 * mock/abi/errnos.sh): for each call that can fail, the errnos (or, for
 * rdma_getaddrinfo, the EAI_ codes) upstream can give, its usual failure
 * first. */
#ifndef RDMAMOCK_ERRNOS_H
#define RDMAMOCK_ERRNOS_H

struct errno_row {
	const char *call;
	int value;
	const char *name;
};

/* Every row, sorted by call; the last is all NULL. */
extern const struct errno_row errno_rows[];

/* How many errnos call may give (0: it has no table), and its first row. */
int errno_table(const char *call, const struct errno_row **first);

#endif
