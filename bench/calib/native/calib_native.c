/* calib_native: a steady native workload for bench/calibrate.sh (issue 54, item 7).
 *
 * Each round builds text records (the program's own code plus snprintf and malloc in glibc),
 * sorts them with qsort and a comparator of ours, hashes them, and compresses the text with
 * zlib. Under `perf record --call-graph dwarf` glibc and malloc are transparent (charged to our
 * functions, prefix `calib_`), zlib is an owner of its own: the user owner share sits well
 * below 100 % (about 60 %), and is steady from round to round. Stacks are shallow except under
 * snprintf (vfprintf's buffers): record with a 4096-byte stack copy.
 *
 *   gcc -O2 -g -o calib_native calib_native.c -lz
 *   ./calib_native SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t calib_rand(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

typedef struct { char *text; size_t len; uint64_t key; } record;

static const char *WORDS[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                              "hotel", "india", "juliet", "kilo", "lima", "mike", "november"};

__attribute__((noinline)) static record *calib_build(int n) {
    record *rs = malloc(sizeof *rs * (size_t)n);
    char tmp[160];
    for (int i = 0; i < n; i++) {
        int len = snprintf(tmp, sizeof tmp, "%s-%s-%s %llu %d %.3f",
                           WORDS[calib_rand() % 14], WORDS[calib_rand() % 14], WORDS[calib_rand() % 14],
                           (unsigned long long)(calib_rand() % 1000000), i, (double)(calib_rand() % 10000) / 7.0);
        rs[i].text = malloc((size_t)len + 1);
        memcpy(rs[i].text, tmp, (size_t)len + 1);
        rs[i].len = (size_t)len;
        rs[i].key = 0;
    }
    return rs;
}

__attribute__((noinline)) static void calib_hash(record *rs, int n) {
    for (int i = 0; i < n; i++) {
        uint64_t h = 1469598103934665603ull;
        for (int round = 0; round < 4; round++)
            for (size_t j = 0; j < rs[i].len; j++) h = (h ^ (unsigned char)rs[i].text[j]) * 1099511628211ull;
        rs[i].key = h;
    }
}

__attribute__((noinline)) static int calib_cmp(const void *a, const void *b) {
    const record *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    return c ? c : (x->key > y->key) - (x->key < y->key);
}

__attribute__((noinline)) static size_t calib_join(record *rs, int n, char **out) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += rs[i].len + 1;
    char *buf = malloc(total);
    size_t at = 0;
    for (int i = 0; i < n; i++) { memcpy(buf + at, rs[i].text, rs[i].len); at += rs[i].len; buf[at++] = '\n'; }
    *out = buf;
    return at;
}

__attribute__((noinline)) static size_t calib_compress(const char *buf, size_t len) {
    uLongf cap = compressBound(len);
    unsigned char *z = malloc(cap);
    if (compress2(z, &cap, (const unsigned char *)buf, len, 6) != Z_OK) abort();
    free(z);
    return cap;
}

__attribute__((noinline)) static size_t calib_round(int n) {
    record *rs = calib_build(n);
    calib_hash(rs, n);
    qsort(rs, (size_t)n, sizeof *rs, calib_cmp);
    char *buf;
    size_t len = calib_join(rs, n, &buf);
    size_t out = calib_compress(buf, len / 3); /* a third of the text: zlib about a third of the time */
    free(buf);
    for (int i = 0; i < n; i++) free(rs[i].text);
    free(rs);
    return out;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    size_t acc = 0;
    int rounds = 0;
    do {
        acc += calib_round(4000);
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
    printf("rounds %d acc %zu\n", rounds, acc);
    return 0;
}
