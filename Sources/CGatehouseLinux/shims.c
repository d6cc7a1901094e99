#include "CGatehouseLinux.h"
#include <stdint.h>
#ifdef __linux__
int cgh_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}
int cgh_set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}
int cgh_setsockopt_int(int fd, int level, int name, int value) {
    return setsockopt(fd, level, name, &value, sizeof(value));
}
void cgh_ignore_sigpipe(void) {
    signal(SIGPIPE, SIG_IGN);
}
int cgh_accept_nonblocking(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
int cgh_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = 0;
    event.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &event);
}
int cgh_epoll_wait(int epfd, int *fds, uint32_t *events, int max_events, int timeout_ms) {
    struct epoll_event ready[256];
    if (max_events > 256) max_events = 256;
    int count = epoll_wait(epfd, ready, max_events, timeout_ms);
    for (int i = 0; i < count; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    return count;
}
#endif
