/* A counted loop: 100,000 iterations of a load, an add and a store. */
#include <stdio.h>

static volatile long cell;

int main(void) {
    for (long i = 0; i < 100000; i++) {
        cell = cell + i;
    }
    printf("loop %ld\n", cell);
    return 3;
}
