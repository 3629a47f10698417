/* A program that replaces itself: a loop, then execve of the shell, which exits with
   5. pmu counts up to the execve and reports before the shell runs (docs/binaries.md). */
#include <stdio.h>
#include <unistd.h>

int main(void) {
    volatile long sum = 0;
    for (long i = 0; i < 10000; i++) sum += i;
    printf("exec %ld\n", sum);
    fflush(stdout);
    execl("/bin/sh", "sh", "-c", "echo replaced; exit 5", (char *)0);
    return 1;
}
