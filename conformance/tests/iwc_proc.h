/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Process helpers for the conformance ctests: free ports, starting
 * iwarp-target, running iwarp-conform. */
#ifndef IWC_PROC_H
#define IWC_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A TCP port on 127.0.0.1 that was free a moment ago. */
uint16_t iwc_free_port(void);

/* Start argv[0] with argv; stdout/stderr to the file `log` (NULL: inherit).
 * Returns the pid or -1. */
pid_t iwc_spawn(char *const argv[], const char *log);

/* Wait for pid; returns its exit status, 128+signal, or -1. */
int iwc_wait(pid_t pid);

/* SIGTERM, then wait. */
void iwc_stop(pid_t pid);

/* Wait until something accepts on 127.0.0.1:port (up to ms). */
bool iwc_port_up(uint16_t port, int ms);

/* Whole file into a NUL-terminated buffer (free it); NULL on error. */
char *iwc_slurp(const char *path, size_t *len);

#endif
