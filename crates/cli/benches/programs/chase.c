/* A pointer-chasing benchmark: a random cyclic permutation over 8 MB, walked so that
   every load depends on the one before and misses the caches; sixteen laps, so that
   the walk outweighs the set-up. */
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 20 };

int main(void) {
    long *next = malloc(N * sizeof *next);
    long *order = malloc(N * sizeof *order);
    if (!next || !order) return 1;
    for (long i = 0; i < N; i++) order[i] = i;
    unsigned seed = 7;
    for (long i = N - 1; i > 0; i--) {
        seed = seed * 1103515245 + 12345;
        long j = (seed >> 8) % (i + 1);
        long t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (long i = 0; i < N; i++) next[order[i]] = order[(i + 1) % N];
    long p = 0;
    for (long k = 0; k < 16L * N; k++) p = next[p];
    printf("chase %ld\n", p);
    return 0;
}
