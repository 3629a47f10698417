/* A program that dies of a segmentation fault after printing a line: QEMU ends it
   without the plugin's exit, so pmu has no count and says why (docs/binaries.md). */
#include <stdio.h>

int main(void) {
    volatile int *nowhere = 0;
    puts("crash");
    fflush(stdout);
    return *nowhere;
}
