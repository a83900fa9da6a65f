/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Proof that the cases can fail: for every fault a case says it catches
 * (catches: in its script), run iwarp-target --fault SPEC and that case,
 * and require it to FAIL with a message containing the expected reason
 * (iwarp-conform --list --json gives both). A fault a case tolerates
 * (tolerates: - a behaviour the RFCs allow, e.g. silently dropping a
 * segment with a bad CRC) must instead PASS, reporting that outcome. Faults run in parallel, each
 * against its own target on a free port. Also requires every fault
 * iwarp-target offers to be caught by at least one case.
 *
 *   iwc_fault_test TARGET CONFORM CASES OUTDIR [JOBS] */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iw_json.h"
#include "iwc_proc.h"

#define MAX_FAULTS 256
#define MAX_PER 64

typedef struct expect {
    char *id, *reason;
    bool pass; /* tolerated: must pass, with reason in its "outcome" */
} expect;

typedef struct fault {
    char *spec;
    bool sctp; /* the cases run over SCTP (--transport sctp): they are SCTP only */
    expect e[MAX_PER];
    int n;
    pid_t target, conform;
    char dir[4096];
    int started;
} fault;

static int failures;

static fault *fault_get(fault *v, int *n, const char *spec, bool sctp) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(v[i].spec, spec) && v[i].sctp == sctp)
            return &v[i];
    if (*n == MAX_FAULTS)
        return NULL;
    fault *f = &v[(*n)++];
    memset(f, 0, sizeof *f);
    f->spec = strdup(spec);
    f->sctp = sctp;
    return f;
}

static void start(fault *f, const char *target, const char *conform, const char *cases,
                  const char *out, int idx) {
    uint16_t port = iwc_free_port();
    char agent[32], tlog[4200], clog[4200];
    snprintf(agent, sizeof agent, "127.0.0.1:%u", port);
    snprintf(f->dir, sizeof f->dir, "%s/fault-%02d", out, idx);
    snprintf(tlog, sizeof tlog, "%s.target.log", f->dir);
    snprintf(clog, sizeof clog, "%s.log", f->dir);
    char *targv[] = {(char *)target, "--agent", agent, "--fault", f->spec, NULL};
    f->target = iwc_spawn(targv, tlog);
    if (!iwc_port_up(port, 5000)) {
        fprintf(stderr, "FAIL iwarp-target --fault %s did not start (see %s)\n", f->spec, tlog);
        failures++;
        iwc_stop(f->target);
        f->target = -1;
        return;
    }
    size_t fl = 1;
    for (int i = 0; i < f->n; i++)
        fl += strlen(f->e[i].id) + 1;
    char *filter = calloc(1, fl);
    for (int i = 0; i < f->n; i++) {
        if (i)
            strcat(filter, ",");
        strcat(filter, f->e[i].id);
    }
    /* A short timeout: a fault that makes the IUT silent costs one wait. */
    char *cargv[] = {(char *)conform,
                     "--agent",
                     agent,
                     "--cases",
                     (char *)cases,
                     "--filter",
                     filter,
                     "--out",
                     f->dir,
                     "--timeout-ms",
                     "400",
                     "--no-color",
                     "--transport",
                     f->sctp ? "sctp" : "tcp",
                     NULL};
    f->conform = iwc_spawn(cargv, clog);
    free(filter);
    f->started = 1;
}

static void judge(fault *f) {
    char path[4200];
    snprintf(path, sizeof path, "%s/results.json", f->dir);
    size_t len;
    char *txt = iwc_slurp(path, &len);
    iw_json_doc d;
    if (!txt || iw_json_parse(&d, txt, len) < 0) {
        fprintf(stderr, "FAIL fault %s: no results (%s.log)\n", f->spec, f->dir);
        failures++;
        free(txt);
        return;
    }
    const iw_json *arr = iw_json_get(&d, &d.nodes[0], "cases");
    for (int i = 0; i < f->n; i++) {
        const iw_json *c = NULL;
        for (const iw_json *x = arr ? iw_json_first(&d, arr) : NULL; x && !c;
             x = iw_json_next(&d, x)) {
            const iw_json *id = iw_json_get(&d, x, "id");
            if (id && id->type == IW_JSON_STR && !strcmp(id->str, f->e[i].id))
                c = x;
        }
        const iw_json *st = c ? iw_json_get(&d, c, "status") : NULL;
        const iw_json *ms = c ? iw_json_get(&d, c, "messages") : NULL;
        const char *first = "";
        bool found = false;
        for (const iw_json *m = ms ? iw_json_first(&d, ms) : NULL; m; m = iw_json_next(&d, m)) {
            if (m->type != IW_JSON_STR)
                continue;
            if (!*first)
                first = m->str;
            if (strstr(m->str, f->e[i].reason)) {
                found = true;
                first = m->str;
                break;
            }
        }
        if (f->e[i].pass) {
            const iw_json *oc = c ? iw_json_get(&d, c, "outcome") : NULL;
            bool passed = st && st->type == IW_JSON_STR && !strcmp(st->str, "pass");
            bool chose = oc && oc->type == IW_JSON_STR && strstr(oc->str, f->e[i].reason);
            if (passed && chose) {
                printf("ok    %-22s %-44s passes, chose %s\n", f->spec, f->e[i].id, oc->str);
            } else {
                printf("FAIL  %-22s %-44s %s\n", f->spec, f->e[i].id,
                       !c        ? "the case did not run"
                       : !passed ? "a tolerated fault made the case fail"
                                 : "passed without reporting the outcome");
                printf("      wanted a pass choosing \"%s\"; got %s %s\n", f->e[i].reason,
                       st && st->type == IW_JSON_STR ? st->str : "?",
                       oc && oc->type == IW_JSON_STR ? oc->str : first);
                failures++;
            }
            continue;
        }
        bool failed = st && st->type == IW_JSON_STR && !strcmp(st->str, "fail");
        if (failed && found) {
            printf("ok    %-22s %-44s %s\n", f->spec, f->e[i].id, first);
        } else {
            printf("FAIL  %-22s %-44s %s\n", f->spec, f->e[i].id,
                   !c        ? "the case did not run"
                   : !failed ? "the case did not fail: the fault went unnoticed"
                             : "failed, but not for the expected reason");
            if (c && failed)
                printf("      wanted \"%s\"; got \"%s\"\n", f->e[i].reason, first);
            else if (c && st)
                printf("      status %s %s\n", st->type == IW_JSON_STR ? st->str : "?", first);
            failures++;
        }
    }
    iw_json_free(&d);
    free(txt);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: iwc_fault_test TARGET CONFORM CASES OUTDIR [JOBS]\n");
        return 2;
    }
    const char *target = argv[1], *conform = argv[2], *cases = argv[3], *out = argv[4];
    int jobs = argc > 5 ? atoi(argv[5]) : 2;
    if (jobs < 1 || jobs > 16)
        jobs = 2;
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", out, out);
    if (system(cmd) != 0)
        return 2;

    /* What the target offers. */
    char help[4200];
    snprintf(help, sizeof help, "%s/target-help.txt", out);
    char *hargv[] = {(char *)target, "--help", NULL};
    iwc_wait(iwc_spawn(hargv, help));
    char *htxt = iwc_slurp(help, NULL);
    if (!htxt || !strstr(htxt, "--fault")) {
        fprintf(stderr,
                "iwc_fault_test needs fault injection in iwarp-target: 'iwarp-target --fault "
                "SPEC[,SPEC...]' with skip:L/E/C, miscode:L/E/C, swap-nibbles, no-hdr-copy, "
                "bad-seg-len, send-after-terminate, place-before-check, accept-bad-crc, "
                "accept-mpa-bad-key, accept-mpa-bad-rev, ird-unbounded, no-remote-invalidate, "
                "ignore-access. %s has no --fault option.\n",
                target);
        free(htxt);
        return 1;
    }

    /* What the cases catch. */
    char list[4200];
    snprintf(list, sizeof list, "%s/cases.jsonl", out);
    char *largv[] = {(char *)conform, "--list", "--json", "--cases", (char *)cases, NULL};
    int rc = iwc_wait(iwc_spawn(largv, list));
    char *ltxt = iwc_slurp(list, NULL);
    if (rc != 0 || !ltxt) {
        fprintf(stderr, "iwarp-conform --list --json failed (%d)\n", rc);
        free(htxt);
        free(ltxt);
        return 1;
    }
    static fault faults[MAX_FAULTS];
    int nf = 0, pairs = 0;
    for (char *line = ltxt; *line;) {
        char *nl = strchr(line, '\n');
        size_t ll = nl ? (size_t)(nl - line) : strlen(line);
        iw_json_doc d;
        if (ll && iw_json_parse(&d, line, ll) == 0) {
            const iw_json *id = iw_json_get(&d, &d.nodes[0], "id");
            /* A case for SCTP only runs over SCTP; the rest over TCP. */
            const iw_json *tr = iw_json_get(&d, &d.nodes[0], "transports");
            const iw_json *t0 = tr ? iw_json_first(&d, tr) : NULL;
            bool sctp_only =
                t0 && t0->type == IW_JSON_STR && !strcmp(t0->str, "sctp") && !iw_json_next(&d, t0);
            for (int tol = 0; tol < 2; tol++) {
                const iw_json *cs = iw_json_get(&d, &d.nodes[0], tol ? "tolerates" : "catches");
                for (const iw_json *c = cs ? iw_json_first(&d, cs) : NULL; c;
                     c = iw_json_next(&d, c)) {
                    const iw_json *fs = iw_json_get(&d, c, "fault");
                    const iw_json *rs = iw_json_get(&d, c, tol ? "outcome" : "reason");
                    if (!id || !fs || !rs || fs->type != IW_JSON_STR)
                        continue;
                    fault *f = fault_get(faults, &nf, fs->str, sctp_only);
                    if (f && f->n < MAX_PER) {
                        f->e[f->n].id = strdup(id->str);
                        f->e[f->n].reason = strdup(rs->str);
                        f->e[f->n].pass = tol;
                        f->n++;
                        pairs++;
                    }
                }
            }
            iw_json_free(&d);
        }
        line += ll + (nl ? 1 : 0);
    }
    free(ltxt);
    printf("%d faults, %d (fault, case) pairs, %d at a time\n", nf, pairs, jobs);

    /* Every fault the target names must be caught by some case. */
    static const char *const named[] = {"swap-nibbles",
                                        "no-hdr-copy",
                                        "bad-seg-len",
                                        "send-after-terminate",
                                        "place-before-check",
                                        "accept-bad-crc",
                                        "accept-mpa-bad-key",
                                        "accept-mpa-bad-rev",
                                        "ird-unbounded",
                                        "no-remote-invalidate",
                                        "ignore-access",
                                        "sctp-lax-session",
                                        "skip:",
                                        "miscode:"};
    for (size_t k = 0; k < sizeof named / sizeof *named; k++) {
        if (!strstr(htxt, named[k]))
            continue;
        bool caught = false;
        for (int i = 0; i < nf && !caught; i++)
            caught = named[k][strlen(named[k]) - 1] == ':'
                         ? !strncmp(faults[i].spec, named[k], strlen(named[k]))
                         : !strcmp(faults[i].spec, named[k]);
        if (!caught) {
            printf("FAIL  no case catches fault %s\n", named[k]);
            failures++;
        }
    }
    free(htxt);

    /* Run them, `jobs` at a time. */
    int next = 0, running = 0;
    while (next < nf || running) {
        while (running < jobs && next < nf) {
            start(&faults[next], target, conform, cases, out, next);
            if (faults[next].started)
                running++;
            next++;
        }
        for (int i = 0; i < nf; i++) {
            fault *f = &faults[i];
            if (f->started != 1)
                continue;
            int st;
            pid_t p = waitpid(f->conform, &st, WNOHANG);
            if (p == 0)
                continue;
            iwc_stop(f->target);
            f->started = 2;
            running--;
            judge(f);
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < nf; i++) {
        for (int k = 0; k < faults[i].n; k++) {
            free(faults[i].e[k].id);
            free(faults[i].e[k].reason);
        }
        free(faults[i].spec);
    }
    if (failures)
        fprintf(stderr, "iwc_fault_test: %d problem(s); logs in %s\n", failures, out);
    else
        printf("iwc_fault_test: ok, every (fault, case) pair failed for the right reason, or "
               "passed with the outcome it tolerates\n");
    return failures ? 1 : 0;
}
