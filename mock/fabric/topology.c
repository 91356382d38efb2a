/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Devices and their addresses: the default topology, RDMAMOCK_TOPOLOGY,
 * and the lookups the CM and verbs layers make. */
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "control/mock.h"

/* An mlx5 device at 127.0.0.1 and ::1, and a generic one (like rxe) at
 * 127.0.0.2: enough for a client and a server on either personality. */
#define DEFAULT_TOPOLOGY "mlx5_0=mlx5:127.0.0.1/8,::1;rxe0=generic:127.0.0.2/8"

static int default_gid_addr(const struct fab_device *dev);

static const char *personality_name(enum rdmamock_personality p)
{
	return p == RDMAMOCK_MLX5 ? "mlx5" : "generic";
}

/* Mellanox's OUI for mlx5; a locally administered EUI-64 for the rest. */
static __be64 make_guid(enum rdmamock_personality p, unsigned serial)
{
	uint64_t base = p == RDMAMOCK_MLX5 ? 0x0002c90300000000ull : 0x020000fffe000000ull;

	return htobe64(base | serial);
}

static bool valid_name(const char *name, size_t len)
{
	if (len == 0 || len >= FAB_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

/* "192.0.2.1/24", "::1": the address with port 0, and its prefix. */
static int parse_addr(const char *text, size_t len, struct sockaddr_storage *ss, int *prefix)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	struct sockaddr_in *in = (void *)ss;
	struct sockaddr_in6 *in6 = (void *)ss;
	int max;

	if (len == 0 || len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, buf, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	if (fab_addr_is_any((struct sockaddr *)ss))
		return -EINVAL;
	*prefix = max;
	if (slash) {
		long p = strtol(slash + 1, &end, 10);

		if (*end || end == slash + 1 || p < 0 || p > max)
			return -EINVAL;
		*prefix = (int)p;
	}
	return 0;
}

static struct fab_device *find_in(struct fab_device *list, const char *name)
{
	for (; list; list = list->next)
		if (!strcmp(list->name, name))
			return list;
	return NULL;
}

static bool addr_taken(struct fab_device *list, const struct sockaddr *addr)
{
	for (; list; list = list->next)
		for (int i = 0; i < list->naddrs; i++)
			if (fab_addr_equal((struct sockaddr *)&list->addrs[i], addr))
				return true;
	return false;
}

static const struct {
	const char *name;
	uint32_t bit;
} cap_names[] = {
	{ "udp_sport", FAB_CAP_UDP_SPORT },
	{ "ib", FAB_CAP_IB },
};

/* What a device of each personality can do unless told otherwise. */
static uint32_t default_caps(enum rdmamock_personality p)
{
	return p == RDMAMOCK_MLX5 ? FAB_CAP_UDP_SPORT : 0;
}

static struct fab_device *new_device(const char *name, size_t len, enum rdmamock_personality p)
{
	struct fab_device *dev = fab_alloc_owned(FAB_OWNER_FABRIC, sizeof *dev);

	if (!dev)
		return NULL;
	memcpy(dev->name, name, len);
	dev->personality = p;
	dev->serial = fab.next_serial++;
	dev->guid = make_guid(p, dev->serial);
	dev->caps = default_caps(p);
	return dev;
}

static int add_addr(struct fab_device *list, struct fab_device *dev, const char *text, size_t len)
{
	struct sockaddr_storage ss;
	int prefix, err = parse_addr(text, len, &ss, &prefix);

	if (err)
		return err;
	if (addr_taken(list, (struct sockaddr *)&ss))
		return -EEXIST;
	if (dev->naddrs == FAB_MAX_ADDRS)
		return -ENOSPC;
	dev->addrs[dev->naddrs] = ss;
	dev->prefix[dev->naddrs++] = prefix;
	return 0;
}

static void free_list(struct fab_device *list)
{
	while (list) {
		struct fab_device *next = list->next;

		fab_free(list);
		list = next;
	}
}

static int parse_personality(const char *text, size_t len, enum rdmamock_personality *p)
{
	if (len == 4 && !strncmp(text, "mlx5", 4))
		*p = RDMAMOCK_MLX5;
	else if (len == 7 && !strncmp(text, "generic", 7))
		*p = RDMAMOCK_GENERIC;
	else
		return -EINVAL;
	return 0;
}

static int cap_by_name(const char *text, size_t len, uint32_t *bit)
{
	for (size_t i = 0; i < sizeof cap_names / sizeof cap_names[0]; i++)
		if (strlen(cap_names[i].name) == len && !strncmp(text, cap_names[i].name, len)) {
			*bit = cap_names[i].bit;
			return 0;
		}
	return -EINVAL;
}

/* "mlx5", "mlx5-udp_sport", "generic+udp_sport": a personality, then
 * capabilities taken away (-) or given (+). */
static int parse_kind(const char *text, size_t len, enum rdmamock_personality *p, uint32_t *caps)
{
	size_t n = strcspn(text, "+-");
	int err;

	if (n > len)
		n = len;
	err = parse_personality(text, n, p);
	if (err)
		return err;
	*caps = default_caps(*p);
	while (n < len) {
		char sign = text[n++];
		size_t m = strcspn(text + n, "+-");
		uint32_t bit;

		if (n + m > len)
			m = len - n;
		err = cap_by_name(text + n, m, &bit);
		if (err)
			return err;
		*caps = sign == '+' ? *caps | bit : *caps & ~bit;
		n += m;
	}
	/* rxe, which the generic device is, runs over Ethernet only. */
	return (*caps & FAB_CAP_IB) && *p != RDMAMOCK_MLX5 ? -EINVAL : 0;
}

/* rxe makes its node GUID as its net device's link-local address is made,
 * from the MAC: a generic device given a link-local address takes its
 * interface id for its GUID, which no other device may have. */
static int take_link_local_guid(struct fab_device *list, struct fab_device *dev)
{
	int own = default_gid_addr(dev);
	__be64 guid;

	if (dev->personality == RDMAMOCK_MLX5 || own < 0)
		return 0;
	memcpy(&guid, &((struct sockaddr_in6 *)&dev->addrs[own])->sin6_addr.s6_addr[8], 8);
	for (; list; list = list->next)
		if (list != dev && list->guid == guid)
			return -EINVAL;
	dev->guid = guid;
	return 0;
}

/* One "NAME=PERSONALITY:ADDR,ADDR" entry appended to *list. */
static int parse_device(const char *s, const char *end, struct fab_device **list)
{
	const char *eq = memchr(s, '=', (size_t)(end - s)), *colon, *addrs;
	enum rdmamock_personality p;
	struct fab_device *dev, **tail;
	uint32_t caps;
	int err;

	if (!eq || !valid_name(s, (size_t)(eq - s)))
		return -EINVAL;
	colon = memchr(eq, ':', (size_t)(end - eq));
	err = parse_kind(eq + 1, (size_t)((colon ? colon : end) - eq - 1), &p, &caps);
	if (err)
		return err;
	dev = new_device(s, (size_t)(eq - s), p);
	if (!dev)
		return -ENOMEM;
	dev->caps = caps;
	if (find_in(*list, dev->name)) {
		fab_free(dev);
		return -EINVAL;
	}
	for (tail = list; *tail; tail = &(*tail)->next)
		;
	*tail = dev;
	for (addrs = colon ? colon + 1 : end; addrs < end;) {
		const char *comma = memchr(addrs, ',', (size_t)(end - addrs));
		const char *stop = comma ? comma : end;

		err = add_addr(*list, dev, addrs, (size_t)(stop - addrs));
		if (err)
			return err == -EEXIST ? -EINVAL : err;
		addrs = comma ? comma + 1 : end;
	}
	return take_link_local_guid(*list, dev);
}

static int parse_topology(const char *spec, struct fab_device **out)
{
	char *copy = strdup(spec), *src, *dst;
	const char *s, *end;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	/* White space is allowed anywhere and means nothing. */
	for (src = dst = copy; *src; src++)
		if (!isspace((unsigned char)*src))
			*dst++ = *src;
	*dst = '\0';
	*out = NULL;
	for (s = copy; *s && !err; s = *end ? end + 1 : end) {
		end = strchr(s, ';');
		if (!end)
			end = s + strlen(s);
		if (end > s)
			err = parse_device(s, end, out);
	}
	free(copy);
	if (err) {
		free_list(*out);
		*out = NULL;
	}
	return err;
}

int topology_load_locked(const char *spec)
{
	struct fab_device *list, *dev;
	int err;

	for (dev = fab.devices; dev; dev = dev->next)
		if (dev->users)
			return -EBUSY;
	if (fab.nlive)
		return -EBUSY;
	err = parse_topology(spec, &list);
	if (err)
		return err;
	free_list(fab.devices);
	fab.devices = list;
	fab.topology_gen++;
	return 0;
}

/* A process that joins a shared fabric made with another topology: the
 * fabric's stays, as a machine's devices do, and the process is told. */
void topology_check_locked(void)
{
	const char *spec = getenv("RDMAMOCK_TOPOLOGY");
	struct fab_device *list, *saved = fab.devices;
	unsigned serial = fab.next_serial;
	char want[1024], have[1024];
	int err;

	if (!spec)
		spec = fab_replay_topology() ? fab_replay_topology() : DEFAULT_TOPOLOGY;
	err = parse_topology(spec, &list);
	if (err)
		mock_abort("RDMAMOCK_TOPOLOGY", "cannot use \"%s\": %s", spec, strerror(-err));
	fab.devices = list;
	topology_format_locked(want, sizeof want);
	fab.devices = saved;
	fab.next_serial = serial;
	free_list(list);
	topology_format_locked(have, sizeof have);
	if (strcmp(want, have))
		mock_log("fabric %s has the topology \"%s\"; this process's RDMAMOCK_TOPOLOGY "
			 "(\"%s\") is not used", fab_name(), have, want);
}

void topology_init_locked(void)
{
	const char *spec = getenv("RDMAMOCK_TOPOLOGY");
	int err;

	if (!spec)
		spec = fab_replay_topology() ? fab_replay_topology() : DEFAULT_TOPOLOGY;
	err = topology_load_locked(spec);
	if (err)
		mock_abort("RDMAMOCK_TOPOLOGY", "cannot use \"%s\": %s (expected NAME=mlx5|generic:ADDR[/PREFIX][,ADDR...][;...])",
			   spec, strerror(-err));
}

int topology_format_locked(char *buf, size_t len)
{
	size_t used = 0;
	int n;

#define APPEND(...)                                                              \
	do {                                                                     \
		n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, \
			     __VA_ARGS__);                                       \
		used += (size_t)n;                                               \
	} while (0)
	if (len)
		buf[0] = '\0';
	for (struct fab_device *dev = fab.devices; dev; dev = dev->next) {
		APPEND("%s%s=%s", dev == fab.devices ? "" : ";", dev->name,
		       personality_name(dev->personality));
		for (size_t c = 0; c < sizeof cap_names / sizeof cap_names[0]; c++) {
			uint32_t bit = cap_names[c].bit;

			if ((dev->caps ^ default_caps(dev->personality)) & bit)
				APPEND("%c%s", dev->caps & bit ? '+' : '-', cap_names[c].name);
		}
		APPEND(":");
		for (int i = 0; i < dev->naddrs; i++) {
			char text[INET6_ADDRSTRLEN];
			const struct sockaddr *sa = (void *)&dev->addrs[i];
			const void *raw = sa->sa_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

			inet_ntop(sa->sa_family, raw, text, sizeof text);
			APPEND("%s%s/%d", i ? "," : "", text, dev->prefix[i]);
		}
	}
#undef APPEND
	return (int)used;
}

int topology_device_add_locked(const char *name, enum rdmamock_personality p)
{
	struct fab_device *dev, **tail;

	if (!name || !valid_name(name, strlen(name)) ||
	    (p != RDMAMOCK_MLX5 && p != RDMAMOCK_GENERIC))
		return -EINVAL;
	if (find_in(fab.devices, name))
		return -EEXIST;
	dev = new_device(name, strlen(name), p);
	if (!dev)
		return -ENOMEM;
	for (tail = &fab.devices; *tail; tail = &(*tail)->next)
		;
	*tail = dev;
	fab.topology_gen++;
	return 0;
}

int topology_device_add_addr_locked(const char *name, const char *addr)
{
	struct fab_device *dev = name ? find_in(fab.devices, name) : NULL;
	int err;

	if (!dev)
		return -ENODEV;
	if (!addr)
		return -EINVAL;
	err = add_addr(fab.devices, dev, addr, strlen(addr));
	if (!err)
		fab.topology_gen++;
	return err;
}

int topology_device_remove_locked(const char *name)
{
	struct fab_device **pos;

	for (pos = &fab.devices; *pos; pos = &(*pos)->next) {
		struct fab_device *dev = *pos;

		if (name && !strcmp(dev->name, name)) {
			/* As `rdma link delete` on a device in use: every id
			 * on it hears at once, and the device goes when the
			 * last of them is destroyed. */
			if (dev->users) {
				if (!dev->removing)
					fab_device_removal_locked(dev);
				dev->removing = true;
				return 0;
			}
			*pos = dev->next;
			fab_free(dev);
			fab.topology_gen++;
			return 0;
		}
	}
	return -ENODEV;
}

/* The device holding an address; for an AF_IB address, the InfiniBand
 * port whose GID it is (a RoCE port takes no IB address: the kernel's
 * cma_validate_port). */
struct fab_device *topology_device_with_addr(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_IB) {
		union ibv_gid want, gid;

		fab_addr_to_gid(addr, &want);
		for (struct fab_device *dev = fab.devices; dev; dev = dev->next) {
			if (dev->removing || !(dev->caps & FAB_CAP_IB))
				continue;
			topology_port_gid(dev, &gid);
			if (!memcmp(&gid, &want, sizeof gid))
				return dev;
		}
		return NULL;
	}
	for (struct fab_device *dev = fab.devices; dev; dev = dev->next)
		for (int i = 0; i < dev->naddrs && !dev->removing; i++)
			if (fab_addr_equal((struct sockaddr *)&dev->addrs[i], addr))
				return dev;
	return NULL;
}

/* The kernel's cma_any_addr: the zero address, and every loopback address
 * (127/8, ::1), which binds no device, listens on every device and takes
 * any destination. A loopback address one of the mock's devices holds is
 * that device's instead, on purpose (the default topology's 127.0.0.1). */
bool topology_addr_is_wildcard(const struct sockaddr *addr)
{
	return fab_addr_is_any(addr) ||
	       (fab_addr_is_loopback(addr) && !topology_device_with_addr(addr));
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, int bits)
{
	int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)bytes))
		return false;
	return !rest || ((a[bytes] ^ b[bytes]) & (0xff << (8 - rest))) == 0;
}

static const uint8_t *raw_addr(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	return (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
}

bool topology_on_subnet_of(const struct fab_device *dev, const struct sockaddr *addr)
{
	for (int i = 0; i < dev->naddrs; i++) {
		const struct sockaddr *own = (const void *)&dev->addrs[i];

		if (own->sa_family == addr->sa_family &&
		    prefix_match(raw_addr(own), raw_addr(addr), dev->prefix[i]))
			return true;
	}
	return false;
}

struct fab_device *topology_device_on_subnet(const struct sockaddr *addr)
{
	for (struct fab_device *dev = fab.devices; dev; dev = dev->next)
		if (topology_on_subnet_of(dev, addr))
			return dev;
	return NULL;
}

struct fab_device *topology_first_device(void)
{
	return fab.devices;
}

/* ---------------------------------------------------------------- verbs view */

static void snapshot(const struct fab_device *dev, struct fab_device_info *out)
{
	memset(out, 0, sizeof *out);
	out->serial = dev->serial;
	memcpy(out->name, dev->name, sizeof out->name);
	out->personality = dev->personality;
	out->guid = dev->guid;
	out->naddrs = dev->naddrs;
	out->port_down = dev->port_down;
	out->ib = dev->caps & FAB_CAP_IB;
	out->lid = topology_lid_locked(dev->serial);
	memcpy(out->addrs, dev->addrs, sizeof out->addrs);
}

static struct fab_device *by_serial(unsigned serial)
{
	struct fab_device *dev;

	for (dev = fab.devices; dev && dev->serial != serial; dev = dev->next)
		;
	return dev;
}

unsigned fab_topology_gen(void)
{
	fab_attach();
	return __atomic_load_n(&fab.topology_gen, __ATOMIC_ACQUIRE);
}

int fab_device_list(struct fab_device_info **out, int *count)
{
	struct fab_device *dev;
	int n = 0;

	fab_lock();
	for (dev = fab.devices; dev; dev = dev->next)
		n++;
	*out = calloc((size_t)n + 1, sizeof **out);
	if (!*out) {
		fab_unlock();
		return -ENOMEM;
	}
	n = 0;
	for (dev = fab.devices; dev; dev = dev->next)
		snapshot(dev, &(*out)[n++]);
	*count = n;
	fab_unlock();
	return 0;
}

int fab_device_by_serial(unsigned serial, struct fab_device_info *out)
{
	struct fab_device *dev;

	fab_lock();
	dev = by_serial(serial);
	if (dev)
		snapshot(dev, out);
	fab_unlock();
	return dev ? 0 : -ENODEV;
}

int fab_device_by_guid(__be64 guid, struct fab_device_info *out)
{
	struct fab_device *dev;

	fab_lock();
	for (dev = fab.devices; dev && dev->guid != guid; dev = dev->next)
		;
	if (dev)
		snapshot(dev, out);
	fab_unlock();
	return dev ? 0 : -ENODEV;
}

/* The GID table of a device's port, as the kernel's roce_gid_mgmt fills
 * it: the default GID (link-local, interface id from the GUID), then one
 * GID per address (IPv4 as ::ffff:a.b.c.d), each once for every RoCE
 * version the device speaks: rxe speaks v2 only; mlx5 speaks v1 and v2,
 * each address at an even index as v1 and at the odd one after it as v2. */
static int gid_versions(const struct fab_device *dev)
{
	return fab_profile_of(dev->personality)->gid_roce_v1 ? 2 : 1;
}

/* The address that is the device's default GID: its first link-local one,
 * as a net device's own link-local address is rxe's and mlx5's default
 * GID (both made from its MAC); -1 when it was given none. */
static int default_gid_addr(const struct fab_device *dev)
{
	for (int i = 0; i < dev->naddrs; i++)
		if (fab_addr_is_link_local((const struct sockaddr *)&dev->addrs[i]))
			return i;
	return -1;
}

/* The address of GID slot (1, 2, ...): the default GID's is not listed
 * again. */
static int slot_addr(const struct fab_device *dev, int slot)
{
	int own = default_gid_addr(dev);

	return own >= 0 && slot - 1 >= own ? slot : slot - 1;
}

void topology_port_gid(const struct fab_device *dev, union ibv_gid *gid)
{
	memset(gid, 0, sizeof *gid);
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	memcpy(&gid->raw[8], &dev->guid, 8);
}

static int gid_entry(const struct fab_device *dev, int index, union ibv_gid *gid,
		     enum ibv_gid_type *type)
{
	int per = gid_versions(dev), slot = index / per, own = default_gid_addr(dev);

	/* An InfiniBand port: its one GID, whatever its IPoIB addresses. */
	if (dev->caps & FAB_CAP_IB) {
		if (index != 0)
			return -ENODATA;
		topology_port_gid(dev, gid);
		*type = IBV_GID_TYPE_IB;
		return 0;
	}
	if (index < 0 || slot > dev->naddrs - (own >= 0))
		return -ENODATA;
	if (slot == 0 && own >= 0) {
		fab_addr_to_gid((struct sockaddr *)&dev->addrs[own], gid);
	} else if (slot == 0) {
		topology_port_gid(dev, gid);
	} else {
		fab_addr_to_gid((struct sockaddr *)&dev->addrs[slot_addr(dev, slot)], gid);
	}
	*type = per == 2 && index % 2 == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
	return 0;
}

int fab_device_gid(unsigned serial, int index, union ibv_gid *gid, enum ibv_gid_type *type)
{
	struct fab_device *dev;
	enum ibv_gid_type t;
	int err;

	fab_lock();
	dev = by_serial(serial);
	err = dev ? gid_entry(dev, index, gid, type ? type : &t) : -ENODEV;
	fab_unlock();
	return err;
}

bool topology_device_has_gid(unsigned serial, const union ibv_gid *gid)
{
	struct fab_device *dev = by_serial(serial);
	enum ibv_gid_type type;
	union ibv_gid g;

	for (int i = 0; dev && gid_entry(dev, i, &g, &type) == 0; i++)
		if (!memcmp(&g, gid, sizeof g))
			return true;
	return false;
}

/* cma_resolve_ib_dev: the port an AF_IB destination is reached from, in
 * device order and each device's GID table in order: the first entry that
 * is the destination's GID, or that shares its subnet prefix on a port
 * that is up (the kernel takes whichever comes first). RoCE ports take
 * part too (rdma_cap_af_ib holds for RoCE). *sgid is that entry. */
struct fab_device *topology_af_ib_port(const union ibv_gid *dgid, union ibv_gid *sgid)
{
	enum ibv_gid_type type;

	for (struct fab_device *dev = fab.devices; dev; dev = dev->next) {
		if (dev->removing)
			continue;
		for (int i = 0; gid_entry(dev, i, sgid, &type) == 0; i++)
			if (!memcmp(sgid, dgid, sizeof *sgid) ||
			    (!memcmp(sgid, dgid, 8) && !dev->port_down))
				return dev;
	}
	return NULL;
}

/* The port of a device goes down or comes up. Returns the device's serial
 * (>= 0) when its state changed, -EALREADY when it was so, -ENODEV. */
int topology_port_set_locked(const char *name, bool up)
{
	struct fab_device *dev = name ? find_in(fab.devices, name) : NULL;

	if (!dev)
		return -ENODEV;
	if (dev->port_down == !up)
		return -EALREADY;
	dev->port_down = !up;
	return (int)dev->serial;
}

const char *topology_device_name_locked(unsigned serial)
{
	struct fab_device *dev = by_serial(serial);

	return dev ? dev->name : NULL;
}

uint16_t topology_lid_locked(unsigned serial)
{
	struct fab_device *dev = by_serial(serial);

	return dev && (dev->caps & FAB_CAP_IB) ? (uint16_t)(FAB_SM_LID + dev->serial) : 0;
}

bool topology_port_down_locked(unsigned serial)
{
	struct fab_device *dev = by_serial(serial);

	return dev && dev->port_down;
}

int topology_device_set_cap_locked(const char *name, uint32_t cap, bool on)
{
	struct fab_device *dev = name ? find_in(fab.devices, name) : NULL;

	if (!dev)
		return -ENODEV;
	dev->caps = on ? dev->caps | cap : dev->caps & ~cap;
	return 0;
}

int fab_device_caps(unsigned serial, uint32_t *caps)
{
	struct fab_device *dev;

	fab_lock();
	dev = by_serial(serial);
	if (dev)
		*caps = dev->caps;
	fab_unlock();
	return dev ? 0 : -ENODEV;
}

/* See internal.h. */
int topology_gid_index(const struct fab_device *dev, const struct sockaddr *addr)
{
	int own = dev ? default_gid_addr(dev) : -1;

	/* InfiniBand, and an RNIC (its one GID, of its MAC address: siw): the
	 * first entry. */
	if (dev && ((dev->caps & FAB_CAP_IB) ||
		    fab_profile_of(dev->personality)->transport == IBV_TRANSPORT_IWARP))
		return 0;

	for (int slot = 1; dev && slot <= dev->naddrs - (own >= 0); slot++)
		if (fab_addr_equal((const struct sockaddr *)&dev->addrs[slot_addr(dev, slot)], addr))
			return slot * gid_versions(dev) + gid_versions(dev) - 1;
	/* The default GID's own address, or not one of its own (a loopback
	 * source): the default GID's. */
	return dev ? gid_versions(dev) - 1 : 0;
}

/* ---------------------------------------------------------------- counters */

int fab_device_counters(unsigned serial, uint32_t *qkey_violations)
{
	struct fab_device *dev;

	fab_lock();
	dev = by_serial(serial);
	if (dev)
		*qkey_violations = dev->qkey_violations;
	fab_unlock();
	return dev ? 0 : -ENODEV;
}

void fab_device_count_qkey_violation(unsigned serial)
{
	struct fab_device *dev;

	fab_lock();
	dev = by_serial(serial);
	if (dev)
		dev->qkey_violations++;
	fab_unlock();
}

uint16_t fab_device_next_ip_id(unsigned serial)
{
	struct fab_device *dev;
	uint16_t id = 0;

	fab_lock();
	dev = by_serial(serial);
	if (dev)
		id = dev->ip_id++;
	fab_unlock();
	return id;
}

/* How the kernel resolves the neighbour an address handle names: a GID
 * some device holds (or a multicast one) is there; an address on a
 * device's subnet that nobody holds never answers ARP; anything else has
 * no route. */
int fab_neighbour(const union ibv_gid *dgid)
{
	struct sockaddr_storage ss = { 0 };
	struct fab_device *dev;
	int err = -ENETUNREACH;

	fab_lock();
	if (fab_gid_is_multicast(dgid)) {
		err = 0;
	} else {
		for (dev = fab.devices; dev && err; dev = dev->next)
			if (topology_device_has_gid(dev->serial, dgid))
				err = 0;
	}
	if (err) {
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)dgid->raw)) {
			struct sockaddr_in *in = (void *)&ss;

			in->sin_family = AF_INET;
			memcpy(&in->sin_addr, &dgid->raw[12], 4);
		} else {
			struct sockaddr_in6 *in6 = (void *)&ss;

			in6->sin6_family = AF_INET6;
			memcpy(&in6->sin6_addr, dgid->raw, 16);
		}
		if (topology_device_on_subnet((struct sockaddr *)&ss))
			err = -ETIMEDOUT;
	}
	fab_unlock();
	return err;
}

struct fab_device *topology_device_locked(const char *name)
{
	return name ? find_in(fab.devices, name) : NULL;
}
