/*
 * cmd_info.c — `vinci info`: what vinci sees of this machine; with a model
 * argument, the model's summary instead (cmd_graph_info.c).
 */
#include <stdio.h>

#include "base/amx_tiles.h"
#include "cli.h"
#include "vinci/vinci.h"

static void print_features(const vn_cpu_features *f)
{
    const struct {
        const char *name;
        bool on;
    } flags[] = {
        {"sse4.2", f->sse42},
        {"avx", f->avx},
        {"avx2", f->avx2},
        {"fma", f->fma},
        {"f16c", f->f16c},
        {"avx512f", f->avx512f},
        {"avx512bw", f->avx512bw},
        {"avx512dq", f->avx512dq},
        {"avx512vl", f->avx512vl},
        {"avx512_vnni", f->avx512_vnni},
        {"avx512_bf16", f->avx512_bf16},
        {"avx512_fp16", f->avx512_fp16},
        {"amx_tile", f->amx_tile && f->os_amx},
        {"amx_bf16", f->amx_bf16 && f->os_amx},
        {"amx_int8", f->amx_int8 && f->os_amx},
    };
    printf("cpu features:");
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].on) printf(" %s", flags[i].name);
    printf("\ncaches: L1d %d KiB, L2 %d KiB, L3 %d KiB\n", f->l1d_bytes / 1024, f->l2_bytes / 1024,
           f->l3_bytes / 1024);
}

int vn_cmd_info(int argc, char **argv)
{
    if (argc > 1) return vn_cmd_graph_info(argc, argv);
    print_features(vn_cpu_features_get());
    printf("isa: detected %s, active %s (VINCI_ISA lowers it)\n", vn_isa_name(vn_isa_detected()),
           vn_isa_name(vn_isa_active()));
    bool amx = vn_isa_active() == VN_ISA_AVX512 && vn_amx_usable();
    printf("amx tiles: %s (bf16 / int8 matrix products; VINCI_AMX=0 turns them off)\n",
           amx ? "in use" : "not used");
    vn_device *dev = NULL;
    if (vn_device_default(&dev) != VN_OK) {
        fprintf(stderr, "vinci info: %s\n", vn_last_error());
        return 1;
    }
    printf("device: %d workers (VINCI_NUM_THREADS), checked mode %s\n", vn_device_num_workers(dev),
           vn_device_checked(dev) ? "on" : "off");
    printf("arenas per worker:");
    for (int a = 0; a < VN_ARENA_COUNT; a++)
        printf(" %s %lld KiB", vn_arena_name((vn_arena)a),
               (long long)(vn_device_arena_size(dev, (vn_arena)a) / 1024));
    printf("\n");
    return 0;
}
