#pragma once
#include <stddef.h>
#include <stdint.h>
#include "CGatehouseAtomics.h"

/// Whether this CPU has the CRC-32C instruction (x86-64 with SSE 4.2); 0 elsewhere.
int cgh_crc32c_hardware_available(void);
/// Continues a CRC-32C over `count` bytes with the CPU's instruction. `crc` and the result are
/// the register as the instruction keeps it (not inverted). Call only when
/// `cgh_crc32c_hardware_available()` said yes.
uint32_t cgh_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

/// Asks for the cache line holding `address` ahead of a read: a hint that reads nothing, so
/// any address is harmless. For lookups known before their turn (log replay).
static inline void cgh_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

// Kernel interfaces that Glibc's Swift overlay does not export, plus small wrappers for
// variadic or macro-shaped calls Swift cannot import.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <signal.h>

/// `fcntl(fd, F_SETFL, flags | O_NONBLOCK)`; Swift cannot call the variadic `fcntl`.
int cgh_set_nonblocking(int fd);
/// Sets an integer socket option.
int cgh_setsockopt_int(int fd, int level, int name, int value);
/// Blocks SIGPIPE process-wide: writes to a closed peer then fail with EPIPE instead of killing us.
void cgh_ignore_sigpipe(void);
/// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec from the start, so a process spawned by
/// another thread meanwhile cannot inherit them.
int cgh_pipe_cloexec(int fds[2]);
/// `accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
int cgh_accept_nonblocking(int fd);
/// `epoll_ctl` with the descriptor itself as the event's data; hides the packed `epoll_event`
/// layout (x86_64) from Swift.
int cgh_epoll_ctl(int epfd, int op, int fd, uint32_t events);
/// `epoll_wait` that unpacks the ready events into two plain arrays.
int cgh_epoll_wait(int epfd, int *fds, uint32_t *events, int max_events, int timeout_ms);
#endif
