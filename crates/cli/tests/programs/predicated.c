/* An inner loop whose selects compile to conditional instructions on ARM (MOVLT,
   ADDGE): instructions that fail their condition still execute. */
#include <stdio.h>

static volatile int data[1024];

int main(void) {
    for (int i = 0; i < 1024; i++) data[i] = (i * 7919) % 1000 - 500;
    long pos = 0, neg = 0;
    for (int r = 0; r < 32; r++) {
        for (int i = 0; i < 1024; i++) {
            int v = data[i];
            if (v < 0) neg += v; else pos += v;
        }
    }
    printf("predicated %ld %ld\n", pos, neg);
    return 0;
}
