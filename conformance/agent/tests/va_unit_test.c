/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iwarp-agent's device-free parts: the command line, the RNIC profiles,
 * the applied/matched/ignored verdicts on MPA fields, the hello caps and
 * connected-event JSON, and the verbs status names. No RDMA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "iw_json.h"
#include "iw_test.h"
#include "va_map.h"
#include "va_opts.h"

static int parse(va_opts *o, const char *const *args, char *err) {
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"iwarp-agent";
    for (; *args && argc < 15; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return va_opts_parse(o, argc, argv, err, 200);
}

IW_TEST(opts_defaults) {
    va_opts o;
    char err[200];
    const char *none[] = {NULL};
    CHECK_EQ(parse(&o, none, err), VA_OPTS_RUN);
    CHECK(!strcmp(o.agent_host, "127.0.0.1"));
    CHECK_EQ(o.agent_port, 7400);
    CHECK(!strcmp(o.dev, ""));
    CHECK_EQ(o.port, 1);
    CHECK(!strcmp(o.listen_host, "0.0.0.0"));
    CHECK(!o.once && !o.verbose);
}

IW_TEST(opts_every_option) {
    va_opts o;
    char err[200];
    const char *a[] = {"--agent",       "10.0.0.2:7500", "--dev=siw0", "--port",    "2",
                       "--listen-host", "192.168.1.5",   "--once",     "--verbose", NULL};
    CHECK_EQ(parse(&o, a, err), VA_OPTS_RUN);
    CHECK(!strcmp(o.agent_host, "10.0.0.2"));
    CHECK_EQ(o.agent_port, 7500);
    CHECK(!strcmp(o.dev, "siw0"));
    CHECK_EQ(o.port, 2);
    CHECK(!strcmp(o.listen_host, "192.168.1.5"));
    CHECK(o.once && o.verbose);
    const char *v6[] = {"--agent=[::1]:7401", NULL};
    CHECK_EQ(parse(&o, v6, err), VA_OPTS_RUN);
    CHECK(!strcmp(o.agent_host, "::1"));
    CHECK_EQ(o.agent_port, 7401);
    const char *h[] = {"--once", "--help", NULL};
    CHECK_EQ(parse(&o, h, err), VA_OPTS_HELP);
    const char *v[] = {"--version", NULL};
    CHECK_EQ(parse(&o, v, err), VA_OPTS_VERSION);
    CHECK(strstr(va_usage(), "--agent HOST:PORT") && strstr(va_usage(), "--dev NAME") &&
          strstr(va_usage(), "--port N"));
}

IW_TEST(opts_errors_name_the_problem) {
    static const char *const bad[][3] = {
        {"--agent", "nohost", NULL},  {"--agent", "h:99999", NULL},   {"--agent", "h:", NULL},
        {"--agent", ":7400", NULL},   {"--agent", "::1:80", NULL},    {"--agent", "h:-1", NULL},
        {"--agent", "[::1:80", NULL}, {"--agent", NULL, NULL},        {"--dev=", NULL, NULL},
        {"--port", "0", NULL},        {"--port", "256", NULL},        {"--port", "x", NULL},
        {"--port", "-1", NULL},       {"--listen-host=", NULL, NULL}, {"--once=1", NULL, NULL},
        {"--fly", NULL, NULL},        {"stray", NULL, NULL},          {"-v", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        va_opts o;
        char err[200] = "";
        const char *a[3] = {bad[i][0], bad[i][1], NULL};
        int rc = parse(&o, a, err);
        if (rc != VA_OPTS_ERROR)
            fprintf(stderr, "  accepted: %s %s\n", bad[i][0], bad[i][1] ? bad[i][1] : "");
        CHECK_EQ(rc, VA_OPTS_ERROR);
        CHECK(err[0] != 0);
    }
    char host[8];
    uint16_t port;
    CHECK_EQ(va_parse_hostport("a-very-long-host-name:1", host, sizeof host, &port), -1);
    CHECK_EQ(va_parse_hostport("[::]:0", host, sizeof host, &port), 0);
    CHECK(!strcmp(host, "::"));
    CHECK_EQ(port, 0);
}

IW_TEST(profile_without_device) {
    va_profile p;
    va_profile_detect(&p, NULL, 0, "/nonexistent");
    CHECK_EQ(p.driver, VA_DRV_NONE);
    CHECK_EQ(p.rev, 0);
    CHECK_EQ(p.crc, VA_CRC_UNKNOWN);
}

IW_TEST(profile_siw_from_name_or_vendor) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    CHECK_EQ(p.driver, VA_DRV_SIW);
    va_profile_detect(&p, "myrnic", 0x626d74, "/nonexistent");
    CHECK_EQ(p.driver, VA_DRV_SIW);
    CHECK_EQ(p.rev, 2);
    CHECK_EQ(p.markers, 0);
    CHECK(p.rejects_markers);
    CHECK_EQ(p.crc, VA_CRC_PEER);
    CHECK_EQ(p.p2p, 0);
    CHECK_EQ(p.pd_max, 252);
    CHECK_EQ(p.resp_revs, (1 << 1) | (1 << 2));
}

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

IW_TEST(profile_cxgb4_reads_module_parameters) {
    char root[] = "/tmp/va_sysfs_XXXXXX";
    REQUIRE(mkdtemp(root) != NULL);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/module", root);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/module/iw_cxgb4", root);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/module/iw_cxgb4/parameters", root);
    mkdir(dir, 0700);
    write_file(dir, "mpa_rev", "1\n");
    write_file(dir, "markers_enabled", "0\n");
    write_file(dir, "crc_enabled", "1\n");
    write_file(dir, "peer2peer", "1\n");
    write_file(dir, "p2p_type", "0\n");
    va_profile p;
    va_profile_detect(&p, "cxgb4_0", 0x1425, root);
    CHECK_EQ(p.driver, VA_DRV_CXGB4);
    CHECK_EQ(p.rev, 1);
    CHECK_EQ(p.markers, 0);
    CHECK_EQ(p.crc, VA_CRC_ON);
    CHECK_EQ(p.p2p, 1);
    CHECK_EQ(p.rtr, VA_RTR_WRITE);
    CHECK(strstr(p.source, "module parameters") && !strstr(p.source, "unreadable"));
    write_file(dir, "crc_enabled", "0\n");
    write_file(dir, "p2p_type", "1\n");
    va_profile_detect(&p, "cxgb4_0", 0x1425, root);
    CHECK_EQ(p.crc, VA_CRC_PEER);
    CHECK_EQ(p.rtr, VA_RTR_READ);
    static const char *const names[] = {"mpa_rev", "markers_enabled", "crc_enabled", "peer2peer",
                                        "p2p_type"};
    for (size_t i = 0; i < 5; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/module/iw_cxgb4", root);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/module", root);
    rmdir(dir);
    rmdir(root);
    /* Parameters not readable: unknown, and said so. */
    va_profile_detect(&p, "cxgb4_0", 0x1425, "/nonexistent");
    CHECK_EQ(p.rev, 0);
    CHECK_EQ(p.crc, VA_CRC_UNKNOWN);
    CHECK_EQ(p.p2p, -1);
    CHECK(strstr(p.source, "unreadable") != NULL);
}

IW_TEST(profile_irdma_and_unknown) {
    va_profile p;
    va_profile_detect(&p, "irdma0", 0x8086, "/nonexistent");
    CHECK_EQ(p.driver, VA_DRV_IRDMA);
    CHECK_EQ(p.crc, VA_CRC_ON);
    va_profile_detect(&p, "mlx5_0", 0x15b3, "/nonexistent");
    CHECK_EQ(p.driver, VA_DRV_OTHER);
    CHECK_EQ(p.rev, 0);
}

static iw_agent_mpa mpa_none(void) {
    iw_agent_mpa m;
    memset(&m, 0, sizeof m);
    m.rev = m.markers = m.crc = m.p2p = m.rtr = m.ird = m.ord = -1;
    return m;
}

IW_TEST(verdict_siw_initiator) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    va_verdict v;
    iw_agent_mpa m = mpa_none();
    /* Nothing asked: defaults, nothing reported. */
    CHECK_EQ(va_mpa_classify(&p, &m, false, 128, 128, &v), 0);
    CHECK_EQ(v.n, 0);
    CHECK_EQ(v.ird, 16);
    CHECK_EQ(v.ord, 16);
    CHECK_EQ(va_mpa_classify(&p, &m, false, 4, 8, &v), 0);
    CHECK_EQ(v.ird, 4);
    CHECK_EQ(v.ord, 8);
    /* What siw does anyway is "matched"; what verbs sets is "applied". */
    uint8_t pd[4] = {1, 2, 3, 4};
    m.rev = 2;
    m.markers = 0;
    m.crc = 0;
    m.p2p = 0;
    m.ird = 8;
    m.ord = 4;
    m.private_data = pd;
    m.private_data_len = sizeof pd;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 128, 128, &v), 0);
    CHECK_EQ(va_verdict_class(&v, "rev"), VA_MATCHED);
    CHECK_EQ(va_verdict_class(&v, "markers"), VA_MATCHED);
    CHECK_EQ(va_verdict_class(&v, "crc"), VA_MATCHED);
    CHECK_EQ(va_verdict_class(&v, "p2p"), VA_MATCHED);
    CHECK_EQ(va_verdict_class(&v, "ird"), VA_APPLIED);
    CHECK_EQ(va_verdict_class(&v, "ord"), VA_APPLIED);
    CHECK_EQ(va_verdict_class(&v, "private_data_hex"), VA_APPLIED);
    CHECK_EQ(va_verdict_class(&v, "reject"), -1);
    CHECK_EQ(v.ird, 8);
    CHECK_EQ(v.ord, 4);
    /* What siw cannot do is "ignored", with the reason. */
    m.rev = 1;
    m.markers = 1;
    m.crc = 1;
    m.p2p = 1;
    m.rtr = VA_RTR_READ;
    m.reject = true;
    m.ird = 500;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 128, 128, &v), 0);
    static const char *const ign[] = {"rev", "markers", "crc", "p2p", "rtr", "reject", "ird"};
    for (size_t i = 0; i < sizeof ign / sizeof *ign; i++)
        CHECK_EQ(va_verdict_class(&v, ign[i]), VA_IGNORED);
    CHECK_EQ(v.ird, 128); /* clamped to the device */
    for (unsigned i = 0; i < v.n; i++)
        CHECK(v.f[i].note[0] != 0);
}

IW_TEST(verdict_siw_responder_follows_the_initiator) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    va_verdict v;
    iw_agent_mpa m = mpa_none();
    m.rev = 2;
    m.markers = 0;
    m.crc = 1;
    m.p2p = 0;
    m.reject = true;
    CHECK_EQ(va_mpa_classify(&p, &m, true, 128, 128, &v), 0);
    CHECK_EQ(va_verdict_class(&v, "rev"), VA_IGNORED);
    CHECK_EQ(va_verdict_class(&v, "markers"), VA_MATCHED); /* an M=1 Request is rejected */
    CHECK_EQ(va_verdict_class(&v, "crc"), VA_IGNORED);
    CHECK_EQ(va_verdict_class(&v, "p2p"), VA_IGNORED);
    CHECK_EQ(va_verdict_class(&v, "reject"), VA_APPLIED);
    m.markers = 1;
    CHECK_EQ(va_mpa_classify(&p, &m, true, 128, 128, &v), 0);
    CHECK_EQ(va_verdict_class(&v, "markers"), VA_IGNORED);
}

IW_TEST(verdict_private_data_limits) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    va_verdict v;
    iw_agent_mpa m = mpa_none();
    static uint8_t pd[300];
    m.private_data = pd;
    m.private_data_len = 255;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 16, 16, &v), 0);
    CHECK_EQ(va_verdict_class(&v, "private_data_hex"), VA_APPLIED);
    CHECK(strstr(v.f[0].note, "252") != NULL); /* siw's enhanced-frame limit is noted */
    m.private_data_len = 256;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 16, 16, &v), -1);
    CHECK(strstr(v.err, "255") != NULL);
    m.private_data_len = 508;
    CHECK_EQ(va_mpa_classify(&p, &m, true, 16, 16, &v), -1);
}

IW_TEST(verdict_unknown_driver_is_never_matched) {
    va_profile p;
    va_profile_detect(&p, "qedr0", 0x1077, "/nonexistent");
    va_verdict v;
    iw_agent_mpa m = mpa_none();
    m.rev = 2;
    m.markers = 0;
    m.crc = 1;
    m.p2p = 0;
    m.rtr = VA_RTR_WRITE;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 16, 16, &v), 0);
    for (unsigned i = 0; i < v.n; i++)
        CHECK_EQ(v.f[i].cls, VA_IGNORED);
    CHECK_EQ(v.n, 5);
}

/* Run a writer into memory and parse the object it made. */
typedef void (*emit_fn)(iw_jw *o, const void *arg);
static int emit_parse(emit_fn fn, const void *arg, iw_json_doc *d) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    iw_jw j;
    iw_jw_init(&j, f);
    iw_jw_obj_begin(&j, NULL);
    fn(&j, arg);
    iw_jw_obj_end(&j);
    fclose(f);
    int rc = iw_json_parse(d, buf, len);
    free(buf);
    return rc;
}

static bool arr_has(const iw_json_doc *d, const iw_json *arr, const char *s) {
    for (const iw_json *e = iw_json_first(d, arr); e; e = iw_json_next(d, e))
        if (e->type == IW_JSON_STR && !strcmp(e->str, s))
            return true;
    return false;
}

static const char *str_of(const iw_json_doc *d, const iw_json *o, const char *k) {
    const iw_json *v = iw_json_get(d, o, k);
    return v && v->type == IW_JSON_STR ? v->str : "";
}

static void emit_verdict(iw_jw *o, const void *arg) { va_verdict_json(arg, o); }

IW_TEST(verdict_json_lists_and_notes) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    va_verdict v;
    iw_agent_mpa m = mpa_none();
    m.rev = 2;
    m.markers = 1;
    m.ird = 4;
    CHECK_EQ(va_mpa_classify(&p, &m, false, 16, 16, &v), 0);
    iw_json_doc d;
    REQUIRE(emit_parse(emit_verdict, &v, &d) == 0);
    const iw_json *root = &d.nodes[0];
    CHECK(arr_has(&d, iw_json_get(&d, root, "applied"), "ird"));
    CHECK(arr_has(&d, iw_json_get(&d, root, "matched"), "rev"));
    CHECK(arr_has(&d, iw_json_get(&d, root, "ignored"), "markers"));
    CHECK(!arr_has(&d, iw_json_get(&d, root, "ignored"), "rev"));
    const iw_json *notes = iw_json_get(&d, root, "notes");
    REQUIRE(notes && notes->type == IW_JSON_OBJ);
    CHECK(strstr(str_of(&d, notes, "markers"), "M=1") != NULL);
    iw_json_free(&d);
}

static void emit_caps(iw_jw *o, const void *arg) { va_profile_caps_json(arg, o); }

IW_TEST(caps_json_no_device_and_siw) {
    va_profile p;
    iw_json_doc d;
    va_profile_detect(&p, NULL, 0, "/nonexistent");
    REQUIRE(emit_parse(emit_caps, &p, &d) == 0);
    const iw_json *root = &d.nodes[0];
    const iw_json *revs = iw_json_get(&d, root, "mpa_rev");
    REQUIRE(revs && revs->type == IW_JSON_ARR);
    CHECK(iw_json_first(&d, revs) == NULL);
    CHECK(!strcmp(str_of(&d, iw_json_get(&d, root, "mpa_control"), "ird"), "none"));
    iw_json_free(&d);

    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    REQUIRE(emit_parse(emit_caps, &p, &d) == 0);
    root = &d.nodes[0];
    revs = iw_json_get(&d, root, "mpa_rev");
    REQUIRE(iw_json_first(&d, revs) != NULL);
    CHECK_EQ(iw_json_first(&d, revs)->i, 2);
    const iw_json *b = iw_json_get(&d, root, "markers");
    CHECK(b && b->type == IW_JSON_BOOL && !b->b);
    b = iw_json_get(&d, root, "crc");
    CHECK(b && b->type == IW_JSON_BOOL && b->b);
    const iw_json *ctl = iw_json_get(&d, root, "mpa_control");
    CHECK(!strcmp(str_of(&d, ctl, "rev"), "driver"));
    CHECK(!strcmp(str_of(&d, ctl, "crc"), "peer"));
    CHECK(!strcmp(str_of(&d, ctl, "ird"), "verbs"));
    iw_json_free(&d);
}

typedef struct conn_arg {
    const va_profile *p;
    bool passive;
} conn_arg;

static void emit_conn(iw_jw *o, const void *arg) {
    const conn_arg *c = arg;
    va_connected_json(c->p, c->passive, 8, 4, 6, 2, o);
}

IW_TEST(connected_json_same_fields_as_iwarp_target) {
    va_profile p;
    va_profile_detect(&p, "siw0", 0, "/nonexistent");
    static const char *const fields[] = {"rev",      "enhanced", "markers_tx", "markers_rx",
                                         "crc",      "p2p",      "ird",        "ord",
                                         "peer_ird", "peer_ord", "mulpdu"};
    for (int passive = 0; passive < 2; passive++) {
        conn_arg c = {&p, passive != 0};
        iw_json_doc d;
        REQUIRE(emit_parse(emit_conn, &c, &d) == 0);
        const iw_json *mpa = iw_json_get(&d, &d.nodes[0], "mpa");
        const iw_json *src = iw_json_get(&d, &d.nodes[0], "mpa_source");
        REQUIRE(mpa && src);
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            CHECK(iw_json_get(&d, mpa, fields[i]) != NULL);
            CHECK(str_of(&d, src, fields[i])[0] != 0);
        }
        CHECK_EQ(iw_json_get(&d, mpa, "ird")->i, 8);
        CHECK_EQ(iw_json_get(&d, mpa, "peer_ord")->i, 2);
        /* The initiator's revision is siw's own; a responder's is the peer's. */
        CHECK_EQ(iw_json_get(&d, mpa, "rev")->i, passive ? 0 : 2);
        CHECK(!strcmp(str_of(&d, src, "rev"), passive ? "unknown" : "driver"));
        CHECK(!strcmp(str_of(&d, src, "crc"), "unknown"));
        CHECK(!strcmp(str_of(&d, src, "markers_rx"), "driver"));
        iw_json_free(&d);
    }
}

IW_TEST(verbs_names_and_classes) {
    CHECK(!strcmp(va_wc_status_name(IBV_WC_SUCCESS), "IBV_WC_SUCCESS"));
    CHECK(!strcmp(va_wc_status_name(IBV_WC_REM_ACCESS_ERR), "IBV_WC_REM_ACCESS_ERR"));
    CHECK(!strcmp(va_wc_status_name(9999), "IBV_WC_UNKNOWN"));
    CHECK(!strcmp(va_wc_status_class(IBV_WC_SUCCESS), "ok"));
    CHECK(!strcmp(va_wc_status_class(IBV_WC_WR_FLUSH_ERR), "flushed"));
    CHECK(!strcmp(va_wc_status_class(IBV_WC_REM_ACCESS_ERR), "remote_error"));
    CHECK(!strcmp(va_wc_status_class(IBV_WC_REM_OP_ERR), "remote_error"));
    CHECK(!strcmp(va_wc_status_class(IBV_WC_LOC_PROT_ERR), "local_error"));
    CHECK(!strcmp(va_async_event_name(IBV_EVENT_QP_FATAL), "IBV_EVENT_QP_FATAL"));
    CHECK(!strcmp(va_async_event_name(-5), "IBV_EVENT_UNKNOWN"));
    CHECK(va_async_is_error(IBV_EVENT_QP_FATAL));
    CHECK(va_async_is_error(IBV_EVENT_QP_ACCESS_ERR));
    CHECK(!va_async_is_error(IBV_EVENT_COMM_EST));
}

IW_TEST(access_mapping) {
    bool added = true;
    CHECK_EQ(va_access_to_ibv(0, &added), 0);
    CHECK(!added);
    CHECK_EQ(va_access_to_ibv(IW_AGENT_ACC_REMOTE_READ, &added), IBV_ACCESS_REMOTE_READ);
    CHECK(!added);
    CHECK_EQ(va_access_to_ibv(IW_AGENT_ACC_REMOTE_WRITE, &added),
             IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
    CHECK(added);
    CHECK_EQ(va_access_to_ibv(IW_AGENT_ACC_LOCAL_WRITE | IW_AGENT_ACC_REMOTE_ATOMIC, &added),
             IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE);
    CHECK(!added);
    CHECK_EQ(va_access_to_ibv(0xF, NULL), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                                              IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
}

IW_TEST_MAIN("va_unit", IW_CASE(opts_defaults), IW_CASE(opts_every_option),
             IW_CASE(opts_errors_name_the_problem), IW_CASE(profile_without_device),
             IW_CASE(profile_siw_from_name_or_vendor),
             IW_CASE(profile_cxgb4_reads_module_parameters), IW_CASE(profile_irdma_and_unknown),
             IW_CASE(verdict_siw_initiator), IW_CASE(verdict_siw_responder_follows_the_initiator),
             IW_CASE(verdict_private_data_limits), IW_CASE(verdict_unknown_driver_is_never_matched),
             IW_CASE(verdict_json_lists_and_notes), IW_CASE(caps_json_no_device_and_siw),
             IW_CASE(connected_json_same_fields_as_iwarp_target), IW_CASE(verbs_names_and_classes),
             IW_CASE(access_mapping))
