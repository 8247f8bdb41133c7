/*
 * test_memplan.c — the static memory plan: on random DAG schedules no two
 * tensors live at a common step overlap in memory (checked pair by pair),
 * offsets are 64-byte aligned, the peak covers every tensor and is at most
 * the sum; in-place sharing is honoured only when legal.
 */
#include "graph/plan_memory.h"
#include "vt.h"

static uint64_t rng_state = 12345;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33) % n;
}

/* A random DAG in topological order: node i reads 1-3 earlier outputs;
 * item i = node i's output, live from i to its last reader. */
static void random_dag(vn_mp_item *it, int32_t n, bool inplace)
{
    for (int32_t i = 0; i < n; i++) {
        it[i] = (vn_mp_item){1 + rnd(5000), i, i, -1, 0};
        if (rnd(4) == 0) it[i].size = 64 * (1 + rnd(8)); /* exact multiples too */
    }
    for (int32_t i = 1; i < n; i++) {
        int32_t reads = 1 + (int32_t)rnd(3);
        for (int32_t r = 0; r < reads; r++) {
            int32_t src = i - 1 - (int32_t)rnd((uint32_t)(i < 8 ? i : 8));
            if (rnd(10) == 0) src = (int32_t)rnd((uint32_t)i); /* a long edge */
            if (it[src].last < i) it[src].last = i;
        }
    }
    for (int32_t i = 1; inplace && i < n; i++) {
        int32_t src = i - 1;
        if (rnd(2) == 0 && it[src].last == i) { /* element-wise: same size */
            it[i].size = it[src].size;
            it[i].share = src;
        }
    }
}

static bool shares(const vn_mp_item *it, int32_t a, int32_t b)
{
    /* a took over b's memory (or the reverse), directly: legal overlap */
    return (it[a].share == b && it[b].last == it[a].first) ||
           (it[b].share == a && it[a].last == it[b].first);
}

static void check_plan(const vn_mp_item *it, int32_t n, size_t peak, size_t sum)
{
    long bad = 0;
    size_t total = 0;
    for (int32_t a = 0; a < n; a++) {
        size_t ra = (it[a].size + 63) & ~(size_t)63;
        total += ra;
        if (it[a].offset % 64 || it[a].offset + ra > peak) bad++;
        for (int32_t b = a + 1; b < n; b++) {
            size_t rb = (it[b].size + 63) & ~(size_t)63;
            bool time = it[a].first <= it[b].last && it[b].first <= it[a].last;
            bool space = it[a].offset < it[b].offset + rb && it[b].offset < it[a].offset + ra;
            if (time && space && !(shares(it, a, b) && it[a].offset == it[b].offset)) bad++;
        }
    }
    VT_CHECK(bad == 0, "%ld overlapping or misplaced tensors", bad);
    VT_CHECK(peak <= sum && sum == total, "peak %zu, sum %zu (expected %zu)", peak, sum, total);
}

static void test_random_dags(void)
{
    for (int trial = 0; trial < 300; trial++) {
        int32_t n = 1 + (int32_t)rnd(trial < 250 ? 40 : 400);
        vn_mp_item it[400];
        random_dag(it, n, trial % 2);
        size_t peak, sum, shared;
        VT_OK(vn_memplan_solve(it, n, &peak, &sum, &shared));
        check_plan(it, n, peak, sum);
    }
}

static void test_chain_reuses(void)
{
    /* a -> b -> c -> d, each read only by the next: two buffers suffice */
    vn_mp_item it[4];
    for (int32_t i = 0; i < 4; i++) it[i] = (vn_mp_item){1000, i, i + 1 < 4 ? i + 1 : i, -1, 0};
    size_t peak, sum, shared;
    VT_OK(vn_memplan_solve(it, 4, &peak, &sum, &shared));
    VT_CHECK(peak == 2 * 1024 && sum == 4 * 1024, "peak %zu sum %zu", peak, sum);
    check_plan(it, 4, peak, sum);
}

static void test_inplace(void)
{
    vn_mp_item it[3] = {{4096, 0, 1, -1, 0}, {4096, 1, 2, 0, 0}, {4096, 2, 2, 1, 0}};
    size_t peak, sum, shared;
    VT_OK(vn_memplan_solve(it, 3, &peak, &sum, &shared));
    VT_CHECK(shared == 2 && peak == 4096, "shared %zu peak %zu", shared, peak);
    VT_CHECK(it[0].offset == it[1].offset && it[1].offset == it[2].offset, "offsets differ");
    /* illegal: the source is still read after the sharing step, or sizes differ */
    vn_mp_item bad[3] = {{4096, 0, 2, -1, 0}, {4096, 1, 2, 0, 0}, {8192, 2, 2, 1, 0}};
    VT_OK(vn_memplan_solve(bad, 3, &peak, &sum, &shared));
    VT_CHECK(shared == 0, "shared %zu", shared);
    check_plan(bad, 3, peak, sum);
    /* two outputs may not both take over one input */
    vn_mp_item two[3] = {{64, 0, 1, -1, 0}, {64, 1, 1, 0, 0}, {64, 1, 1, 0, 0}};
    VT_OK(vn_memplan_solve(two, 3, &peak, &sum, &shared));
    VT_CHECK(shared == 1 && two[1].offset != two[2].offset, "shared %zu", shared);
}

static void test_bad_input(void)
{
    vn_mp_item it[1] = {{64, 3, 1, -1, 0}};
    size_t peak, sum, shared;
    VT_CHECK(vn_memplan_solve(it, 1, &peak, &sum, &shared) == VN_ERR_INVALID_ARG, "accepted");
    VT_OK(vn_memplan_solve(NULL, 0, &peak, &sum, &shared));
    VT_CHECK(peak == 0 && sum == 0, "empty plan");
}

int main(void)
{
    VT_RUN(test_random_dags);
    VT_RUN(test_chain_reuses);
    VT_RUN(test_inplace);
    VT_RUN(test_bad_input);
    return vt_summary();
}
