/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Case-format and deviations-file parsers: every shipped case parses, every
 * kind of broken input gets a message naming its line, and thousands of
 * mutated cases (flips, cuts, splices, hostile tokens) never crash or leak
 * (run under ASan by scripts/test.sh). argv[1]: the cases directory. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iwc_case.h"
#include "iwc_dev.h"
#include "iwc_util.h"

static int failures;

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);                \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static uint64_t rnd(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static int parse(const char *t, iwc_case *c, char *err, size_t n) {
    return iwc_case_parse(t, strlen(t), c, err, n);
}

/* err must be "LINE: message" */
static int err_line(const char *err) {
    char *e;
    long v = strtol(err, &e, 10);
    return e != err && e[0] == ':' && e[1] == ' ' ? (int)v : -1;
}

#define HDR "id: stag.t\ntitle: T\nrfc: RFC 5041 §7.1\n"

static void test_good(void) {
    const char *t = HDR "region: A len=4096 access=remote_write,remote_read pd=1 fill=7\n"
                        "peer-region: P len=64\n"
                        "recv: len=128 count=3\n"
                        "mpa: rev=1 markers=1 crc=0 ird=4 ord=0x3fff pd=hex:0011\n"
                        "peer: m=1 c=0 p2p=1 rtr=write,read rtr-use=read\n"
                        "send: write stag=$A.stag^0x1 to=$A.to+4000-1 len=200 crc=bad split=1,2\n"
                        "expect: terminate 1/1/0 r=any seglen=78 \n"
                        "expect: event recv status=ok len>=3 data=pat:2 # comment\n"
                        "expect: fpdu read-resp stag=$P.stag len=0\n"
                        "agent: post_send kind=write remote_stag=$P.stag remote_to=$P.end len=8\n"
                        "agent?: invalidate A\n"
                        "catches: skip:1/1/0 -> \"expected Terminate 1/1/0\"\n"
                        "wait: ms=10\nclose:\n";
    iwc_case c;
    char err[256];
    /* catches after steps is an error; check the message, then fix it. */
    CHECK(parse(t, &c, err, sizeof err) < 0 && err_line(err) == 15 &&
          strstr(err, "before the first step"));
    const char *t2 = HDR "catches: skip:1/1/0 -> \"expected Terminate 1/1/0\"\n"
                         "region: A len=4096 access=remote_write,remote_read pd=1 fill=7\n"
                         "send: write stag=$A.stag^0x1 to=$A.to+4000-1 len=200 crc=bad\n"
                         "expect: terminate 1/1/0 r=any\n";
    CHECK(parse(t2, &c, err, sizeof err) == 0);
    CHECK(!strcmp(c.area, "stag") && c.nrfc == 1 && c.ncatches == 1 && c.nsteps == 2);
    CHECK(c.regions[0].pd == 1 && c.regions[0].fill == 7 &&
          c.regions[0].access == (IWC_ACC_REMOTE_WRITE | IWC_ACC_REMOTE_READ));
    const iwc_arg *to = iwc_step_arg(&c.steps[0], "to");
    CHECK(to && to->e.n == 3 && to->e.t[0].ref && to->e.t[1].num == 4000 && to->e.t[2].op == '-');
    CHECK(c.steps[1].has_triple && c.steps[1].triple == 0x1100);
    CHECK(!strcmp(c.catches[0].reason, "expected Terminate 1/1/0"));
    iwc_case_free(&c);
    CHECK(parse(HDR "send: send len=1\n", &c, err, sizeof err) == 0);
    iwc_case_free(&c);
    /* Alternatives, their RFC words, if= and tolerates: (RFC 5044 §8). */
    const char *t3 = HDR "allow: 2/0/3 RFC 5044 §8: code 3\n"
                         "allow: drop RFC 5044 §8: \"MAY choose to silently drop\"\n"
                         "allow: unchecked RFC 5044 §8: \"OPTIONAL\"\n"
                         "tolerates: skip:2/0/3 -> drop\n"
                         "send: send len=9\n"
                         "expect: terminate 2/0/3|drop|unchecked\n"
                         "expect: no-event recv status=ok if=2/0/3,drop\n"
                         "expect: event recv status=ok if=unchecked\n";
    CHECK(parse(t3, &c, err, sizeof err) == 0);
    CHECK(c.nallow == 3 && c.ntolerates == 1 && c.nsteps == 4);
    CHECK(c.steps[1].nalt == 3 && c.steps[1].triple == 0x2003 &&
          c.steps[1].alt[1].kind == IWC_OUT_DROP && c.steps[1].alt[2].kind == IWC_OUT_UNCHECKED);
    CHECK(c.steps[2].nonly == 2 && c.steps[2].nargs == 1 && c.steps[3].nonly == 1 &&
          c.steps[3].only[0].kind == IWC_OUT_UNCHECKED);
    CHECK(!strcmp(c.tolerates[0].spec, "skip:2/0/3") &&
          !strcmp(c.tolerates[0].reason, "silent drop"));
    iwc_outcome o = {IWC_OUT_DROP, 0};
    CHECK(iwc_case_allow(&c, &o) && strstr(iwc_case_allow(&c, &o), "silently drop"));
    char b[48];
    CHECK(!strcmp(iwc_outcome_str(&c.steps[1].alt[0], b, sizeof b), "Terminate 2/0/3"));
    iwc_case_free(&c);
}

/* Which transports a case runs over: derived from what it uses. */
static void test_transports(void) {
    static const struct {
        const char *steps;
        unsigned want; /* 0: a parse error */
        const char *why;
    } t[] = {
        {"send: write stag=1 to=0 len=4\n", IWC_TR_TCP | IWC_TR_SCTP, NULL},
        {"send: write stag=1 to=0 len=4 crc=bad\n", IWC_TR_TCP, "line 5: it sets an MPA field"},
        {"send: write stag=1 to=0 len=4 split=3\n", IWC_TR_TCP, "cuts TCP segments"},
        {"expect: mpa-reply key=rep\n", IWC_TR_TCP, "key, M, C or Res"},
        {"expect: mpa-reply r=1 ird=4\n", IWC_TR_TCP | IWC_TR_SCTP, NULL},
        {"expect: terminate 2/0/1\n", IWC_TR_TCP, "LLP (MPA) Terminate"},
        {"send: write stag=1 to=0 len=4 ssn=3\n", IWC_TR_SCTP, "line 5: it sets DDP-SSNs"},
        {"send: ctrl fc=terminate\n", IWC_TR_SCTP, "SCTP chunks"},
        {"send: chunk ppid=16 data=hex:00\n", IWC_TR_SCTP, "SCTP chunks"},
        {"expect: ctrl fc=accept\n", IWC_TR_SCTP, "SCTP chunks"},
        {"transport: tcp\nsend: write stag=1 to=0 len=4\n", IWC_TR_TCP, "'transport:' line"},
        {"mpa: markers=1\nsend: ctrl fc=0x42\n", 0, "MPA over TCP"},
        {"transport: sctp\nsend: send len=1 pad=1\n", 0, "transport: sctp, but"},
        {"transport: udp\nsend: send len=1\n", 0, "tcp, sctp or any"},
        {"send: ctrl\n", 0, "wants fc="},
        {"send: chunk ppid=16\n", 0, "wants ppid= and data="},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "id: x.y\ntitle: t\nrfc: RFC 5043 §6.1\niut: responder\n%s",
                 t[i].steps);
        iwc_case c;
        char err[256];
        int rc = parse(text, &c, err, sizeof err);
        if (!t[i].want) {
            CHECK(rc < 0 && strstr(err, t[i].why));
            continue;
        }
        CHECK(rc == 0 && c.transports == t[i].want);
        CHECK(t[i].why ? c.tr_why && strstr(c.tr_why, t[i].why) : !c.tr_why);
        if (rc == 0)
            iwc_case_free(&c);
    }
}

static void test_bad(void) {
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } bad[] = {
        {"", 0, "missing 'id:'"},
        {"id: nodot\n", 1, "AREA.NAME"},
        {"id: Stag.x\n", 1, "AREA.NAME"},
        {"id: a.b\nid: a.c\n", 2, "twice"},
        {"id: a.b\ntitle: t\nsend: send\n", 0, "missing 'rfc:'"},
        {"id: a.b\ntitle: t\nrfc: 5041\n", 3, "must start with 'RFC"},
        {HDR, 0, "no steps"},
        {HDR "frobnicate: x\n", 4, "unknown keyword"},
        {HDR "send: teleport\n", 4, "unknown message"},
        {HDR "send: write stag=$B.stag\n", 4, "no region named 'B'"},
        {HDR "region: A len=1\nsend: write stag=$A.bogus\n", 5, "unknown region field"},
        {HDR "send: write stag=0x1234567890abcdef0\n", 4, "not a number"},
        {HDR "send: write stag=18446744073709551616\n", 4, "not a number"},
        {HDR "send: write stag=1+2+3+4+5+6+7\n", 4, "more than"},
        {HDR "send: write len=\n", 4, "empty value"},
        {HDR "send: write nonsense\n", 4, "key=value"},
        {HDR "send: write size=3\n", 4, "unknown key 'size'"},
        {HDR "send: write len=1 len=2\n", 4, "twice"},
        {HDR "send: write data=hex:abc\n", 4, "odd number"},
        {HDR "send: write data=hex:zz\n", 4, "not hex"},
        {HDR "send: write data=pat:300\n", 4, "seed"},
        {HDR "send: write crc=maybe\n", 4, "crc"},
        {HDR "send: write crc=1\n", 4, "good, bad or zero"},
        {HDR "send: write len<=3\n", 4, "only = is allowed"},
        {HDR "send: term\n", 4, "triple"},
        {HDR "send: term 1/1/100\n", 4, "triple"},
        {HDR "expect: terminate 10/1/1\n", 4, "triple"},
        {HDR "expect: terminate 1/1/1 nope\n", 4, "unexpected word"},
        {HDR "expect: region Q\n", 4, "no region named"},
        {HDR "peer-region: P len=1\nexpect: region P\n", 5, "a peer region"},
        {HDR "region: A len=1\nexpect: peer-region A data=zero\n", 5, "an IUT region"},
        {HDR "expect: fpdu teleport\n", 4, "wants the message"},
        {HDR "expect: event\n", 4, "event type"},
        {HDR "agent: reboot\n", 4, "unknown operation"},
        {HDR "agent: post_send len=3\n", 4, "wants kind="},
        {HDR "agent: post_send kind=fax\n", 4, "not one of"},
        {HDR "agent: write_mr\n", 4, "region name"},
        {HDR "wait:\n", 4, "wants ms="},
        {HDR "close: now=1\n", 4, "takes no key"},
        {HDR "iut: sideways\n", 4, "responder"},
        {HDR "region: 1A len=3\n", 4, "region name"},
        {HDR "region: A\n", 4, "needs len="},
        {HDR "region: A len=0\n", 4, "at least 1"},
        {HDR "region: A len=9 access=remote_fly\n", 4, "unknown word"},
        {HDR "region: A len=9 pd=2\n", 4, "larger than"},
        {HDR "region: A len=9\nregion: A len=9\n", 5, "declared twice"},
        {HDR "mpa: rev=3\n", 4, "1 or 2"},
        {HDR "mpa: rtr=write,read\n", 4, "one RTR"},
        {HDR "mpa: ird=0x4000\n", 4, "larger than"},
        {HDR "mpa: pd=pat:1\n", 4, "pd-size"},
        {HDR "peer: rtr=fax\n", 4, "not send"},
        {HDR "recv: count=2\n", 4, "len="},
        {HDR "catches: explode\n", 4, "not a fault"},
        {HDR "catches: skip:1/1/0 -> unquoted\n", 4, "quoted"},
        {HDR "tags: fast\n", 4, "unknown word"},
        {HDR "needs: teleport\n", 4, "unknown word"},
        {HDR "timeout-ms: 0\n", 4, "1..600000"},
        {HDR "send: send data=\"unterminated\n", 4, "unterminated"},
        {HDR "send: send \"a\"b\n", 4, "after a closing quote"},
        {HDR "send: send len=1\x01\n", 4, "control character"},
        {HDR "send: write len=1099511627776\n", 4, "len=1099511627776: out of range"},
        {HDR "send: send len=64 seg=0\n", 4, "seg=0: out of range"},
        {HDR "send: send len=64 repeat=65\n", 4, "repeat=65: out of range"},
        /* Outcomes: registered triples only, each alternative justified. */
        {HDR "expect: terminate 3/9/0\n", 4, "not in the RFC 6580 registry"},
        {HDR "expect: terminate 0/3/1\n", 4, "not in the RFC 6580 registry"},
        {HDR "expect: terminate 1/1/0|\n", 4, "empty"},
        {HDR "expect: terminate 1/1/0|1/1/0\n", 4, "twice"},
        {HDR "expect: terminate drop\n", 4, "at least one triple"},
        {HDR "expect: terminate 1/1/0|maybe\n", 4, "not an outcome"},
        {HDR "expect: terminate 1/1/0|0/1/2|1/1/1|1/1/3|drop\n", 4, "more than 4"},
        {HDR "allow: 1/1/0 RFC 5041 §7.2\nexpect: terminate 1/1/0|0/1/2\n", 5,
         "'Terminate 0/1/2' has no 'allow:'"},
        {HDR "allow: 1/1/0 RFC 5041 §7.2\nexpect: terminate 1/1/0|drop\n", 5,
         "'silent drop' has no 'allow:'"},
        {HDR "allow: 1/1/0 because\n", 4, "must start with the RFC"},
        {HDR "allow: 1/1/0 RFC 1 §1\nallow: 1/1/0 RFC 1 §1\n", 5, "twice"},
        {HDR "allow: 0/1/2 RFC 5040 §4.8\nexpect: terminate 1/1/0\n", 0, "no 'expect: terminate"},
        {HDR "tolerates: skip:1/1/0\n", 4, "FAULT -> OUTCOME"},
        {HDR "tolerates: explode -> drop\n", 4, "not a fault"},
        {HDR "tolerates: skip:2/0/2 -> drop\nexpect: terminate 2/0/2\n", 0,
         "no 'expect: terminate"},
        {HDR "expect: event recv if=drop\n", 4, "no 'expect: terminate'"},
        {HDR "allow: 2/0/2 RFC 5044 §8\nallow: drop RFC 5044 §8\n"
             "expect: terminate 2/0/2|drop\nexpect: event recv if=1/1/0\n",
         7, "not an outcome of the 'expect: terminate' on line 6"},
        {HDR "allow: 2/0/2 RFC 5044 §8\nallow: drop RFC 5044 §8\n"
             "expect: terminate 2/0/2|drop if=drop\n",
         6, "for the expectations after it"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        iwc_case c;
        char err[256];
        int rc = parse(bad[i].text, &c, err, sizeof err);
        bool ok = rc < 0 && err_line(err) == bad[i].line && strstr(err, bad[i].msg);
        if (!ok)
            fprintf(stderr, "  bad case %zu: rc=%d err='%s' (want line %d, '%s')\n", i, rc, err,
                    bad[i].line, bad[i].msg);
        CHECK(ok);
        /* out is freed and zeroed on failure: freeing again is harmless. */
        iwc_case_free(&c);
    }
    /* NUL inside, over-long line, over-large file. */
    iwc_case c;
    char err[256];
    CHECK(iwc_case_parse("id: a\0.b\n", 9, &c, err, sizeof err) < 0 && strstr(err, "NUL"));
    char *big = malloc(IWC_TEXT_MAX + 2);
    memset(big, 'x', IWC_TEXT_MAX + 1);
    big[IWC_TEXT_MAX + 1] = 0;
    CHECK(iwc_case_parse(big, IWC_TEXT_MAX + 1, &c, err, sizeof err) < 0 && strstr(err, "larger"));
    CHECK(iwc_case_parse(big, IWC_LINE_MAX + 1, &c, err, sizeof err) < 0 && strstr(err, "longer"));
    free(big);
    /* Tiny error buffers are never overrun. */
    char tiny[4];
    CHECK(parse(HDR "frobnicate: x\n", &c, tiny, sizeof tiny) < 0 && strlen(tiny) < 4);
    CHECK(parse(HDR "frobnicate: x\n", &c, tiny, 0) < 0);
}

static void test_triples_faults(void) {
    uint16_t t;
    CHECK(iwc_parse_triple("1/2/5", &t) && t == 0x1205);
    CHECK(iwc_parse_triple("0x0/0x2/0xFF", &t) && t == 0x02FF);
    CHECK(!iwc_parse_triple("1/2", &t) && !iwc_parse_triple("1/2/3/", &t) &&
          !iwc_parse_triple("g/1/1", &t) && !iwc_parse_triple("", &t));
    CHECK(iwc_fault_spec_valid("skip:1/1/0,swap-nibbles,miscode:0/2/FF"));
    CHECK(!iwc_fault_spec_valid("skip:9/9/999") && !iwc_fault_spec_valid("") &&
          !iwc_fault_spec_valid("swap-nibbles,") && !iwc_fault_spec_valid("nope"));
}

static void test_deviations(void) {
    iwc_devlist l;
    char err[256];
    const char *good = "# c\n\ndeviation: stag.*\noutcome: expected Terminate\nreason: one\n"
                       "reason: two\ndeviation: mpa.x\noutcome: zzz\nreason: r\n";
    CHECK(iwc_dev_parse(good, strlen(good), &l, err, sizeof err) == 0 && l.n == 2);
    CHECK(l.n == 2 && !strcmp(l.v[0].reason, "one two"));
    char *msgs[] = {"line 3: expected Terminate 1/1/0, got none"};
    CHECK(iwc_dev_match(&l, "stag.write", msgs, 1) == &l.v[0]);
    CHECK(!iwc_dev_match(&l, "mpa.y", msgs, 1) && !iwc_dev_match(&l, "mpa.x", msgs, 1));
    CHECK(iwc_dev_for(&l, "mpa.x", true) == &l.v[1]);
    /* a glob entry is not "fixed" by one passing case */
    CHECK(!iwc_dev_for(&l, "stag.write", true) && iwc_dev_for(&l, "stag.write", false) == &l.v[0]);
    iwc_dev_free(&l);
    /* every failure message must be excused by some entry naming the case */
    const char *two = "deviation: *\noutcome: nibbles swapped\nreason: A\n"
                      "deviation: ddp.*\noutcome: M bit\nreason: B\n";
    CHECK(iwc_dev_parse(two, strlen(two), &l, err, sizeof err) == 0 && l.n == 2);
    char *both[] = {"line 3: Terminate layer and error-type nibbles swapped: got 2/1/1",
                    "line 3: Terminate M bit: expected M=1, got M=0"};
    iwc_dev *used[4];
    CHECK(iwc_dev_cover(&l, "ddp.x", both, 2, used, 4) == 2 && used[0] == &l.v[0] &&
          used[1] == &l.v[1]);
    CHECK(iwc_dev_cover(&l, "mpa.x", both, 2, used, 4) == 0); /* M bit not excused for mpa.* */
    CHECK(iwc_dev_cover(&l, "mpa.x", both, 1, used, 4) == 1);
    char *three[] = {both[0], both[1], "line 4: region A changed outside the expected placement"};
    CHECK(iwc_dev_cover(&l, "ddp.x", three, 3, used, 4) == 0 &&
          !iwc_dev_match(&l, "ddp.x", three, 3));
    iwc_dev_free(&l);
    /* an intermittent entry excuses its failure but is never "fixed" */
    const char *inter = "deviation: mpa.y\noutcome: did not close\nintermittent: yes\nreason: r\n";
    CHECK(iwc_dev_parse(inter, strlen(inter), &l, err, sizeof err) == 0 && l.n == 1 &&
          l.v[0].intermittent);
    CHECK(!iwc_dev_for(&l, "mpa.y", true) && iwc_dev_for(&l, "mpa.y", false) == &l.v[0]);
    iwc_dev_free(&l);
    const char *badint = "deviation: mpa.y\noutcome: o\nintermittent: sometimes\nreason: r\n";
    CHECK(iwc_dev_parse(badint, strlen(badint), &l, err, sizeof err) < 0 &&
          strstr(err, "yes or no"));
    iwc_dev_free(&l);
    static const char *const bad[] = {
        "outcome: x\n", "deviation: a\nreason: r\n", "deviation: a\noutcome: o\n",
        "deviation:\n", "deviation: a\nwhy: x\n",    "no colon\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(iwc_dev_parse(bad[i], strlen(bad[i]), &l, err, sizeof err) < 0 && err_line(err) >= 0);
        iwc_dev_free(&l);
    }
}

/* ---- shipped cases, and mutations of them ---- */

typedef struct texts {
    char **v;
    size_t *len;
    int n;
} texts;

static void load_dir(texts *t, const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[4096];
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
            continue;
        struct stat st;
        if (stat(p, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth == 0) {
            load_dir(t, p, 1);
            continue;
        }
        size_t nl = strlen(de->d_name);
        if (!S_ISREG(st.st_mode) || nl < 6 || strcmp(de->d_name + nl - 5, ".case"))
            continue;
        FILE *f = fopen(p, "rb");
        if (!f)
            continue;
        char *b = malloc((size_t)st.st_size + 1);
        size_t n = b ? fread(b, 1, (size_t)st.st_size, f) : 0;
        fclose(f);
        if (!b)
            continue;
        b[n] = 0;
        t->v = realloc(t->v, (size_t)(t->n + 1) * sizeof *t->v);
        t->len = realloc(t->len, (size_t)(t->n + 1) * sizeof *t->len);
        t->v[t->n] = b;
        t->len[t->n++] = n;
        iwc_case c;
        char err[256];
        if (iwc_case_parse(b, n, &c, err, sizeof err) < 0) {
            fprintf(stderr, "  %s:%s\n", p, err);
            failures++;
        }
        iwc_case_free(&c);
    }
    closedir(d);
}

static void test_shipped_and_mutated(const char *dir) {
    texts t = {0};
    load_dir(&t, dir, 0);
    printf("  %d shipped cases\n", t.n);
    CHECK(t.n >= 60);
    static const char *const tokens[] = {"$A.stag",
                                         "=",
                                         "expect: terminate 1/1/0 ",
                                         "\n",
                                         "0xffffffffffffffffff",
                                         "\"",
                                         "#",
                                         "pat:",
                                         "hex:zz",
                                         "region: B len=1\n",
                                         "send: ",
                                         "@A+",
                                         "<=",
                                         " of=-9",
                                         "agent?: invalidate A\n",
                                         "split=1,2,3,4,5,6,7,8,9"};
    uint64_t seed = 0x1C0FF;
    char *buf = malloc(IWC_TEXT_MAX + 1);
    int ok = 0, rejected = 0;
    for (int i = 0; i < t.n && buf; i++) {
        for (int k = 0; k < 300; k++) {
            size_t n = t.len[i];
            memcpy(buf, t.v[i], n);
            int edits = 1 + (int)(rnd(&seed) % 4);
            for (int e = 0; e < edits && n; e++) {
                size_t at = (size_t)(rnd(&seed) % n);
                switch (rnd(&seed) % 5) {
                case 0: /* flip a byte */
                    buf[at] = (char)(rnd(&seed) & 0xFF);
                    break;
                case 1: /* cut */
                    n = at;
                    break;
                case 2: { /* delete a range */
                    size_t k2 = (size_t)(rnd(&seed) % 16);
                    if (at + k2 > n)
                        k2 = n - at;
                    memmove(buf + at, buf + at + k2, n - at - k2);
                    n -= k2;
                    break;
                }
                default: { /* insert a hostile token */
                    const char *tk = tokens[rnd(&seed) % (sizeof tokens / sizeof *tokens)];
                    size_t tl = strlen(tk);
                    if (n + tl > IWC_TEXT_MAX)
                        break;
                    memmove(buf + at + tl, buf + at, n - at);
                    memcpy(buf + at, tk, tl);
                    n += tl;
                    break;
                }
                }
            }
            iwc_case c;
            char err[128];
            if (iwc_case_parse(buf, n, &c, err, sizeof err) == 0)
                ok++;
            else {
                rejected++;
                CHECK(err_line(err) >= 0);
            }
            iwc_case_free(&c);
        }
    }
    printf("  %d mutations parsed, %d rejected with a line number\n", ok, rejected);
    free(buf);
    for (int i = 0; i < t.n; i++)
        free(t.v[i]);
    free(t.v);
    free(t.len);
}

int main(int argc, char **argv) {
    test_good();
    test_bad();
    test_transports();
    test_triples_faults();
    test_deviations();
    test_shipped_and_mutated(argc > 1 ? argv[1] : "conformance/cases");
    if (failures)
        fprintf(stderr, "iwc_case_test: %d check(s) failed\n", failures);
    else
        printf("iwc_case_test: ok\n");
    return failures ? 1 : 0;
}
