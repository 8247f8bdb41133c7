/*
 * vnm_load.c — vn_model_load: map a .vnm file read-only and build a model
 * whose names, attribute arrays and weights point into the mapping (so a
 * load costs the checks and the re-plans, not copies of the weights). The
 * model owns the mapping; vn_model_destroy releases it (compile.h release).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/vnm_load.h"

#define W "vn_model_load"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void release(void *arg)
{
    vnm_file *f = arg;
    if (f && f->map) munmap(f->map, f->map_size);
}

static void fill_info(vnm_loader *ld)
{
    vn_model_file_info *info = &ld->file->info;
    const vnm_meta *mt = ld->meta;
    info->version = VNM_VERSION;
    info->file_bytes = (size_t)ld->size;
    info->weight_bytes = (size_t)ld->len[VNM_SEC_WEIGHTS];
    info->opt_level = ld->options->opt_level;
    info->precision = ld->options->precision;
    vn_vnm_string(ld, mt->producer, ld->off[VNM_SEC_META], &info->producer);
    vn_vnm_string(ld, mt->producer_version, ld->off[VNM_SEC_META] + 4, &info->producer_version);
    vn_vnm_string(ld, mt->source, ld->off[VNM_SEC_META] + 8, &info->source);
}

static void fill_stats(vn_model *m, const vnm_plan *p, const vnm_options *o)
{
    vn_model_stats *s = &m->stats;
    s->opt_level = o->opt_level; /* so a loaded model saves as it was compiled */
    s->precision = o->precision;
    s->compile_ms = p->compile_ms;
    s->nodes_before = p->nodes_before;
    s->nodes_after = m->num_nodes;
    s->arena_bytes = m->arena_bytes;
    s->activation_bytes = (size_t)p->activation_bytes;
    s->inplace_count = (size_t)p->inplace_count;
    s->workspace_bytes = m->workspace_bytes;
    s->constant_bytes = (size_t)p->constant_bytes;
}

/* The model shell: owner of its memory, the file record and the device. */
static vn_status shell(vnm_loader *ld, vn_device *device)
{
    vn_model *m = calloc(1, sizeof *m);
    if (!m) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", ld->name);
    ld->m = m;
    ld->file = vn_gmem_alloc(&m->mem, sizeof *ld->file);
    char *name = vn_gmem_strndup(&m->mem, ld->name, strlen(ld->name));
    if (!ld->file || !name) return vn_error(VN_ERR_OUT_OF_MEMORY, W, "%s: no memory", ld->name);
    m->name = name;
    ld->name = name;
    m->release = release;
    m->release_arg = ld->file;
    m->device = device;
    return device ? VN_OK : vn_device_default(&m->device);
}

static vn_status load(vnm_loader *ld, vn_device *device, vn_model **out)
{
    double t0 = now_ms();
    vn_status st = shell(ld, device); /* first: the hash runs on the device's worker count */
    if (st == VN_OK) {
        ld->hash_threads = vn_device_num_workers(ld->m->device);
        st = vn_vnm_check_file(ld);
    }
    if (st == VN_OK) st = vn_vnm_read_model(ld);
    double t1 = now_ms();
    if (st == VN_OK) ld->m->stats.opt_level = ld->options->opt_level; /* replan's groups ask */
    if (st == VN_OK) st = vn_vnm_replan(ld);
    if (st == VN_ERR_OUT_OF_MEMORY && !strstr(vn_last_error(), ld->name))
        vn_error(st, W, "%s: no memory", ld->name);
    if (st != VN_OK) return st;
    ld->m->final = true;
    fill_info(ld);
    fill_stats(ld->m, ld->plan, ld->options);
    ld->file->info.replan_ms = now_ms() - t1;
    ld->file->info.load_ms = now_ms() - t0;
    *out = ld->m;
    return VN_OK;
}

vn_status vn_vnm_load_bytes(const void *bytes, size_t size, const char *name, vn_device *device,
                            vn_model **out)
{
    if (!out) return vn_error(VN_ERR_INVALID_ARG, W, "out is NULL");
    *out = NULL;
    if (!bytes || (uintptr_t)bytes % VNM_ALIGN)
        return vn_error(VN_ERR_INVALID_ARG, W, "bytes must be non-NULL and 64-byte aligned");
    vnm_loader ld;
    memset(&ld, 0, sizeof ld);
    ld.base = bytes;
    ld.size = size;
    ld.name = name ? name : "model.vnm";
    vn_status st = load(&ld, device, out);
    if (st != VN_OK) {
        if (ld.file) ld.file->map = NULL; /* the caller's bytes */
        vn_model_destroy(ld.m);
    }
    return st;
}

vn_status vn_vnm_map_file(const char *path, void **map, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return vn_error(VN_ERR_IO, W, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    vn_status st = VN_OK;
    *map = NULL;
    *size = 0;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        st = vn_error(VN_ERR_IO, W, "%s: not a regular file", path);
    else if (sb.st_size > 0) {
        *size = (size_t)sb.st_size;
        *map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (*map == MAP_FAILED) {
            *map = NULL;
            st = vn_error(VN_ERR_IO, W, "%s: cannot map: %s", path, strerror(errno));
        }
    }
    close(fd);
    return st;
}

vn_status vn_model_load(const char *path, vn_device *device, vn_model **out)
{
    if (!path || !out) return vn_error(VN_ERR_INVALID_ARG, W, "path or out is NULL");
    *out = NULL;
    void *map = NULL;
    size_t size = 0;
    vn_status st = vn_vnm_map_file(path, &map, &size);
    if (st != VN_OK) return st;
    static _Alignas(64) const uint64_t empty[8];
    vnm_loader ld;
    memset(&ld, 0, sizeof ld);
    ld.base = map ? map : (const void *)empty; /* an empty file fails the header check */
    ld.size = size;
    ld.name = path;
    st = load(&ld, device, out);
    if (ld.file) { /* the model owns the mapping from here (destroy releases it) */
        ld.file->map = map;
        ld.file->map_size = size;
    }
    if (st != VN_OK) {
        if (!ld.file && map) munmap(map, size);
        vn_model_destroy(ld.m);
    }
    return st;
}

vn_status vn_model_file_info_get(const vn_model *m, vn_model_file_info *out)
{
    if (!m || !out) return vn_error(VN_ERR_INVALID_ARG, "vn_model_file_info_get", "NULL argument");
    if (m->release != release)
        return vn_error(VN_ERR_STATE, "vn_model_file_info_get", "%s: not loaded from a .vnm file",
                        m->name);
    *out = ((const vnm_file *)m->release_arg)->info;
    return VN_OK;
}

vn_status vn_model_node(const vn_model *m, int32_t i, const char **name, const char **op_type,
                        const char **domain)
{
    if (!m || i < 0 || i >= m->num_nodes)
        return vn_error(VN_ERR_INVALID_ARG, "vn_model_node", "no node %d", (int)i);
    if (name) *name = m->nodes[i].name;
    if (op_type) *op_type = m->nodes[i].op_type;
    if (domain) *domain = m->nodes[i].domain;
    return VN_OK;
}
