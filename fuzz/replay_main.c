/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays inputs through a harness without libFuzzer, so every build (gcc
 * included) runs the corpora as regression tests.
 *
 *   fuzz_<name>_replay [-v] FILE|DIR...
 *
 * Directories are read one level deep in name order; dot files are
 * skipped. Each input sits in a heap block of exactly its size, as under
 * libFuzzer, so ASan builds catch over-reads. The empty input runs first,
 * as libFuzzer does. A harness that finds a broken invariant aborts; the
 * signal handler then names the input. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static const char *current = "(empty input)";
static int verbose;
static size_t replayed;

static void on_fatal(int sig) {
    /* Only async-signal-safe calls here. */
    static const char pre[] = "fuzz replay: crashed on input: ";
    (void)!write(STDERR_FILENO, pre, sizeof pre - 1);
    (void)!write(STDERR_FILENO, current, strlen(current));
    (void)!write(STDERR_FILENO, "\n", 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    int err = !buf || ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "fuzz replay: %s: read failed\n", path);
        free(buf);
        return 1;
    }
    uint8_t *exact = fuzz_dup(buf, n);
    free(buf);
    current = path;
    if (verbose)
        fprintf(stderr, "%s (%zu octets)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    replayed++;
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz replay: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        FUZZ_CHECK(names != NULL);
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        names[n] = malloc(len);
        FUZZ_CHECK(names[n] != NULL);
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= replay_file(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_fatal);
    int rc = 0, i = 1;
    if (i < argc && strcmp(argv[i], "-v") == 0) {
        verbose = 1;
        i++;
    }
    if (i == argc) {
        fprintf(stderr, "usage: %s [-v] FILE|DIR...\n", argv[0]);
        return 2;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    for (; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz replay: %s: %s\n", argv[i], strerror(errno));
            rc = 1;
        } else {
            rc |= S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
        }
    }
    if (replayed == 0) {
        fprintf(stderr, "fuzz replay: no inputs found\n"); /* an empty corpus is a mistake */
        rc = 1;
    }
    printf("replayed %zu inputs (+ the empty one)%s\n", replayed, rc ? ", with errors" : "");
    return rc;
}
