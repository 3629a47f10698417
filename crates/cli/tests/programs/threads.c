/* Two threads besides the main one, each summing its half of an array. */
#include <pthread.h>
#include <stdio.h>

static long data[1 << 14];
static long sums[2];

static void *work(void *arg) {
    long half = (long)arg;
    long sum = 0;
    for (long i = half * (1 << 13); i < (half + 1) * (1 << 13); i++) sum += data[i];
    sums[half] = sum;
    return NULL;
}

int main(void) {
    for (long i = 0; i < (1 << 14); i++) data[i] = i;
    pthread_t t[2];
    for (long h = 0; h < 2; h++) pthread_create(&t[h], NULL, work, (void *)h);
    for (long h = 0; h < 2; h++) pthread_join(t[h], NULL);
    printf("threads %ld\n", sums[0] + sums[1]);
    return 0;
}
