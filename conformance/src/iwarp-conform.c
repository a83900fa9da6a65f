/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-conform: the iWARP conformance runner (docs/conformance.md).
 *
 *   iwarp-conform --agent HOST:PORT [options]
 *
 * Loads the case scripts, connects to the IUT's agent, runs every selected
 * case and writes the reports. Exit status: see EXIT_* below. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iwarp/iwarp.h>

#include "iwc_agent.h"
#include "iwc_case.h"
#include "iwc_dev.h"
#include "iwc_pcap.h"
#include "iwc_report.h"
#include "iwc_run.h"
#include "iwc_util.h"

#ifndef IWC_SOURCE_CASES
#define IWC_SOURCE_CASES "conformance/cases"
#endif
#ifndef IWC_INSTALL_CASES
#define IWC_INSTALL_CASES "../share/iwarpkit/conformance/cases"
#endif

enum {
    EXIT_OK = 0,       /* every case passed or failed as a listed deviation */
    EXIT_FAILURES = 1, /* a case failed or errored */
    EXIT_USAGE = 2,    /* bad arguments, case or deviations file */
    EXIT_AGENT = 3,    /* the agent unreachable, not an agent, or lost for good */
    EXIT_FIXED = 4,    /* no failure, but listed deviations passed: the list is stale */
    EXIT_NOTHING = 5   /* every selected case was skipped: nothing was judged */
};

static void usage(FILE *f) {
    fputs(
        "usage: iwarp-conform --agent HOST:PORT [options]\n"
        "       iwarp-conform --list [--markdown|--json] [--cases DIR] [--filter GLOB]\n"
        "\n"
        "Runs the iWARP conformance cases against an implementation under test (IUT)\n"
        "through the agent beside it (docs/conformance.md).\n"
        "\n"
        "  --agent HOST:PORT     the IUT's agent (agent protocol, docs/agent-protocol.md)\n"
        "  --cases DIR           case scripts (default: the installed or source cases)\n"
        "  --filter GLOB[,GLOB]  run cases whose id or area matches (e.g. 'stag.*,mpa')\n"
        "  --out DIR             write results.json, junit.xml, report.html, pcaps/\n"
        "  --deviations FILE     the IUT's expected deviations\n"
        "  --iut-host HOST       where the IUT's RDMA listener is reachable (default: agent host)\n"
        "  --local-host ADDR     our address as the IUT sees it, for IUT-initiator cases\n"
        "                        (default: our end of the agent connection)\n"
        "  --iut-port P[:Q]      the IUT listens on port P and we connect to port Q of\n"
        "                        --iut-host (default: the port the agent picks; Q=P)\n"
        "  --local-listen A:P    for IUT-initiator cases listen on A:P and tell the IUT\n"
        "                        --local-host:P (a forwarded port; default: any port)\n"
        "  --timeout-ms N        longest wait for one expectation (default 2000)\n"
        "  --mpa-timeout-ms N    the IUT's MPA startup timeout, for slow cases (default 10000)\n"
        "  --reply-settle-ms N   wait N ms after the IUT's MPA Reply before the first FPDU\n"
        "                        (an IUT that loses FPDUs sent right after its Reply; default 0)\n"
        "  --case-hook CMD       run the shell command CMD before each case, with the\n"
        "                        case id in $IWC_CASE_ID (a failing hook is reported)\n"
        "  --rfc SECTIONS        run the cases citing these sections or their subsections\n"
        "                        ('RFC 5044 §8,RFC 5041 §7'; 'RFC 6581' for the whole RFC)\n"
        "  --tag TAGS            run the cases with these tags: slow, choice, alternatives,\n"
        "                        or a needs: word (atomics, markers, send_inv, ...)\n"
        "  --repeat N            soak: run the selection N times (failures name the iteration)\n"
        "  --duration S          soak: repeat the selection for at least S seconds\n"
        "                        (--agent A,B,...: one runner per agent, all at once;\n"
        "                        needs --out, reports in OUT/conn-N/)\n"
        "  --slow                also run cases tagged slow (MPA startup timeouts)\n"
        "  --transport T         tcp (MPA over TCP, default) or sctp (DDP over SCTP, RFC 5043,\n"
        "                        in UDP; needs the agent's transport.sctp): cases that are\n"
        "                        the other transport's only are skipped, saying why\n"
        "  --list                list the cases and exit; --markdown / --json for formats,\n"
        "                        --coverage for the RFC 6580 triples each case expects\n"
        "  --color / --no-color  colour the console lines (default: on a terminal)\n"
        "  -v, --verbose         trace steps (twice: every frame and agent request)\n"
        "  --help, --version\n"
        "\n"
        "Exit status: 0 all passed (or failed as listed deviations), 1 failures or errors,\n"
        "2 usage / case file / deviations file errors, 3 agent unreachable or lost (cases\n"
        "not run), 4 listed deviations that passed (fixed), 5 every case skipped.\n",
        f);
}

static int parse_hostport(const char *s, char *host, size_t hl, uint16_t *port) {
    const char *c = strrchr(s, ':');
    if (!c || c == s || (size_t)(c - s) >= hl || !c[1])
        return -1;
    char *e;
    unsigned long p = strtoul(c + 1, &e, 10);
    if (*e || p == 0 || p > 65535)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = 0;
    if (host[0] == '[') {
        size_t k = strlen(host);
        if (k < 3 || host[k - 1] != ']')
            return -1;
        memmove(host, host + 1, k - 2);
        host[k - 2] = 0;
    }
    *port = (uint16_t)p;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || !*s || *e || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* ---- loading cases ---- */

typedef struct cases {
    iwc_entry *v;
    int n, cap;
    int errors;
    uint64_t hash; /* FNV-1a 64 over every loaded case's path and text, in load order */
} cases;

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static char *read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    char *b = malloc(max + 1);
    size_t n = b ? fread(b, 1, max + 1, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    if (!b || bad || n > max) {
        snprintf(err, errlen, "%s", !b ? "out of memory" : bad ? "read error" : "file too large");
        free(b);
        return NULL;
    }
    b[n] = 0;
    *len = n;
    return b;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (files ending in suffix, or directories). */
static char **list_dir(const char *dir, const char *suffix, bool dirs, int *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) < 0 || (dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
            continue;
        size_t nl = strlen(de->d_name), sl = suffix ? strlen(suffix) : 0;
        if (suffix && (nl <= sl || strcmp(de->d_name + nl - sl, suffix)))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
        }
        v[*n] = strdup(de->d_name);
        if (v[*n])
            (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, (size_t)*n, sizeof *v, name_cmp);
    return v;
}

static void free_names(char **v, int n) {
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void load_case(cases *cs, const char *area, const char *path) {
    char err[512];
    size_t len;
    char *text = read_file(path, IWC_TEXT_MAX, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "%s: %s\n", path, err);
        cs->errors++;
        return;
    }
    if (cs->n == cs->cap) {
        int cap = cs->cap ? cs->cap * 2 : 128;
        iwc_entry *nv = realloc(cs->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            free(text);
            cs->errors++;
            return;
        }
        cs->v = nv;
        cs->cap = cap;
    }
    iwc_entry *e = &cs->v[cs->n];
    memset(e, 0, sizeof *e);
    if (!cs->hash)
        cs->hash = 0xcbf29ce484222325ull;
    const char *base = strrchr(path, '/');
    cs->hash = fnv1a(cs->hash, area, strlen(area) + 1);
    cs->hash = fnv1a(cs->hash, base ? base + 1 : path, strlen(base ? base + 1 : path) + 1);
    cs->hash = fnv1a(cs->hash, text, len);
    if (iwc_case_parse(text, len, &e->c, err, sizeof err) < 0) {
        /* err is "LINE: message": file:line: message, as compilers print. */
        fprintf(stderr, "%s:%s\n", path, err);
        cs->errors++;
        free(text);
        return;
    }
    free(text);
    if (strcmp(e->c.area, area)) {
        fprintf(stderr, "%s: case id '%s' is in area '%s' but the file is in %s/\n", path, e->c.id,
                e->c.area, area);
        cs->errors++;
        iwc_case_free(&e->c);
        return;
    }
    for (int i = 0; i < cs->n; i++)
        if (!strcmp(cs->v[i].c.id, e->c.id)) {
            fprintf(stderr, "%s: case id '%s' is also used by %s\n", path, e->c.id, cs->v[i].path);
            cs->errors++;
            iwc_case_free(&e->c);
            return;
        }
    e->path = strdup(path);
    cs->n++;
}

static int load_cases(cases *cs, const char *dir) {
    int na;
    char **areas = list_dir(dir, NULL, true, &na);
    if (!areas) {
        fprintf(stderr, "iwarp-conform: cannot read the case directory %s: %s\n", dir,
                strerror(errno ? errno : ENOENT));
        return -1;
    }
    for (int a = 0; a < na; a++) {
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s/%s", dir, areas[a]) >= (int)sizeof sub)
            continue;
        int nf;
        char **files = list_dir(sub, ".case", false, &nf);
        for (int i = 0; i < nf; i++) {
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s", sub, files[i]) >= (int)sizeof path) {
                fprintf(stderr, "%s/%s: path too long\n", sub, files[i]);
                cs->errors++;
                continue;
            }
            load_case(cs, areas[a], path);
        }
        free_names(files, nf);
    }
    free_names(areas, na);
    if (!cs->n && !cs->errors) {
        fprintf(stderr, "iwarp-conform: no cases (*.case) under %s/<area>/\n", dir);
        return -1;
    }
    return cs->errors ? -1 : 0;
}

static bool filter_match(const char *filter, const iwc_case *c) {
    if (!filter)
        return true;
    char *buf = strdup(filter);
    bool hit = false;
    char *save = NULL;
    for (char *g = buf ? strtok_r(buf, ",", &save) : NULL; g && !hit;
         g = strtok_r(NULL, ",", &save))
        hit = iwc_glob(g, c->id) || iwc_glob(g, c->area);
    free(buf);
    return hit;
}

/* --rfc 'RFC 5044 §8,RFC 5041 §7': a case citing that section or one of its
 * subsections ("RFC 5044 §8 (code 2)", "RFC 5041 §7.1"); "RFC 6581" alone
 * selects every case citing RFC 6581. */
static bool rfc_match(const char *sel, const iwc_case *c) {
    if (!sel)
        return true;
    char *buf = strdup(sel);
    bool hit = false;
    char *save = NULL;
    for (char *g = buf ? strtok_r(buf, ",", &save) : NULL; g && !hit;
         g = strtok_r(NULL, ",", &save)) {
        while (*g == ' ')
            g++;
        char want[96];
        snprintf(want, sizeof want, "%s%s", strncmp(g, "RFC", 3) ? "RFC " : "", g);
        size_t n = strlen(want);
        while (n && want[n - 1] == ' ')
            want[--n] = 0;
        for (int i = 0; i < c->nrfc && !hit; i++) {
            const char *r = c->rfc[i];
            char nx = strncmp(r, want, n) ? 'X' : r[n];
            hit = nx == 0 || nx == ' ' || nx == '(' ||
                  (nx == '.' && r[n + 1] >= '0' && r[n + 1] <= '9');
        }
    }
    free(buf);
    return hit;
}

/* --tag 'slow,atomics,choice': the case's tags, the agent capabilities it
 * needs, "choice" (an outcome the RFCs leave open) or "alternatives" (it
 * accepts several outcomes). */
static bool tag_match(const char *sel, const iwc_case *c) {
    if (!sel)
        return true;
    char *buf = strdup(sel);
    bool hit = false;
    char *save = NULL;
    for (char *g = buf ? strtok_r(buf, ",", &save) : NULL; g && !hit;
         g = strtok_r(NULL, ",", &save)) {
        if (!strcmp(g, "slow"))
            hit = c->tags & IWC_TAG_SLOW;
        else if (!strcmp(g, "choice"))
            hit = c->choice != NULL;
        else if (!strcmp(g, "alternatives"))
            hit = c->nallow > 0;
        for (unsigned b = 0; b < IWC_NEEDS_COUNT_ && !hit; b++)
            hit = !strcmp(g, iwc_needs_name(b)) && (c->needs & (1u << b));
    }
    free(buf);
    return hit;
}

static bool tags_valid(const char *sel) {
    char *buf = strdup(sel);
    bool ok = buf != NULL;
    char *save = NULL;
    for (char *g = buf ? strtok_r(buf, ",", &save) : NULL; g && ok;
         g = strtok_r(NULL, ",", &save)) {
        bool known = !strcmp(g, "slow") || !strcmp(g, "choice") || !strcmp(g, "alternatives");
        for (unsigned b = 0; b < IWC_NEEDS_COUNT_; b++)
            known |= !strcmp(g, iwc_needs_name(b));
        ok = known;
    }
    free(buf);
    return ok;
}

/* Empty a reused --out of what an earlier run wrote (reports, pcaps/, logs/),
 * so nothing stale sits beside this run's results. Other files stay. */
static void clean_out(const char *dir) {
    static const char *const files[] = {"results.json", "junit.xml", "report.html"};
    char p[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        remove(p);
    }
    static const char *const subs[][2] = {{"pcaps", ".pcap"}, {"logs", ".log"}};
    for (size_t s = 0; s < 2; s++) {
        snprintf(p, sizeof p, "%s/%s", dir, subs[s][0]);
        int n;
        char **names = list_dir(p, subs[s][1], false, &n);
        for (int i = 0; names && i < n; i++) {
            char f[PATH_MAX * 2];
            snprintf(f, sizeof f, "%s/%s", p, names[i]);
            remove(f);
        }
        if (names)
            free_names(names, n);
    }
}

static void default_cases_dir(char *out, size_t n) {
    /* Installed layout first (bin/../share/...), then the source tree. */
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char cand[PATH_MAX + 64];
            snprintf(cand, sizeof cand, "%s/%s", exe, IWC_INSTALL_CASES);
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode) &&
                snprintf(out, n, "%s", cand) < (int)n)
                return;
        }
    }
    snprintf(out, n, "%s", IWC_SOURCE_CASES);
}

static int mkdir_p(const char *dir) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

/* ---- console ---- */

static const char *colour(iwc_status s, bool on) {
    if (!on)
        return "";
    static const char *const c[] = {"\033[32m", "\033[31;1m", "\033[35;1m",
                                    "\033[90m", "\033[33m",   "\033[36m"};
    return (unsigned)s < 6 ? c[s] : "";
}

/* host as the numeric address a connect to it would use ("" if none). */
static void numeric_host(const char *host, char *out, size_t n) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    out[0] = 0;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return;
    if (getnameinfo(res->ai_addr, res->ai_addrlen, out, (socklen_t)n, NULL, 0, NI_NUMERICHOST))
        out[0] = 0;
    freeaddrinfo(res);
}

static void print_line(const iwc_entry *e, int idx, int total, bool col) {
    const char *reset = col ? "\033[0m" : "";
    char st[16];
    snprintf(st, sizeof st, "%s", iwc_status_name(e->r.status));
    for (char *p = st; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    printf("[%3d/%-3d] %s%-9s%s %-46s %5.0f ms\n", idx, total, colour(e->r.status, col), st, reset,
           e->c.id, (double)e->r.duration_us / 1000.0);
    if (e->r.status == IWC_FAIL || e->r.status == IWC_ERROR) {
        /* the sections that decide the verdict, then what went wrong */
        printf("            ");
        for (int i = 0; i < e->c.nrfc; i++)
            printf("%s%s", i ? ", " : "", e->c.rfc[i]);
        printf("\n");
        for (int i = 0; i < e->r.nmsgs && i < 4; i++)
            printf("            %s\n", e->r.msgs[i]);
        if (e->r.nmsgs > 4)
            printf("            (%d more in the reports)\n", e->r.nmsgs - 4);
    } else if (e->r.status == IWC_SKIP || e->r.status == IWC_DEVIATION ||
               e->r.status == IWC_NOTRUN) {
        printf("            %s\n",
               e->r.status == IWC_DEVIATION ? e->r.deviation : iwc_result_reason(&e->r));
    } else if (e->r.status == IWC_FIXED) {
        printf("            listed as an expected deviation but passed: remove it from the list\n");
    }
    if (e->r.outcome && (e->r.status == IWC_PASS || e->r.status == IWC_FIXED))
        printf("            conformant, chose %s\n", e->r.outcome);
    fflush(stdout);
}

/* --agent A,B,...: several connections at once. One runner per agent (an
 * agent serves one runner), each a child iwarp-conform with the same
 * options, its reports in OUT/conn-N/ and its console in OUT/conn-N.txt.
 * The status is the worst child's (1 over 3 over 4 over 5 over 0). */
static int several_agents(int argc, char **argv, const char *agents, const char *out_dir) {
    if (!out_dir) {
        fprintf(stderr, "iwarp-conform: several agents (--agent A,B) need --out DIR\n");
        return EXIT_USAGE;
    }
    char *list = strdup(agents);
    if (!list || mkdir_p(out_dir) < 0) {
        fprintf(stderr, "iwarp-conform: cannot create %s\n", out_dir);
        free(list);
        return EXIT_USAGE;
    }
    enum { MAXC = 16 };
    pid_t pid[MAXC];
    char *names[MAXC];
    int n = 0;
    char *save = NULL;
    for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        char h[256];
        uint16_t port;
        if (n == MAXC || parse_hostport(a, h, sizeof h, &port) < 0) {
            fprintf(stderr, "iwarp-conform: --agent: '%s' is not HOST:PORT (at most %d agents)\n",
                    a, MAXC);
            free(list);
            return EXIT_USAGE;
        }
        names[n++] = a;
    }
    printf("iwarp-conform %s: %d connections at once, reports in %s/conn-N/\n", IW_VERSION_STR, n,
           out_dir);
    fflush(stdout);
    for (int c = 0; c < n; c++) {
        char dir[PATH_MAX], con[PATH_MAX + 8];
        snprintf(dir, sizeof dir, "%s/conn-%d", out_dir, c + 1);
        snprintf(con, sizeof con, "%s.txt", dir);
        char **av = calloc((size_t)argc + 1, sizeof *av);
        if (!av)
            break;
        for (int k = 0; k < argc; k++) {
            av[k] = argv[k];
            if (k && (!strcmp(argv[k - 1], "--agent") || !strcmp(argv[k - 1], "-a")))
                av[k] = names[c];
            else if (k && !strcmp(argv[k - 1], "--out"))
                av[k] = dir;
            else if (!strncmp(argv[k], "--agent=", 8) || !strncmp(argv[k], "--out=", 6))
                av[k] = NULL; /* only the spaced forms are rewritten */
        }
        bool ok = true;
        for (int k = 0; k < argc; k++)
            ok &= av[k] != NULL;
        if (!ok) {
            fprintf(stderr, "iwarp-conform: with several agents write '--agent A,B' and '--out DIR'"
                            " as separate words\n");
            free(av);
            free(list);
            return EXIT_USAGE;
        }
        fflush(stdout);
        pid[c] = fork();
        if (pid[c] == 0) {
            FILE *o = freopen(con, "w", stdout);
            if (o)
                dup2(fileno(stdout), STDERR_FILENO);
            execv("/proc/self/exe", av);
            _exit(EXIT_USAGE);
        }
        free(av);
    }
    int worst = EXIT_OK;
    static const int rank[] = {[EXIT_OK] = 0,    [EXIT_NOTHING] = 1, [EXIT_FIXED] = 2,
                               [EXIT_AGENT] = 3, [EXIT_USAGE] = 4,   [EXIT_FAILURES] = 5};
    for (int c = 0; c < n; c++) {
        int st = 0;
        int rc = pid[c] > 0 && waitpid(pid[c], &st, 0) == pid[c] && WIFEXITED(st) ? WEXITSTATUS(st)
                                                                                  : EXIT_FAILURES;
        if (rc > EXIT_NOTHING)
            rc = EXIT_FAILURES;
        printf("connection %d (agent %s): exit %d, console %s/conn-%d.txt\n", c + 1, names[c], rc,
               out_dir, c + 1);
        /* its summary lines: the counts and, when soaking, the failing iterations */
        char con[PATH_MAX + 16];
        snprintf(con, sizeof con, "%s/conn-%d.txt", out_dir, c + 1);
        FILE *f = fopen(con, "r");
        char line[4096];
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "soak:", 5) || strstr(line, " cases: ") ||
                !strncmp(line, "iteration ", 10))
                printf("    %s", line);
        if (f)
            fclose(f);
        if (rank[rc] > rank[worst])
            worst = rc;
    }
    free(list);
    return worst;
}

/* ---- main ---- */

int main(int argc, char **argv) {
    const char *agent_arg = NULL, *cases_dir = NULL, *filter = NULL, *out_dir = NULL;
    const char *dev_file = NULL, *iut_host = NULL, *local_host = NULL, *list_fmt = NULL;
    const char *local_listen = NULL, *case_hook = NULL, *rfc_sel = NULL, *tag_sel = NULL;
    int repeat = 1, duration_s = 0;
    int iut_port[2] = {0, 0};
    int timeout_ms = 2000, mpa_timeout_ms = 10000, reply_settle_ms = 0, verbose = 0, color = -1;
    bool slow = false, list = false, coverage = false, sctp = false;
    enum {
        O_CASES = 256,
        O_FILTER,
        O_OUT,
        O_DEV,
        O_IUT,
        O_LOCAL,
        O_TMO,
        O_MPATMO,
        O_SLOW,
        O_LIST,
        O_MD,
        O_JSON,
        O_COVERAGE,
        O_COLOR,
        O_NOCOLOR,
        O_VERSION,
        O_IUTPORT,
        O_LLISTEN,
        O_SETTLE,
        O_HOOK,
        O_RFC,
        O_TAG,
        O_REPEAT,
        O_DURATION,
        O_TRANSPORT
    };
    static const struct option opts[] = {{"agent", required_argument, 0, 'a'},
                                         {"cases", required_argument, 0, O_CASES},
                                         {"filter", required_argument, 0, O_FILTER},
                                         {"out", required_argument, 0, O_OUT},
                                         {"deviations", required_argument, 0, O_DEV},
                                         {"iut-host", required_argument, 0, O_IUT},
                                         {"local-host", required_argument, 0, O_LOCAL},
                                         {"timeout-ms", required_argument, 0, O_TMO},
                                         {"mpa-timeout-ms", required_argument, 0, O_MPATMO},
                                         {"slow", no_argument, 0, O_SLOW},
                                         {"list", no_argument, 0, O_LIST},
                                         {"markdown", no_argument, 0, O_MD},
                                         {"json", no_argument, 0, O_JSON},
                                         {"coverage", no_argument, 0, O_COVERAGE},
                                         {"color", no_argument, 0, O_COLOR},
                                         {"no-color", no_argument, 0, O_NOCOLOR},
                                         {"verbose", no_argument, 0, 'v'},
                                         {"help", no_argument, 0, 'h'},
                                         {"version", no_argument, 0, O_VERSION},
                                         {"iut-port", required_argument, 0, O_IUTPORT},
                                         {"local-listen", required_argument, 0, O_LLISTEN},
                                         {"reply-settle-ms", required_argument, 0, O_SETTLE},
                                         {"case-hook", required_argument, 0, O_HOOK},
                                         {"rfc", required_argument, 0, O_RFC},
                                         {"tag", required_argument, 0, O_TAG},
                                         {"repeat", required_argument, 0, O_REPEAT},
                                         {"duration", required_argument, 0, O_DURATION},
                                         {"transport", required_argument, 0, O_TRANSPORT},
                                         {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":a:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            agent_arg = optarg;
            break;
        case O_CASES:
            cases_dir = optarg;
            break;
        case O_FILTER:
            filter = optarg;
            break;
        case O_OUT:
            out_dir = optarg;
            break;
        case O_DEV:
            dev_file = optarg;
            break;
        case O_IUT:
            iut_host = optarg;
            break;
        case O_LOCAL:
            local_host = optarg;
            break;
        case O_IUTPORT: {
            char p[16], *q;
            snprintf(p, sizeof p, "%s", optarg);
            q = strchr(p, ':');
            if (q)
                *q++ = 0;
            if (strlen(optarg) >= sizeof p || parse_int(p, 1, 65535, &iut_port[0]) < 0 ||
                parse_int(q ? q : p, 1, 65535, &iut_port[1]) < 0) {
                fprintf(stderr,
                        "iwarp-conform: --iut-port wants PORT or PORT:PORT (1..65535), got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case O_LLISTEN:
            local_listen = optarg;
            break;
        case O_HOOK:
            case_hook = optarg;
            break;
        case O_RFC:
            rfc_sel = optarg;
            break;
        case O_TAG:
            if (!tags_valid(optarg)) {
                fprintf(stderr,
                        "iwarp-conform: --tag '%s': known tags are slow, choice, "
                        "alternatives and the needs: words (atomics, markers, ...)\n",
                        optarg);
                return EXIT_USAGE;
            }
            tag_sel = optarg;
            break;
        case O_REPEAT:
            if (parse_int(optarg, 1, 1000000, &repeat) < 0) {
                fprintf(stderr, "iwarp-conform: --repeat wants 1..1000000, got '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case O_DURATION:
            if (parse_int(optarg, 1, 7 * 86400, &duration_s) < 0) {
                fprintf(stderr, "iwarp-conform: --duration wants seconds 1..604800, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_SETTLE:
            if (parse_int(optarg, 0, 10000, &reply_settle_ms) < 0) {
                fprintf(stderr, "iwarp-conform: --reply-settle-ms wants 0..10000, got '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case O_TMO:
        case O_MPATMO:
            if (parse_int(optarg, 1, 600000, c == O_TMO ? &timeout_ms : &mpa_timeout_ms) < 0) {
                fprintf(stderr, "iwarp-conform: %s wants milliseconds 1..600000, got '%s'\n",
                        c == O_TMO ? "--timeout-ms" : "--mpa-timeout-ms", optarg);
                return EXIT_USAGE;
            }
            break;
        case O_SLOW:
            slow = true;
            break;
        case O_TRANSPORT:
            if (strcmp(optarg, "tcp") && strcmp(optarg, "sctp")) {
                fprintf(stderr, "iwarp-conform: --transport wants tcp or sctp, got '%s'\n", optarg);
                return EXIT_USAGE;
            }
            sctp = optarg[0] == 's';
            break;
        case O_LIST:
            list = true;
            break;
        case O_MD:
            list_fmt = "markdown";
            break;
        case O_JSON:
            list_fmt = "json";
            break;
        case O_COVERAGE:
            coverage = true;
            break;
        case O_COLOR:
            color = 1;
            break;
        case O_NOCOLOR:
            color = 0;
            break;
        case 'v':
            verbose++;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case O_VERSION:
            printf("iwarp-conform %s\n", IW_VERSION_STR);
            return EXIT_OK;
        case ':':
            fprintf(stderr, "iwarp-conform: %s needs a value\n", argv[optind - 1]);
            return EXIT_USAGE;
        default:
            fprintf(stderr, "iwarp-conform: unknown option '%s' (see --help)\n",
                    optopt ? (char[]){'-', (char)optopt, 0} : argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "iwarp-conform: unexpected argument '%s' (see --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if ((list_fmt || coverage) && !list) {
        fprintf(stderr, "iwarp-conform: --markdown, --json and --coverage go with --list\n");
        return EXIT_USAGE;
    }
    char cmdline[2048] = "";
    for (int i = 0, o = 0; i < argc && o < (int)sizeof cmdline - 1; i++) {
        int w = snprintf(cmdline + o, sizeof cmdline - (size_t)o, "%s%s", i ? " " : "", argv[i]);
        o += w > 0 ? w : 0;
    }
    char agent_host[256] = "";
    uint16_t agent_port = 0;
    if (!list && agent_arg && strchr(agent_arg, ','))
        return several_agents(argc, argv, agent_arg, out_dir);
    if (!list) {
        if (!agent_arg) {
            fprintf(stderr, "iwarp-conform: --agent HOST:PORT is required (see --help)\n");
            return EXIT_USAGE;
        }
        if (parse_hostport(agent_arg, agent_host, sizeof agent_host, &agent_port) < 0) {
            fprintf(stderr, "iwarp-conform: --agent wants HOST:PORT, got '%s'\n", agent_arg);
            return EXIT_USAGE;
        }
    }
    char ll_host[64] = "";
    uint16_t ll_port = 0;
    if (local_listen &&
        (parse_hostport(local_listen, ll_host, sizeof ll_host, &ll_port) < 0 || ll_port == 0)) {
        fprintf(stderr, "iwarp-conform: --local-listen wants ADDR:PORT, got '%s'\n", local_listen);
        return EXIT_USAGE;
    }
    char defdir[PATH_MAX];
    if (!cases_dir) {
        default_cases_dir(defdir, sizeof defdir);
        cases_dir = defdir;
    }

    cases cs = {0};
    int rc = EXIT_OK;
    iwc_devlist devs = {0};
    iwc_agent agent;
    memset(&agent, 0, sizeof agent);
    agent.fd = -1;
    if (load_cases(&cs, cases_dir) < 0) {
        if (cs.errors)
            fprintf(stderr, "iwarp-conform: %d case file(s) could not be loaded\n", cs.errors);
        rc = EXIT_USAGE;
        goto out;
    }
    int selected = 0;
    for (int i = 0; i < cs.n; i++)
        selected += cs.v[i].selected = filter_match(filter, &cs.v[i].c) &&
                                       rfc_match(rfc_sel, &cs.v[i].c) &&
                                       tag_match(tag_sel, &cs.v[i].c);
    if (!selected) {
        fprintf(stderr, "iwarp-conform: --filter '%s'%s%s%s%s matches no case\n",
                filter ? filter : "", rfc_sel ? " --rfc " : "", rfc_sel ? rfc_sel : "",
                tag_sel ? " --tag " : "", tag_sel ? tag_sel : "");
        rc = EXIT_USAGE;
        goto out;
    }
    if (list) {
        if (coverage && list_fmt && !strcmp(list_fmt, "json"))
            iwc_coverage_json(stdout, cs.v, cs.n);
        else if (coverage)
            iwc_coverage(stdout, cs.v, cs.n, list_fmt && !strcmp(list_fmt, "markdown"));
        else
            iwc_list(stdout, cs.v, cs.n, list_fmt ? list_fmt : "plain");
        goto out;
    }
    if (dev_file) {
        char err[512];
        size_t len;
        char *text = read_file(dev_file, 4u << 20, &len, err, sizeof err);
        if (!text) {
            fprintf(stderr, "iwarp-conform: %s: %s\n", dev_file, err);
            rc = EXIT_USAGE;
            goto out;
        }
        int prc = iwc_dev_parse(text, len, &devs, err, sizeof err);
        free(text);
        if (prc < 0) {
            fprintf(stderr, "%s:%s\n", dev_file, err);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    char pcap_dir[PATH_MAX] = "";
    if (out_dir) {
        char log_dir[PATH_MAX + 8];
        snprintf(pcap_dir, sizeof pcap_dir, "%s/pcaps", out_dir);
        snprintf(log_dir, sizeof log_dir, "%s/logs", out_dir);
        clean_out(out_dir);
        if (mkdir_p(pcap_dir) < 0 || mkdir_p(log_dir) < 0) {
            fprintf(stderr, "iwarp-conform: cannot create %s: %s\n", pcap_dir, strerror(errno));
            rc = EXIT_USAGE;
            goto out;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    if (iwc_agent_connect(&agent, agent_host, agent_port, 3000) < 0 ||
        iwc_agent_hello(&agent, 5000) < 0) {
        fprintf(stderr, "iwarp-conform: %s\n", agent.err);
        rc = EXIT_AGENT;
        goto out;
    }
    if (sctp && !agent.caps.sctp) {
        fprintf(stderr,
                "iwarp-conform: --transport sctp: the agent (%s) does not offer it (no "
                "\"transport.sctp\" in its hello extensions)\n",
                agent.caps.impl);
        rc = EXIT_AGENT;
        goto out;
    }
    iwc_env env;
    memset(&env, 0, sizeof env);
    env.agent = &agent;
    env.sctp = sctp;
    snprintf(env.iut_host, sizeof env.iut_host, "%s", iut_host ? iut_host : agent_host);
    if (!iut_port[1])
        numeric_host(env.iut_host, env.iut_listen_host, sizeof env.iut_listen_host);
    snprintf(env.local_host, sizeof env.local_host, "%s",
             local_host            ? local_host
             : agent.local_addr[0] ? agent.local_addr
                                   : "127.0.0.1");
    env.iut_listen_port = (uint16_t)iut_port[0];
    env.iut_connect_port = (uint16_t)iut_port[1];
    if (local_listen) {
        env.local_port = ll_port;
        snprintf(env.local_bind, sizeof env.local_bind, "%s", ll_host);
    } else {
        snprintf(env.local_bind, sizeof env.local_bind, "%s", env.local_host);
    }
    env.timeout_ms = timeout_ms;
    env.mpa_timeout_ms = mpa_timeout_ms;
    env.reply_settle_ms = reply_settle_ms;
    env.slow = slow;
    env.verbose = verbose;
    env.log = stdout;
    bool col = color < 0 ? isatty(STDOUT_FILENO) : color == 1;
    printf("iwarp-conform %s: %d case(s) against %s (agent %s)%s\n", IW_VERSION_STR, selected,
           agent.caps.impl, agent_arg, sctp ? " over SCTP (RFC 5043)" : "");
    fflush(stdout);

    iwc_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.agent = agent_arg;
    meta.impl = agent.caps.impl;
    meta.deviations = dev_file;
    meta.started_us = iwc_wall_us();
    meta.cases_dir = cases_dir;
    meta.filter = filter;
    meta.rfc_sel = rfc_sel;
    meta.tag_sel = tag_sel;
    char hash[20];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)cs.hash);
    meta.case_hash = hash;
    meta.cases_loaded = cs.n;
    meta.selected = selected;
    meta.timeout_ms = timeout_ms;
    meta.mpa_timeout_ms = mpa_timeout_ms;
    meta.reply_settle_ms = reply_settle_ms;
    meta.slow = slow;
    meta.transport = sctp ? "sctp" : "tcp";
    meta.hello = agent.hello;
    meta.cmdline = cmdline;
    uint64_t t0 = iwc_now_us();
    int idx = 0;
    bool reconnected = false, stop = false;
    for (int iter = 1; !stop; iter++) {
        meta.iterations = iter;
        idx = 0;
        for (int i = 0; i < cs.n; i++) {
            iwc_entry *e = &cs.v[i];
            if (!e->selected)
                continue;
            idx++;
            /* soak: later iterations run into e->r, the first bad one is kept */
            bool again = iter > 1;
            iwc_result keep;
            if (again) {
                keep = e->r;
                memset(&e->r, 0, sizeof e->r);
            }
            if (verbose)
                printf("--- %s (%s)\n", e->c.id, e->path);
            if (case_hook) {
                /* e.g. a marker in a guest's kernel log, so that a crash can be
                 * pinned on the case that was running */
                setenv("IWC_CASE_ID", e->c.id, 1);
                int hrc = system(case_hook);
                if (hrc != 0)
                    fprintf(stderr, "iwarp-conform: --case-hook exited %d before %s\n", hrc,
                            e->c.id);
            }
            FILE *clog = NULL;
            if (out_dir) {
                char lp[PATH_MAX + 80];
                snprintf(lp, sizeof lp, "%s/logs/%s.log", out_dir, e->c.id);
                clog = fopen(lp, again ? "a" : "w");
                if (clog) {
                    fprintf(clog, "=== %s (%s), iteration %d\n%s\n", e->c.id, e->path, iter,
                            e->c.title);
                    for (int k = 0; k < e->c.nrfc; k++)
                        fprintf(clog, "%s%s", k ? ", " : "", e->c.rfc[k]);
                    fputc('\n', clog);
                    if (!e->log)
                        e->log = iwc_strf("logs/%s.log", e->c.id);
                }
            }
            env.case_log = clog;
            iwc_run_case(&env, &e->c, &e->r);
            env.case_log = NULL;
            e->ran = true;
            if (e->r.status == IWC_FAIL) {
                iwc_dev *used[16], *d;
                int nu = iwc_dev_cover(&devs, e->c.id, e->r.msgs, e->r.nmsgs, used, 16);
                if (nu) {
                    e->r.status = IWC_DEVIATION;
                    size_t len = 1;
                    for (int k = 0; k < nu; k++)
                        len += strlen(used[k]->reason) + 2;
                    e->r.deviation = malloc(len);
                    if (e->r.deviation)
                        e->r.deviation[0] = 0;
                    for (int k = 0; k < nu; k++) {
                        used[k]->matched++;
                        /* entries may share a reason: say it once */
                        if (e->r.deviation && !strstr(e->r.deviation, used[k]->reason)) {
                            if (e->r.deviation[0])
                                strcat(e->r.deviation, "; ");
                            strcat(e->r.deviation, used[k]->reason);
                        }
                    }
                } else if ((d = iwc_dev_for(&devs, e->c.id, false))) {
                    /* Listed, but failing differently: a new failure stays one. */
                    char *m = iwc_strf("listed deviations name this case, but not every failure is "
                                       "one of their outcomes (first entry's: \"%s\")",
                                       d->outcome);
                    char **nm =
                        m ? realloc(e->r.msgs, (size_t)(e->r.nmsgs + 1) * sizeof *nm) : NULL;
                    if (nm) {
                        e->r.msgs = nm;
                        e->r.msgs[e->r.nmsgs++] = m;
                    } else {
                        free(m);
                    }
                }
            } else if (e->r.status == IWC_PASS) {
                iwc_dev *d = iwc_dev_for(&devs, e->c.id, true);
                if (d) {
                    d->matched++;
                    e->r.status = IWC_FIXED;
                }
            }
            bool bad = e->r.status == IWC_FAIL || e->r.status == IWC_ERROR;
            e->runs++;
            if (bad) {
                e->bad_runs++;
                char *nb = iwc_strf("%s%s%d (%s)", e->bad_iters ? e->bad_iters : "",
                                    e->bad_iters ? ", " : "", iter, iwc_status_name(e->r.status));
                if (nb) {
                    free(e->bad_iters);
                    e->bad_iters = nb;
                }
            }
            if (clog) {
                fprintf(clog, "=== %s: %s\n", iwc_status_name(e->r.status),
                        e->r.status == IWC_DEVIATION ? e->r.deviation : "");
                for (int k = 0; k < e->r.nmsgs; k++)
                    fprintf(clog, "  %s\n", e->r.msgs[k]);
                if (e->r.outcome)
                    fprintf(clog, "  conformant, chose %s\n", e->r.outcome);
                fclose(clog);
            }
            bool replaced = true;
            if (again) {
                bool keep_bad = keep.status == IWC_FAIL || keep.status == IWC_ERROR;
                if (bad && !keep_bad) {
                    iwc_result_free(&keep);
                } else {
                    iwc_result_free(&e->r);
                    e->r = keep;
                    replaced = false;
                }
            }
            if (out_dir && replaced && e->r.cap.used) {
                char path[PATH_MAX + 64], err[256];
                snprintf(path, sizeof path, "%s/%s.pcap", pcap_dir, e->c.id);
                if (iwc_pcap_write(path, &e->r.cap, err, sizeof err) == 0) {
                    if (!e->pcap)
                        e->pcap = iwc_strf("pcaps/%s.pcap", e->c.id);
                } else
                    fprintf(stderr, "iwarp-conform: pcap: %s\n", err);
            }
            if (!again) {
                print_line(e, idx, selected, col);
            } else if (bad) {
                printf("iteration %d: ", iter);
                print_line(e, idx, selected, col);
            }
            /* The agent went away (or stopped answering, or sent what cannot be
             * trusted). The protocol resets on a new connection (reset), so try
             * once to reconnect and go on; else the rest is listed as not run. */
            if (agent.fd < 0) {
                char why[256];
                snprintf(why, sizeof why, "%s", agent.err);
                bool back = false;
                if (!reconnected) {
                    reconnected = true;
                    iwc_agent_close(&agent);
                    back = iwc_agent_connect(&agent, agent_host, agent_port, 3000) == 0 &&
                           iwc_agent_hello(&agent, 5000) == 0;
                }
                char *w = iwc_strf("lost the agent after %s (%s); %s", e->c.id, why,
                                   back ? "reconnected and continued"
                                        : "the remaining cases were not run");
                fprintf(stderr, "iwarp-conform: %s\n", w ? w : why);
                char **nw =
                    w ? realloc(meta.warnings, (size_t)(meta.nwarnings + 1) * sizeof *nw) : NULL;
                if (nw) {
                    meta.warnings = nw;
                    meta.warnings[meta.nwarnings++] = w;
                } else {
                    free(w);
                }
                if (back)
                    continue;
                rc = EXIT_AGENT;
                stop = true;
                for (int q = i + 1; q < cs.n && iter == 1; q++) {
                    iwc_entry *x = &cs.v[q];
                    if (!x->selected)
                        continue;
                    x->ran = true; /* reported, as not run */
                    x->r.status = IWC_NOTRUN;
                    x->r.msgs = malloc(sizeof *x->r.msgs);
                    if (x->r.msgs &&
                        (x->r.msgs[0] = iwc_strf("not run: the agent was lost (%s)", why)))
                        x->r.nmsgs = 1;
                    print_line(x, ++idx, selected, col);
                }
                break;
            }
        }
        uint64_t el = iwc_now_us() - t0;
        if (iter >= repeat && (!duration_s || el >= (uint64_t)duration_s * 1000000u))
            stop = true;
        if (!stop)
            printf("--- soak: iteration %d done (%.1f s)\n", iter, (double)el / 1e6);
    }
    meta.duration_us = iwc_now_us() - t0;
    if (meta.iterations > 1) {
        int bad_runs = 0, runs = 0;
        for (int i = 0; i < cs.n; i++) {
            bad_runs += cs.v[i].bad_runs;
            runs += cs.v[i].runs;
        }
        printf("soak: %d iterations, %d case runs, %d failed or errored", meta.iterations, runs,
               bad_runs);
        for (int i = 0; i < cs.n; i++)
            if (cs.v[i].bad_iters)
                printf("%s %s in iteration %s", bad_runs ? ";" : "", cs.v[i].c.id,
                       cs.v[i].bad_iters);
        printf("\n");
    }
    for (int i = 0; i < devs.n; i++) {
        bool known = false;
        for (int k = 0; k < cs.n && !known; k++)
            known = iwc_glob(devs.v[i].id, cs.v[k].c.id);
        if (!known) {
            char *w = iwc_strf("%s:%d: deviation '%s' names no known case", dev_file,
                               devs.v[i].line, devs.v[i].id);
            char **nw =
                w ? realloc(meta.warnings, (size_t)(meta.nwarnings + 1) * sizeof *nw) : NULL;
            if (nw) {
                meta.warnings = nw;
                meta.warnings[meta.nwarnings++] = w;
            } else {
                free(w);
            }
        }
    }
    iwc_counts k;
    iwc_count(cs.v, cs.n, &k);
    printf("\n%d cases: %d passed, %d failed, %d errors, %d expected deviations, %d fixed "
           "deviations, %d skipped, %d not run (%.1f s)\n",
           k.total, k.pass, k.fail, k.error, k.deviation, k.fixed, k.skip, k.notrun,
           (double)meta.duration_us / 1e6);
    for (int i = 0; i < meta.nwarnings; i++)
        printf("warning: %s\n", meta.warnings[i]);
    if (k.fixed)
        printf("%d listed deviation(s) no longer occur: remove them from %s\n", k.fixed,
               dev_file ? dev_file : "the list");
    if (out_dir) {
        char p[PATH_MAX + 32];
        int werr = 0;
        snprintf(p, sizeof p, "%s/results.json", out_dir);
        werr |= iwc_write_json(p, cs.v, cs.n, &meta);
        snprintf(p, sizeof p, "%s/junit.xml", out_dir);
        werr |= iwc_write_junit(p, cs.v, cs.n, &meta);
        snprintf(p, sizeof p, "%s/report.html", out_dir);
        werr |= iwc_write_html(p, cs.v, cs.n, &meta);
        printf("reports: %s/{results.json,junit.xml,report.html,pcaps/}\n", out_dir);
        if (werr && rc == EXIT_OK)
            rc = EXIT_FAILURES;
    }
    /* Every state shows in the status (docs/conformance.md "Exit status"). */
    if (rc == EXIT_OK && (k.fail || k.error))
        rc = EXIT_FAILURES;
    if (rc == EXIT_OK && k.fixed)
        rc = EXIT_FIXED;
    if (rc == EXIT_OK && k.total && k.skip == k.total)
        rc = EXIT_NOTHING;
    for (int i = 0; i < meta.nwarnings; i++)
        free(meta.warnings[i]);
    free(meta.warnings);
out:
    iwc_agent_close(&agent);
    iwc_dev_free(&devs);
    for (int i = 0; i < cs.n; i++) {
        iwc_case_free(&cs.v[i].c);
        iwc_result_free(&cs.v[i].r);
        free(cs.v[i].path);
        free(cs.v[i].pcap);
        free(cs.v[i].log);
        free(cs.v[i].bad_iters);
    }
    free(cs.v);
    return rc;
}
