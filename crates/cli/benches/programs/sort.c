/* A sort: quicksort of pseudo-random integers, data-dependent branches throughout. */
#include <stdio.h>

enum { N = 1 << 19 };
static int a[N];

static void sort(int *v, long lo, long hi) {
    while (lo < hi) {
        int pivot = v[(lo + hi) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) { int t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
        }
        if (j - lo < hi - i) { sort(v, lo, j); lo = i; } else { sort(v, i, hi); hi = j; }
    }
}

int main(void) {
    unsigned seed = 1;
    for (long i = 0; i < N; i++) { seed = seed * 1664525 + 1013904223; a[i] = (int)(seed >> 1); }
    sort(a, 0, N - 1);
    long bad = 0;
    for (long i = 1; i < N; i++) bad += a[i - 1] > a[i];
    printf("sort %ld\n", bad);
    return 0;
}
