/* A small program for the live DWARF recording test (tests/perf_dwarf.rs): a recursion about
 * 60 frames deep, each frame holding a 96-byte buffer, so the stack at the leaf is several
 * KiB: a 512-byte stack copy cannot reach main, a 16 KiB one can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf_work(unsigned long seed) {
    unsigned long h = seed;
    for (int i = 0; i < 20000; i++) {
        h = h * 6364136223846793005UL + 1442695040888963407UL;
    }
    return h;
}

__attribute__((noinline)) static unsigned long descend(int depth, unsigned long seed) {
    char buf[96];
    memset(buf, depth, sizeof buf);
    if (depth == 0) {
        return leaf_work(seed + (unsigned char)buf[5]);
    }
    unsigned long r = descend(depth - 1, seed * 31 + (unsigned char)buf[depth % 96]);
    sink += (unsigned char)buf[7];
    return r;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 3000;
    unsigned long total = 0;
    for (long i = 0; i < rounds; i++) {
        total += descend(60, (unsigned long)i);
    }
    printf("%lu\n", total + sink);
    return 0;
}
