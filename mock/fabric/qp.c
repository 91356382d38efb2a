/* The fabric's registry of QPs: number, device, state, remote QP number and
 * the UDP source port RoCE v2 packets would carry. */
#include <stdlib.h>

#include "internal.h"
#include "control/mock.h"

#define QPN_FIRST 0x11 /* QP 0 and 1 are special; rxe numbers from 17 too */
#define QPN_MASK 0xffffff

struct fab_qp {
	struct fab_qp *next;
	uint32_t qpn;
	unsigned dev_serial;
	enum ibv_qp_type type;
	enum ibv_qp_state state;
	uint32_t dest_qpn;
	bool sport_set;
	uint16_t sport;
	void *owner;
};

#define QP_BUCKETS 256
static struct fab_qp *qps[QP_BUCKETS];
static uint32_t next_qpn = QPN_FIRST;

static struct fab_qp **qp_slot(uint32_t qpn)
{
	struct fab_qp **pos;

	for (pos = &qps[qpn % QP_BUCKETS]; *pos && (*pos)->qpn != qpn; pos = &(*pos)->next)
		;
	return pos;
}

int fab_qp_create(unsigned dev_serial, enum ibv_qp_type type, void *owner, uint32_t *qpn)
{
	struct fab_qp *qp = calloc(1, sizeof *qp);

	if (!qp)
		return -ENOMEM;
	fab_lock();
	do {
		qp->qpn = next_qpn;
		next_qpn = (next_qpn + 1) & QPN_MASK;
		if (next_qpn < QPN_FIRST)
			next_qpn = QPN_FIRST;
	} while (*qp_slot(qp->qpn));
	qp->dev_serial = dev_serial;
	qp->type = type;
	qp->state = IBV_QPS_RESET;
	qp->owner = owner;
	qp->next = qps[qp->qpn % QP_BUCKETS];
	qps[qp->qpn % QP_BUCKETS] = qp;
	*qpn = qp->qpn;
	fab_unlock();
	return 0;
}

void fab_qp_destroy(uint32_t qpn)
{
	struct fab_qp **pos, *qp;

	fab_lock();
	pos = qp_slot(qpn);
	qp = *pos;
	if (qp)
		*pos = qp->next;
	fab_unlock();
	free(qp);
}

void *fab_qp_owner(uint32_t qpn)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	fab_unlock();
	return qp ? qp->owner : NULL;
}

void fab_qp_modified(uint32_t qpn, enum ibv_qp_state state, uint32_t dest_qpn)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	if (qp) {
		qp->state = state;
		if (dest_qpn)
			qp->dest_qpn = dest_qpn;
		if (state == IBV_QPS_RESET) {
			qp->sport_set = false;
			qp->dest_qpn = 0;
		}
	}
	fab_unlock();
}

int fab_qp_set_udp_sport(uint32_t qpn, uint16_t port)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	if (qp) {
		qp->sport = port;
		qp->sport_set = true;
	}
	fab_unlock();
	return qp ? 0 : -ENOENT;
}

/* The kernel's rdma_calc_flow_label and rdma_flow_label_to_udp_sport. */
static uint16_t derived_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl, low;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = (uint32_t)(v & 0xfffff);
	low = (fl & 0x3fff) ^ ((fl & 0xfc000) >> 14);
	return (uint16_t)(low | 0xc000);
}

int fab_qp_udp_sport(uint32_t qpn, uint16_t *port)
{
	struct fab_qp *qp;

	fab_lock();
	qp = *qp_slot(qpn);
	if (qp)
		*port = qp->sport_set ? qp->sport : derived_sport(qp->qpn, qp->dest_qpn);
	fab_unlock();
	return qp ? 0 : -ENOENT;
}
